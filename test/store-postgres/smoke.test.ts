/**
 * PostgreSQL-only cases of the driver against a real server (the throwaway
 * server of test/support/pg-server.ts): what the Store contract does not say
 * and test/store/ therefore does not run on both drivers — the meta rows after
 * 10 processes migrate one database at once (started together by the barrier
 * of test/store/children.ts), refusing newer or foreign schemas, the database
 * clock, killed connections and lost COMMIT answers, NOTIFY wake-up latency,
 * password redaction, PGPASSWORD and ~/.pgpass, and locations.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import type { SpoolError } from "../../src/contract/errors.ts";
import { diagnoseQueue, openQueue } from "../../src/store/index.ts";
import { resolveLocation } from "../../src/store/location.ts";
import { ClaimBook, runClaim } from "../../src/store/postgres/claim-runner.ts";
import { PG_SCHEMA_VERSION } from "../../src/store/postgres/migrations.ts";
import { passwordFromPassfile } from "../../src/store/postgres/pgpass.ts";
import { parsePgUrl, redactUrl } from "../../src/store/postgres/url.ts";
import type { Store } from "../../src/store/store.ts";
import { childScript, raceChildren } from "../store/children.ts";
import { pgDatabaseForTest } from "../support/pg-server.ts";
import { newJob } from "../support/store.ts";
import { waitFor } from "../support/wait.ts";

let tmp: string;
let admin: SQL;
let adminUrl: string;

/** A fresh database URL (nothing created in it yet). */
const freshUrl = () => pgDatabaseForTest(import.meta.file);

async function openUrl(url: string, create = true): Promise<Store> {
  return openQueue({ dbPath: url, spoolDir: join(tmp, "spool"), source: "flag" }, { create });
}

/** `url` with user and password replaced. */
function asUser(url: string, user: string, password?: string): string {
  const u = new URL(url);
  u.username = user;
  u.password = password ?? "";
  return u.toString();
}

async function errorOf(p: Promise<unknown>): Promise<SpoolError> {
  try {
    await p;
  } catch (error) {
    return error as SpoolError;
  }
  throw new Error("expected an error");
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), "spoolctl-pg-smoke-"));
  const first = await freshUrl();
  const u = new URL(first);
  u.pathname = "/postgres";
  adminUrl = u.toString();
  admin = new SQL(adminUrl, { max: 2 });
}, 120_000);

afterAll(async () => {
  await admin?.close({ timeout: 0 });
  rmSync(tmp, { recursive: true, force: true });
});

describe("migrations", () => {
  test("10 processes opening one empty database at once: one schema, one queue id, no failure", async () => {
    const url = await freshUrl();
    type Opened = { queueId: string; exists: boolean } | { error: string };
    const children = await raceChildren<{ id: string; opened: Opened[] }>(
      childScript("opener.ts"),
      { dbPath: url, spoolDir: join(tmp, "spool"), source: "flag" },
      Array.from({ length: 10 }, () => []),
    );
    const results = children.map((c) => c.opened[0]!);
    expect(results.filter((r) => "error" in r)).toEqual([]);
    const opened = results as { queueId: string; exists: boolean }[];
    expect(new Set(opened.map((r) => r.queueId)).size).toBe(1);
    expect(opened[0]!.queueId).toMatch(/^[0-9a-f]{32}$/);
    const db = new SQL(url, { max: 1 });
    try {
      const meta = await db`SELECT key, value FROM meta ORDER BY key`;
      expect([...meta]).toEqual([
        { key: "queue_id", value: opened[0]!.queueId },
        { key: "schema_version", value: String(PG_SCHEMA_VERSION) },
      ]);
      expect((await db`SELECT last_id FROM event_ids`)[0].last_id).toBe("0");
    } finally {
      await db.close();
    }
  }, 120_000);

  test("a newer schema is refused untouched; a foreign table set is refused; doctor says so", async () => {
    const newer = await freshUrl();
    (await openUrl(newer)).close();
    const db = new SQL(newer, { max: 1 });
    await db`UPDATE meta SET value = '99' WHERE key = 'schema_version'`;
    await db.close();
    const e = await errorOf(openUrl(newer));
    expect(e.code).toBe("INTERNAL");
    expect(e.message).toContain("newer than this spoolctl understands");
    expect((await diagnoseQueue(newer)).find((c) => c.id === "schema_version")?.status).toBe("fail");

    const foreign = await freshUrl();
    const f = new SQL(foreign, { max: 1 });
    await f`CREATE TABLE jobs (x int)`;
    const e2 = await errorOf(openUrl(foreign));
    expect(e2.message).toContain("is not a spoolctl queue");
    expect(await f`SELECT to_regclass('meta') AS m`).toEqual([{ m: null }] as never);
    await f.close();
  }, 60_000);
});

describe("queue operations", () => {
  let store: Store;
  let url: string;
  beforeAll(async () => {
    url = await freshUrl();
    store = await openUrl(url);
  }, 60_000);
  afterAll(async () => {
    await store?.close();
  });

  test("clock: now() follows the database's; leases are judged by it", async () => {
    const db = new SQL(url, { max: 1 });
    await db`SELECT 1`; // connected: the bracket below holds one query's round trip, not a connect
    const before = store.now();
    const [row] = await db`SELECT extract(epoch from clock_timestamp())::float8 AS t`;
    const after = store.now();
    await db.close();
    // The server read its clock between the two readings of the store's; 0.5 s: the error of the
    // offset measured at connect, not a speed.
    expect(row.t).toBeGreaterThan(before - 0.5);
    expect(row.t).toBeLessThan(after + 0.5);
  });

  test("a connection killed in the middle of a write: the write is run again and lands once", async () => {
    const lane = "killed";
    let killed = false;
    const ids = await store.write(async (tx) => {
      const first = await tx.insertJob(newJob({ queue: lane }), 1);
      if (!killed) {
        killed = true;
        // With a timeout, pg_terminate_backend answers once the backend has exited (PostgreSQL 14+):
        // the insert below meets a closed connection, whatever the machine's load.
        const [gone] = await admin`SELECT bool_and(pg_terminate_backend(pid, 60000)) AS ok FROM pg_stat_activity
          WHERE datname = ${new URL(url).pathname.slice(1)} AND application_name = 'spoolctl' AND state = 'idle in transaction'`;
        expect(gone.ok).toBe(true);
      }
      const second = await tx.insertJob(newJob({ queue: lane }), 1);
      return [first.id, second.id];
    });
    expect(killed).toBe(true);
    const stored = await store.read(async (tx) => tx.listJobs({ queue: lane, limit: 10 }));
    expect(stored.map((j) => j.id).sort()).toEqual(ids.sort());
  });

  test.each([
    ["dated by the caller", true],
    ["undated (dated by the store as it is sent, as a worker claims)", false],
  ])(
    "a claim whose COMMIT answer is lost is found again, not repeated: nothing lost, nothing doubled (%s)",
    async (_, dated) => {
      const lane = dated ? "lost-claim" : "lost-claim-undated";
      await store.write(async (tx) => {
        for (let i = 0; i < 3; i++) await tx.insertJob(newJob({ queue: lane }), 1);
      });
      const db = new SQL(url, { max: 1 });
      try {
        // A client whose claim statement commits, but whose answer never arrives.
        let failNext = true;
        const lossy = new Proxy(db, {
          get(target, prop, receiver) {
            if (prop !== "unsafe") return Reflect.get(target, prop, receiver);
            return async (text: string, params: unknown[]) => {
              const rows = await target.unsafe(text, params);
              if (failNext && text.includes("claimed_events")) {
                failNext = false;
                throw Object.assign(new Error("Connection closed"), { code: "ERR_POSTGRES_CONNECTION_CLOSED" });
              }
              return rows;
            };
          },
        }) as SQL;
        // Undated, the store books the date it sent for the recovery.
        const req = {
          queue: lane,
          workerId: "w-lossy",
          workerPid: 1,
          slots: null,
          limit: 2,
          ...(dated ? { now: store.now() } : {}),
        };
        const book = new ClaimBook();
        const ctx = { location: "test", user: "postgres" };
        const got = await runClaim(lossy, req, () => store.now(), join(tmp, "spool"), "spoolctl_x", ctx, book);
        expect(failNext).toBe(false);
        expect(got).toHaveLength(2);
        const after = await store.read(async (tx) => tx.listJobs({ queue: lane, limit: 10 }));
        expect(
          after
            .filter((j) => j.state === "running")
            .map((j) => j.id)
            .sort(),
        ).toEqual(got.map((c) => c.job.id).sort());
        expect(after.every((j) => j.last_attempt_no <= 1)).toBe(true);
        // A later claim (at the same `now` when dated) does not hand the same jobs out again.
        const again = await runClaim(
          db,
          { ...req, limit: 5 },
          () => store.now(),
          join(tmp, "spool"),
          "spoolctl_x",
          ctx,
          book,
        );
        expect(again.map((c) => c.job.id)).toEqual(after.filter((j) => j.state === "queued").map((j) => j.id));
      } finally {
        await db.close();
      }
    },
  );

  test("pg_terminate_backend of a claim waiting on its lane: the claim is run again and takes the job once", async () => {
    const lane = "killed-claim";
    const [j] = await store.write(async (tx) => [await tx.insertJob(newJob({ queue: lane }), 1)]);
    await store.claimJobs({ queue: lane, workerId: "w0", workerPid: 1, slots: 5, limit: 0, now: store.now() }); // nothing (limit 0)
    const dbName = new URL(url).pathname.slice(1);
    const lockHolder = new SQL(url, { max: 1 });
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const lockTaken = new Promise<void>((r) => (locked = r));
    const holding = lockHolder.begin(async (tx) => {
      await tx`INSERT INTO lanes (queue) VALUES (${lane}) ON CONFLICT DO NOTHING`;
      await tx`SELECT 1 FROM lanes WHERE queue = ${lane} FOR UPDATE`;
      locked();
      await released;
    });
    await lockTaken; // the claim below must wait on it
    const claiming = store.claimJobs({
      queue: lane,
      workerId: "w-killed",
      workerPid: 1,
      slots: 1,
      limit: 1,
      now: store.now(),
    });
    const killed = await (async () => {
      // A generous deadline: on a loaded machine the claim may take seconds to reach the lock.
      for (const deadline = performance.now() + 60_000; performance.now() < deadline; ) {
        // Answered once the backend has exited (the timeout form): the lock is released after it.
        const rows = await admin`SELECT pg_terminate_backend(pid, 60000) AS ok FROM pg_stat_activity
          WHERE datname = ${dbName} AND application_name = 'spoolctl' AND wait_event_type = 'Lock'`;
        if (rows.length > 0) return rows.every((r: { ok: boolean }) => r.ok);
        await Bun.sleep(10); // a poll interval: the claim has not reached the lock yet
      }
      return false;
    })();
    expect(killed).toBe(true);
    release();
    await holding;
    await lockHolder.close();
    const got = await claiming;
    expect(got.map((c) => c.job.id)).toEqual([j!.id]);
    const events = await store.read(async (tx) => tx.eventsOf(j!.id));
    expect(events.map((e) => e.event)).toEqual(["claimed"]);
    expect((await store.read(async (tx) => tx.getJob(j!.id)))!.last_attempt_no).toBe(1);
  });

  test("NOTIFY wakes a watcher in another process's store: each wait is ended by the other store's commit", async () => {
    // A wait that ends long before this timeout was ended by a fire, not by the poll.
    const LONG_MS = 60_000;
    const other = await openUrl(url);
    const waker = store.watch();
    try {
      // The first wait ends when LISTEN is acknowledged: each subscription wakes once (src/store/postgres/listen.ts).
      const subscribed = performance.now();
      await waker.wait(LONG_MS);
      expect(performance.now() - subscribed).toBeLessThan(LONG_MS / 2); // a fire, not the timeout
      const latencies: number[] = [];
      for (let i = 0; i < 10; i++) {
        let writing = false;
        const woke = waker.wait(LONG_MS).then(() => ({ afterBegin: writing, at: performance.now() }));
        await other.write(async (tx) => {
          writing = true; // after BEGIN's round trip: a wait ended by anything pending has ended by now
          return tx.insertJob(newJob({ queue: "wake" }), 1);
        });
        const committed = performance.now();
        const { afterBegin, at } = await woke;
        // Neither woken before the write began nor by the timeout: by the commit's NOTIFY.
        expect(afterBegin).toBe(true);
        expect(at - committed).toBeLessThan(LONG_MS / 2);
        latencies.push(at - committed);
      }
      latencies.sort((a, b) => a - b);
      // The figure, for the reader (speed is measured in bench/, never asserted here).
      console.log(
        `NOTIFY wake after commit: median ${latencies[5]!.toFixed(1)} ms, max ${latencies[9]!.toFixed(1)} ms`,
      );
    } finally {
      waker.close();
      await other.close();
    }
  }, 150_000);
});

describe("connecting", () => {
  test("an unreachable server is UNREACHABLE storage=unreachable, naming the URL without its password", async () => {
    const e = await errorOf(openUrl("postgres://bob:hunter2secret@127.0.0.1:1/q"));
    expect(e.code).toBe("UNREACHABLE");
    expect(e.detail?.storage).toBe("unreachable");
    expect(e.message).toContain("postgres://bob@127.0.0.1:1/q");
    expect(JSON.stringify({ m: e.message, r: e.remediation, d: e.detail })).not.toContain("hunter2secret");
    const checks = await diagnoseQueue("postgres://bob:hunter2secret@127.0.0.1:1/q");
    expect(checks[0]).toMatchObject({ id: "db_opens", status: "fail" });
    expect(JSON.stringify(checks)).not.toContain("hunter2secret");
  }, 60_000);

  test("an unreachable server's remediation speaks of the server, not of a worker keeping its jobs (said by work alone)", async () => {
    const e = await errorOf(openUrl("postgres://bob@127.0.0.1:1/q", false));
    expect(e.remediation).toBe(
      "check that the PostgreSQL server is running and reachable from this host (spoolctl doctor)",
    );
  }, 60_000);

  test("a user name the server does not know is told to check the name or create the role, not to give a password", async () => {
    const e = await errorOf(openUrl(asUser(adminUrl, "nosuchuser"), false));
    expect(e.message).toContain('role "nosuchuser" does not exist');
    expect(e.remediation).toBe(
      'check the user name in the URL (postgres://USER@HOST/DB), or create the role on the server (createuser nosuchuser, or CREATE ROLE "nosuchuser" LOGIN)',
    );
    expect(e.remediation).not.toContain("PGPASSWORD");
  }, 60_000);

  test("redactUrl drops every password and keeps the rest", () => {
    expect(redactUrl("postgres://u:p%40ss@h:5432/db?sslmode=require")).toBe("postgres://u@h:5432/db?sslmode=require");
    expect(redactUrl("postgresql://u:@h/db")).toBe("postgresql://u@h/db");
    expect(redactUrl("postgres://h/db?password=x&sslmode=disable")).toBe("postgres://h/db?sslmode=disable");
    expect(redactUrl("postgres://h/db?sslmode=disable&password=x")).toBe("postgres://h/db?sslmode=disable");
    expect(redactUrl("postgres://u:a:b@c@h/db")).toBe("postgres://u@h/db");
    expect(redactUrl("postgres://u:pa/ss@h/db")).toBe("postgres://u@h/db");
    expect(redactUrl("postgres://u:pa?ss@h/db")).toBe("postgres://u@h/db");
    expect(redactUrl("/tmp/queue.db")).toBe("/tmp/queue.db");
    // What is parsed is what is redacted: user, host and database survive an unencoded @ or / in the password.
    expect(parsePgUrl("postgres://u:a/b@c@h:7/db", {})).toMatchObject({
      username: "u",
      password: "a/b@c",
      hostname: "h",
      port: 7,
      database: "db",
    });
    const bad = (() => {
      try {
        parsePgUrl("postgres://u:sec%zzret@h/db", {});
      } catch (error) {
        return (error as Error).message;
      }
      return "";
    })();
    expect(bad).toContain("bad percent-encoding in the password");
    expect(bad).not.toContain("sec");
  });

  test("locations: URLs kept (flag, env, config), printed without password; other schemes refused; local spool folder", () => {
    const env = { HOME: "/home/x", XDG_STATE_HOME: "/state" };
    const flag = resolveLocation("postgres://u:secret@db.example:6543/jobs", env, tmp);
    expect(flag).toMatchObject({
      dbPath: "postgres://u@db.example:6543/jobs",
      url: "postgres://u:secret@db.example:6543/jobs",
      source: "flag",
    });
    expect(flag.spoolDir).toMatch(/^\/state\/spoolctl\/pg-db\.example-6543-jobs-[0-9a-f]{12}\.spool$/);
    expect(resolveLocation(undefined, { ...env, SPOOLCTL_DB: "postgresql://h/q" }, tmp)).toMatchObject({
      dbPath: "postgresql://h/q",
      source: "env",
    });
    const dir = mkdtempSync(join(tmp, "cfg-"));
    Bun.spawnSync(["mkdir", "-p", join(dir, ".spoolctl")]);
    writeFileSync(join(dir, ".spoolctl/config.json"), JSON.stringify({ db_path: "postgres://h:1/q" }));
    expect(resolveLocation(undefined, env, dir)).toMatchObject({ dbPath: "postgres://h:1/q", source: "config" });
    expect(
      resolveLocation(undefined, { HOME: "/home/x" }, dir).spoolDir.startsWith(
        "/home/x/.local/state/spoolctl/pg-h-1-q-",
      ),
    ).toBe(true);
    for (const bad of ["mysql://h/q", "sqlite:///tmp/q.db", "file:///tmp/q.db"]) {
      const e = (() => {
        try {
          resolveLocation(bad, env, tmp);
        } catch (error) {
          return error as SpoolError;
        }
        return null;
      })();
      expect(e?.code).toBe("INVALID_INPUT");
      expect(e?.message).toContain("unsupported database URL scheme");
      expect(e?.remediation).toContain("postgres://");
    }
    writeFileSync(join(dir, ".spoolctl/config.json"), JSON.stringify({ db_path: "redis://h/0" }));
    expect(() => resolveLocation(undefined, env, dir)).toThrow(/unsupported database URL scheme/);
    expect(() => resolveLocation("postgres://h/q?bogus=1", env, tmp)).toThrow(/unknown parameter "bogus"/);
  });

  describe("passwords", () => {
    const ROLE = `spool_pw_${process.pid}`;
    const PASSWORD = "p:w@d/\\ s3cret";
    let url: string;
    let hbaBackup: string | null = null;
    let hbaFile = "";

    beforeAll(async () => {
      url = await freshUrl();
      await admin.unsafe(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD.replace(/'/g, "''")}'`);
      await admin.unsafe(`GRANT ALL ON DATABASE "${new URL(url).pathname.slice(1)}" TO ${ROLE}`);
      const db = new SQL(url, { max: 1 });
      await db.unsafe(`GRANT ALL ON SCHEMA public TO ${ROLE}`);
      await db.close();
      // This role alone must give a password (scram); everyone else keeps trust.
      hbaFile = (await admin`SHOW hba_file`)[0].hba_file;
      hbaBackup = await Bun.file(hbaFile).text();
      writeFileSync(
        hbaFile,
        `host all ${ROLE} 127.0.0.1/32 scram-sha-256\nlocal all ${ROLE} scram-sha-256\n${hbaBackup}`,
      );
      await admin`SELECT pg_reload_conf()`;
      // The reload is signalled, not awaited: wait until a login with no password is refused (the rule is in force).
      await waitFor(
        "pg_hba.conf's scram rule to be in force",
        async () => {
          const e = await withEnv({ PGPASSWORD: undefined, PGPASSFILE: join(tmp, "none") }, () =>
            openUrl(asUser(url, ROLE), false).then(
              async (s) => void (await s.close()),
              (error: SpoolError) => error,
            ),
          );
          return e?.message.includes("refused the login");
        },
        30_000,
        50,
      );
    }, 60_000);

    afterAll(async () => {
      if (hbaBackup !== null) {
        writeFileSync(hbaFile, hbaBackup);
        await admin`SELECT pg_reload_conf()`;
      }
    });

    const withEnv = async <T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> => {
      const saved: Record<string, string | undefined> = {};
      for (const [k, v] of Object.entries(vars)) {
        saved[k] = process.env[k];
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      try {
        return await fn();
      } finally {
        for (const [k, v] of Object.entries(saved)) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
      }
    };

    test("no password: a login refusal (not unreachable), naming where to put one", async () => {
      const e = await withEnv({ PGPASSWORD: undefined, PGPASSFILE: join(tmp, "none") }, () =>
        errorOf(openUrl(asUser(url, ROLE))),
      );
      expect(e.code).toBe("INTERNAL");
      expect(e.detail?.storage).toBeUndefined();
      expect(e.message).toContain("refused the login");
      expect(e.remediation).toStartWith("no password was given: put it in PGPASSWORD or ~/.pgpass");
      // A wrong one from PGPASSWORD is named as such, not as a missing password.
      const wrongEnv = await withEnv({ PGPASSWORD: "nope", PGPASSFILE: join(tmp, "none") }, () =>
        errorOf(openUrl(asUser(url, ROLE))),
      );
      expect(wrongEnv.remediation).toStartWith("the password from PGPASSWORD was refused: check it");
    });

    test("the password in the URL works and is never printed", async () => {
      const full = asUser(url, ROLE, PASSWORD);
      const store = await withEnv({ PGPASSWORD: undefined }, () => openUrl(full));
      try {
        expect(store.location).not.toContain("s3cret");
        expect(store.location).toBe(redactUrl(full));
        const loc = resolveLocation(full, process.env, tmp);
        expect(loc.dbPath).not.toContain("s3cret");
        const checks = await diagnoseQueue(loc.dbPath); // doctor gets the printable form, and still logs in
        expect(checks.find((c) => c.id === "db_opens")?.status).toBe("pass");
        expect(JSON.stringify(checks)).not.toContain("s3cret");
      } finally {
        await store.close();
      }
      const wrong = await withEnv({ PGPASSWORD: undefined }, () => errorOf(openUrl(asUser(url, ROLE, "wrong-s3cret"))));
      expect(wrong.message).toContain("refused the login");
      expect(wrong.remediation).toStartWith("the password from the URL was refused: check it");
      expect(JSON.stringify({ m: wrong.message, d: wrong.detail, r: wrong.remediation })).not.toContain("wrong-s3cret");
    });

    test("PGPASSWORD works", async () => {
      const store = await withEnv({ PGPASSWORD: PASSWORD, PGPASSFILE: join(tmp, "none") }, () =>
        openUrl(asUser(url, ROLE)),
      );
      expect(store.exists).toBe(true);
      await store.close();
    });

    test("~/.pgpass (and PGPASSFILE) work, with * wildcards and \\: escapes; a file others may read is ignored", async () => {
      const home = mkdtempSync(join(tmp, "home-"));
      const file = join(home, ".pgpass");
      const escaped = PASSWORD.replace(/\\/g, "\\\\").replace(/:/g, "\\:");
      writeFileSync(file, `# comment\nother:*:*:*:nope\n127.0.0.1:*:*:${ROLE}:${escaped}\n`);
      chmodSync(file, 0o600);
      const port = Number(new URL(url).port);
      expect(passwordFromPassfile({ host: "127.0.0.1", port, database: "x", user: ROLE }, { HOME: home })).toBe(
        PASSWORD,
      );
      const store = await withEnv({ HOME: home, PGPASSWORD: undefined, PGPASSFILE: undefined }, () =>
        openUrl(asUser(url, ROLE)),
      );
      expect(store.exists).toBe(true);
      await store.close();
      expect(parsePgUrl(asUser(url, ROLE), { PGPASSFILE: file }).passwordSource).toBe("passfile");
      chmodSync(file, 0o644);
      expect(passwordFromPassfile({ host: "127.0.0.1", port, database: "x", user: ROLE }, { HOME: home })).toBeNull();
    });
  });
});
