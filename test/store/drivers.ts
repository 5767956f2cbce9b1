/**
 * The drivers the conformance suite runs against (River's `riverdrivertest`
 * habit): every file of `test/store/` loops over {@link DRIVERS}, so each case
 * runs once per driver and its name says which.
 *
 * A fixture hands out a fresh, empty queue per call. `fresh()` only names where
 * a new queue may be created (nothing is created or migrated yet: the
 * migrations cases open it themselves, from several processes at once);
 * `open()` is `fresh()` plus `openQueue(..., { create: true })`.
 *
 * The child scripts of the race cases (claimant.ts, adder.ts, opener.ts) take
 * the location (`dbPath`: a file path or a postgres:// URL, and `spoolDir`) as
 * arguments, so they run unchanged against every driver.
 */

import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readFileSync, rmSync, watch } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { SQL } from "bun";
import { openQueue } from "../../src/store/index.ts";
import type { QueueLocation } from "../../src/store/location.ts";
import type { Store } from "../../src/store/store.ts";

/** A queue opened for one test. */
export interface OpenedQueue {
  store: Store;
  location: QueueLocation;
  /** Closes the store (if still open) and removes what the fixture made. */
  cleanup(): Promise<void>;
}

/** Where a new queue may be created: nothing exists there yet. */
interface FreshLocation {
  location: QueueLocation;
  cleanup(): Promise<void>;
}

/** One driver under test. */
export interface DriverFixture {
  name: "sqlite" | "postgres";
  /**
   * Whether this driver's stores ship attempt output into the database
   * (`Store.shipsOutput`). Declared here so the output cases can be skipped
   * visibly (`test.if`) rather than pass silently; a case checks that the
   * opened store agrees with the declaration.
   */
  shipsOutput: boolean;
  /** A fresh, empty, migrated queue, opened with `create: true`. */
  open(): Promise<OpenedQueue>;
  /** A location where no queue exists yet. */
  fresh(): Promise<FreshLocation>;
  /**
   * Moves a job's lease (`heartbeat_at`) `seconds` into the past, behind the
   * driver's back, so that lease cases get an old lease without waiting and
   * whichever clock the driver writes leases with (docs/architecture.md
   * "Clocks": PostgreSQL writes them with the database's own now()).
   */
  backdateLease(location: QueueLocation, jobId: number, seconds: number): Promise<void>;
  /**
   * Records the work signals the driver sends to workers (docs/architecture.md
   * "Waking"), as `ready:<lane>`, `freed:<lane>` or `all`, in the order they
   * are delivered, through the driver's own medium (SQLite: file events of the
   * wake folder; PostgreSQL: LISTEN on the work channel). `lanes` are the
   * lanes a worker watches (SQLite makes their files by watching them).
   */
  observeWork(store: Store, location: QueueLocation, lanes: string[]): Promise<WorkObserver>;
}

/** What {@link DriverFixture.observeWork} saw so far. */
interface WorkObserver {
  seen: string[];
  close(): Promise<void>;
}

/** Opens the queue at a fresh location; the returned cleanup closes it and removes the location. */
async function openFresh(driver: DriverFixture["name"], fresh: () => Promise<FreshLocation>): Promise<OpenedQueue> {
  const where = await fresh();
  let store: Store;
  try {
    store = await openQueue(where.location, { create: true, overlapping: true });
  } catch (error) {
    await where.cleanup();
    throw error;
  }
  if (store.driver !== driver) {
    await store.close().catch(() => {});
    await where.cleanup();
    throw new Error(`openQueue(${where.location.dbPath}) chose the ${store.driver} driver, not ${driver}`);
  }
  return {
    store,
    location: where.location,
    async cleanup() {
      // A test may have closed it already; a second close must not hide the test's own result.
      await store.close().catch(() => {});
      await where.cleanup();
    },
  };
}

const sqlite: DriverFixture = {
  name: "sqlite",
  shipsOutput: false,
  async fresh() {
    const dir = mkdtempSync(join(tmpdir(), "spoolctl-store-"));
    return {
      location: { dbPath: join(dir, "queue.db"), spoolDir: join(dir, "queue.spool"), source: "flag" },
      async cleanup() {
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  open() {
    return openFresh("sqlite", () => sqlite.fresh());
  },
  async backdateLease(location, jobId, seconds) {
    const db = new Database(location.dbPath);
    try {
      db.exec("PRAGMA busy_timeout = 5000");
      db.query("UPDATE jobs SET heartbeat_at = heartbeat_at - ? WHERE id = ?").run(seconds, jobId);
    } finally {
      db.close(false);
    }
  },
  async observeWork(store, _location, lanes) {
    for (const lane of lanes) store.watchWork(lane).close(); // a worker's watch makes the lane's files
    const seen: string[] = [];
    const watcher = watch(join(store.spoolDir, "wake"), (_event, file) => {
      const m = /^lane-(.+)\.(ready|freed)$/.exec(file ?? "");
      if (m) seen.push(`${m[2]}:${m[1]}`);
      else if (file === "all") seen.push("all");
    });
    return {
      seen,
      async close() {
        watcher.close();
      },
    };
  },
};

// ---------------------------------------------------------------------------
// PostgreSQL fixture.
//
// Enabled as soon as the driver lands in src/store/postgres/ (checked once, at
// load time), unless SPOOLCTL_TEST_PG=0. "Lands" = the folder exists AND
// src/store/index.ts refers to it: the folder appeared (URL parsing first)
// before openQueue dispatched to it, and until it does, a postgres:// URL is
// opened by the SQLite driver as a relative file path (that made a stray
// `postgres:/` folder in the checkout). Each call gets a fresh database from
// the process-wide throwaway server of test/support/pg-server.ts (or from
// SPOOLCTL_TEST_PG_URL's server); databases are dropped when the test process
// exits. The spool folder is a local temp folder.
//
// `shipsOutput: true` is the expectation for a queue shared by several hosts;
// the case "store.shipsOutput matches the fixture" fails if the driver decides
// otherwise, and this flag is then the one line to change.
// ---------------------------------------------------------------------------

/** The folder whose existence turns the PostgreSQL fixture on. */
const PG_DRIVER_DIR = resolve(import.meta.dir, "../../src/store/postgres");

/** Whether openQueue can reach the PostgreSQL driver: its folder exists and index.ts imports from it. */
function pgDriverLanded(): boolean {
  if (!existsSync(PG_DRIVER_DIR)) return false;
  const index = readFileSync(resolve(import.meta.dir, "../../src/store/index.ts"), "utf8");
  return /["']\.\/postgres\//.test(index); // a static or a lazy import("./postgres/…")
}

/** Whether the suite runs against PostgreSQL too. */
export const PG_ENABLED = process.env.SPOOLCTL_TEST_PG !== "0" && pgDriverLanded();

const postgres: DriverFixture = {
  name: "postgres",
  shipsOutput: true,
  async fresh() {
    // Loaded lazily: with the driver absent (or SPOOLCTL_TEST_PG=0) no server is ever started.
    const { pgDatabaseForTest } = await import("../support/pg-server.ts");
    const url = await pgDatabaseForTest("store-conformance");
    const dir = mkdtempSync(join(tmpdir(), "spoolctl-store-pg-"));
    return {
      location: { dbPath: url, spoolDir: join(dir, "queue.spool"), source: "flag" },
      async cleanup() {
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  open() {
    return openFresh("postgres", () => postgres.fresh());
  },
  async backdateLease(location, jobId, seconds) {
    // PGDATABASE would win over the URL's database; test/support/pg-server.ts (loaded by fresh()) removed it.
    const sql = new SQL(location.dbPath, { max: 1 });
    try {
      await sql`UPDATE jobs SET heartbeat_at = heartbeat_at - ${seconds}::float8 WHERE id = ${jobId}`;
    } finally {
      await sql.close();
    }
  },
  async observeWork(store, location) {
    const { channelOf, workChannelOf } = await import("../../src/store/postgres/events.ts");
    const sql = new SQL(location.dbPath, { max: 1 });
    const seen: string[] = [];
    let listening!: () => void;
    const subscribed = new Promise<void>((r) => (listening = r));
    const sub = await sql.listen(
      workChannelOf(channelOf(store.queueId)),
      (payload) => void seen.push(payload),
      () => listening(),
    );
    await subscribed;
    return {
      seen,
      async close() {
        await sub.unlisten().catch(() => {});
        await sql.close();
      },
    };
  },
};

/** Every driver the suite runs against. */
export const DRIVERS: DriverFixture[] = [sqlite, ...(PG_ENABLED ? [postgres] : [])];

/** Timeout (ms) of hooks that open a queue: the first PostgreSQL open starts a server (initdb). */
export const OPEN_TIMEOUT_MS = 120_000;
