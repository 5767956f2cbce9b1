/**
 * Opening a queue by location: the one place that chooses a driver
 * (docs/architecture.md "The driver contract").
 */
import { existsSync } from "node:fs";
import type { StoreCheck } from "../model/storage.ts";
import { connectionUrlFor, type QueueLocation } from "./location.ts";
import { refuseUnsafeQueue } from "./ownership.ts";
import { isPgUrl } from "./postgres/url.ts";
import { sqliteChecks } from "./sqlite/inspect.ts";
import { openSqliteStore } from "./sqlite/open.ts";
import type { SnapshotReader, Store } from "./store.ts";

export type { StoreReader } from "./reader.ts";
export { writableOrCreatable } from "./sqlite/inspect.ts";
/** The schema version this binary writes (docs/architecture.md "Migrations"). */
export { SCHEMA_VERSION } from "./sqlite/migrations.ts";
export type { Store } from "./store.ts";
export type { StoreWriter } from "./writer.ts";

/**
 * Opens the queue at `location`. With `create: false` a missing queue reads as
 * empty (`store.exists` false) and nothing is created; with `readOnly` (verbs
 * that never write) it is opened read-only. Raises `INTERNAL` when it cannot be
 * opened, is newer than this binary or is not a spoolctl queue; `LOCKED` when a
 * migration waits out the lock. `overlapping` (a worker, whose loop, heartbeat
 * and results run transactions at once) gives a PostgreSQL queue a pool of
 * connections instead of one; SQLite has one connection either way. A writer refuses a queue another user owns or
 * may write (`INTERNAL` with `detail.unsafe`, docs/architecture.md "Folder ownership").
 */
export async function openQueue(
  location: QueueLocation,
  opts: { create: boolean; readOnly?: boolean; overlapping?: boolean },
): Promise<Store> {
  const url = location.url ?? (isPgUrl(location.dbPath) ? connectionUrlFor(location.dbPath) : null);
  if (!opts.readOnly) refuseUnsafeQueue(url === null ? location.dbPath : null, location.spoolDir);
  if (url !== null) {
    // Loaded only for a PostgreSQL queue: the SQLite start path stays as lean as it was.
    const { openPgStore } = await import("./postgres/open.ts");
    return openPgStore({ url, spoolDir: location.spoolDir, create: opts.create, overlapping: opts.overlapping });
  }
  return openSqliteStore({
    path: location.dbPath,
    spoolDir: location.spoolDir,
    create: opts.create,
    readOnly: opts.readOnly,
  });
}

/**
 * The driver's read-only readiness checks of the queue at `dbPath` (a path, or
 * a URL as printed: the password resolveLocation saw for it is used), for
 * `doctor`: nothing is created, migrated or changed.
 */
export async function diagnoseQueue(dbPath: string): Promise<StoreCheck[]> {
  if (isPgUrl(dbPath)) {
    const { pgChecks } = await import("./postgres/inspect.ts");
    return pgChecks(connectionUrlFor(dbPath));
  }
  return sqliteChecks(dbPath);
}

/** Whether an absent queue (`store.exists` false) has since been created by a writer. */
async function queueAppeared(location: QueueLocation, store: Store): Promise<boolean> {
  if (store.driver === "postgres") {
    const absent = store as Store & { appeared?: () => Promise<boolean> };
    return absent.appeared ? absent.appeared() : false;
  }
  return existsSync(location.dbPath);
}

/** A reader of a queue that may not exist yet (see {@link openAppearing}). */
export interface AppearingQueue extends SnapshotReader {
  watch: Store["watch"];
  /** The store's: whether it is a shared queue (PostgreSQL). */
  readonly shipsOutput: boolean;
}

/**
 * Opens a queue for a reader that waits (`status --watch`, `events --follow`):
 * while the queue does not exist it reads as empty, and it is opened for real
 * as soon as a writer creates it; nothing is created by reading. `opened`
 * receives every store opened, for the caller to close.
 */
export async function openAppearing(location: QueueLocation, opened: (store: Store) => void): Promise<AppearingQueue> {
  let store = await openQueue(location, { create: false, readOnly: true });
  opened(store);
  return {
    async read(fn) {
      if (!store.exists && (await queueAppeared(location, store))) {
        store = await openQueue(location, { create: false, readOnly: true });
        opened(store);
      }
      return store.read(fn);
    },
    watch: () => store.watch(),
    now: () => store.now(),
    get shipsOutput() {
      return store.shipsOutput;
    },
  };
}
