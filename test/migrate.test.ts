/**
 * The migration runner (SPEC §3 `meta`): several processes opening one fresh
 * file at the same moment all succeed and the schema is applied once; a file
 * newer than the binary is refused with a clear error and left untouched.
 *
 * SQLite-only: these are the SQLite driver's file migrations, read and
 * tampered with through raw SQL on the file on purpose. Skipped when
 * SPOOLCTL_TEST_DB is a postgres:// URL.
 */
import { Database } from "bun:sqlite";
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SCHEMA_VERSION } from "../src/store/sqlite/migrations.ts";
import { ON_POSTGRES, useTempQueue } from "./support/temp-queue.ts";

// bunfig.toml's [test] timeout is not read by Bun 1.4.5: real processes need more than 5 s on a loaded machine.
setDefaultTimeout(60_000);

describe.skipIf(ON_POSTGRES)("SQLite file migrations", () => {
  const q = useTempQueue();

  const TABLES = [
    "attempts",
    "batches",
    "dead_counts",
    "dead_jobs",
    "hooks",
    "job_events",
    "job_needs",
    "jobs",
    "lane_counts",
    "lanes",
    "meta",
    "metric_counts",
    "schedule_slots",
    "schedules",
    "settings",
    "workers",
  ];

  function tables(path = q.db): string[] {
    const db = new Database(path, { readonly: true });
    try {
      return (
        db
          .query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
          .all() as { name: string }[]
      ).map((r) => r.name);
    } finally {
      db.close();
    }
  }

  function meta(path = q.db): { key: string; value: string }[] {
    const db = new Database(path, { readonly: true });
    try {
      return db.query("SELECT key, value FROM meta ORDER BY key").all() as { key: string; value: string }[];
    } finally {
      db.close();
    }
  }

  /** Changes a queue file directly, then closes it (the WAL is checkpointed and removed on the last close). */
  function tamper(path: string, ...statements: string[]): void {
    const db = new Database(path);
    try {
      for (const s of statements) db.exec(s);
    } finally {
      db.close();
    }
  }

  /** `meta` of a current file: its schema version and its queue id (schema v4 on: 32 hex digits, made once). */
  function currentMeta(version: string) {
    return [
      { key: "queue_id", value: expect.stringMatching(/^[0-9a-f]{32}$/) },
      { key: "schema_version", value: version },
    ];
  }

  /** The file's bytes and mtime, and whether its WAL/shm companions exist. */
  function snapshot(path: string) {
    const st = statSync(path);
    return { bytes: readFileSync(path).toString("base64"), mtimeMs: st.mtimeMs, size: st.size, mode: st.mode };
  }

  test("several processes creating one fresh file at once all succeed; the schema is applied once", async () => {
    for (let round = 0; round < 3; round++) {
      const db = join(q.dir, `fresh-${round}`, "queue.db");
      expect(existsSync(db)).toBe(false);
      // Writers and readers together, all started at the same moment against a file that does not exist yet.
      const procs = [
        ...Array.from({ length: 5 }, (_, i) => q.spawn(["add", "--db", db, "--json", "--", "echo", String(i)])),
        q.spawn(["work", "--db", db, "--drain", "--json"]),
        q.spawn(["add", "--db", db, "--queue", "other", "--json", "--", "true"]),
      ];
      const results = await Promise.all(
        procs.map(async (p) => ({
          code: await p.exited,
          stdout: await new Response(p.stdout).text(),
          stderr: await new Response(p.stderr).text(),
        })),
      );
      for (const r of results) {
        if (r.code !== 0) throw new Error(`a concurrent opener failed (exit ${r.code}): ${r.stdout} ${r.stderr}`);
        expect(JSON.parse(r.stdout).ok).toBe(true);
      }
      expect(tables(db)).toEqual(TABLES);
      expect(meta(db)).toEqual(currentMeta(String(SCHEMA_VERSION)));
      const ids = [...results.slice(0, 5), results[6]!]
        .map((r) => JSON.parse(r.stdout).data.job_id as number)
        .sort((a, b) => a - b);
      expect(ids).toEqual([1, 2, 3, 4, 5, 6]);
      const count = new Database(db, { readonly: true });
      try {
        expect((count.query("SELECT count(*) AS n FROM jobs").get() as { n: number }).n).toBe(6);
        expect((count.query("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode).toBe("wal");
      } finally {
        count.close();
      }
      expect(statSync(db).mode & 0o777).toBe(0o600);
    }
  });

  test("reopening a current file changes nothing in the schema", async () => {
    await q.run(["add", "--", "true"]);
    const schema = () => {
      const db = new Database(q.db, { readonly: true });
      try {
        return db.query("SELECT type, name, sql FROM sqlite_master ORDER BY name").all();
      } finally {
        db.close();
      }
    };
    const before = schema();
    const metaBefore = meta();
    expect(metaBefore).toEqual(currentMeta(String(SCHEMA_VERSION)));
    for (const verb of [["status"], ["list"], ["work", "--drain"], ["add", "--", "true"]]) {
      expect((await q.run(verb)).code).toBe(0);
    }
    expect(schema()).toEqual(before);
    expect(meta()).toEqual(metaBefore); // the queue id too: made once, never again
  });

  test("a file newer than the binary is refused with exit 3 and left untouched", async () => {
    expect((await q.run(["add", "--", "echo", "hi"])).code).toBe(0);
    tamper(q.db, "UPDATE meta SET value = '99' WHERE key = 'schema_version'");
    expect(existsSync(`${q.db}-wal`)).toBe(false);
    const before = snapshot(q.db);
    await Bun.sleep(20); // so that a write would show in the mtime

    const verbs = [
      ["status"],
      ["list"],
      ["show", "1"],
      ["output", "1"],
      ["add", "--", "echo", "new"],
      ["work", "--once"],
      ["work", "--drain"],
    ];
    for (const verb of verbs) {
      const human = await q.run(verb);
      expect(human.code).toBe(3);
      expect(human.stdout).toBe("");
      expect(human.stderr).toMatch(
        /^spoolctl: error: INTERNAL: .*schema version 99, newer than this spoolctl understands \(\d+\).*\n$/,
      );
      expect(human.stderr).not.toContain("    at ");

      const i = verb.indexOf("--");
      const jsonArgs = i === -1 ? [...verb, "--json"] : [...verb.slice(0, i), "--json", ...verb.slice(i)];
      const r = await q.run(jsonArgs);
      expect(r.code).toBe(3);
      const env = JSON.parse(r.stdout);
      expect(env.ok).toBe(false);
      expect(env.data).toBeNull();
      expect(env.errors).toHaveLength(1);
      expect(env.errors[0].code).toBe("INTERNAL");
      expect(env.errors[0].exit_code).toBe(3);
      expect(env.errors[0].message).toContain(q.db);
      expect(env.errors[0].message).toContain("left untouched");
      expect(env.errors[0].remediation).toMatch(/upgrade/i);
    }
    expect(snapshot(q.db)).toEqual(before);
    expect(meta()).toEqual(currentMeta("99"));
    // No attempt was made and nothing was added.
    const db = new Database(q.db, { readonly: true });
    try {
      expect((db.query("SELECT count(*) AS n FROM jobs").get() as { n: number }).n).toBe(1);
      expect((db.query("SELECT count(*) AS n FROM attempts").get() as { n: number }).n).toBe(0);
    } finally {
      db.close();
    }
  });

  test("a newer file in rollback-journal mode is not switched to WAL either", async () => {
    // A future version may choose another journal mode; refusing must not rewrite the header.
    expect((await q.run(["add", "--", "echo", "hi"])).code).toBe(0);
    tamper(
      q.db,
      "PRAGMA journal_mode = DELETE",
      `UPDATE meta SET value = '${SCHEMA_VERSION + 1}' WHERE key = 'schema_version'`,
    );
    const before = snapshot(q.db);
    await Bun.sleep(20);
    const r = await q.json(["status"]);
    expect(r.code).toBe(3);
    expect(r.env.errors[0].code).toBe("INTERNAL");
    expect(r.env.errors[0].message).toContain(`schema version ${SCHEMA_VERSION + 1}`);
    expect(snapshot(q.db)).toEqual(before);
    const db = new Database(q.db, { readonly: true });
    try {
      expect((db.query("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode).toBe("delete");
    } finally {
      db.close();
    }
  });

  test("a file that is not a queue gives a clear error (exit 3) and is not changed", async () => {
    writeFileSync(q.db, "this is not a database\n".repeat(100));
    const before = snapshot(q.db);
    const r = await q.json(["status"]);
    expect(r.code).toBe(3);
    expect(r.env.ok).toBe(false);
    // Not a SQLite file at all: named as such, with doctor as the next step (test/corrupt-file.test.ts).
    expect(r.env.errors[0].code).toBe("QUEUE_CORRUPT");
    expect(r.env.errors[0].message).toContain(q.db);
    expect(r.stderr).not.toContain("    at ");
    const human = await q.run(["add", "--", "true"]);
    expect(human.code).toBe(3);
    expect(human.stderr).toMatch(/^spoolctl: error: QUEUE_CORRUPT: .+\n$/);
    expect(snapshot(q.db)).toEqual(before);
  });

  test("a v1 file is migrated to the current schema with its lane counters filled from its jobs", async () => {
    const { Database } = await import("bun:sqlite");
    const { V1_SCHEMA_FOR_TESTS } = await import("../src/store/sqlite/migrations.ts");
    const db = new Database(q.db, { create: true });
    db.exec(V1_SCHEMA_FOR_TESTS);
    db.exec("INSERT INTO meta (key, value) VALUES ('schema_version', '1')");
    const insert = db.query(
      "INSERT INTO jobs (argv, state, queue, next_run_at, timeout_seconds, max_retries, created_at) VALUES ('[\"true\"]', ?, ?, 0, 300, 3, 0)",
    );
    for (const [state, queue] of [
      ["done", "default"],
      ["done", "default"],
      ["dead", "builds"],
      ["queued", "default"],
    ])
      insert.run(state!, queue!);
    db.close();
    const status = await q.json(["status"]);
    expect(status.code).toBe(0);
    expect(status.env.data.counts).toEqual({ canceled: 0, dead: 1, done: 2, failed: 0, queued: 1, running: 0 });
    expect(status.env.data.queues.builds.dead).toBe(1);
    expect(meta()).toEqual(currentMeta(String(SCHEMA_VERSION)));
    // The kept dead counts start from the dead jobs there were (a job that never ran: all parts empty).
    const after = new Database(q.db, { readonly: true });
    try {
      expect(after.query("SELECT gkey, queue, n FROM dead_counts").all()).toEqual([
        { gkey: "|||", queue: "builds", n: 1 },
      ]);
    } finally {
      after.close();
    }
  });
});
