/**
 * Opening and migrating: a fresh queue carries the schema version and an
 * identity that survives reopening; an absent queue read without `create`
 * stays absent; and 8 processes opening one fresh queue at once migrate it
 * once (one identity, no error).
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { EMPTY_QUEUE } from "../../src/store/empty-queue.ts";
import { diagnoseQueue, openQueue, SCHEMA_VERSION } from "../../src/store/index.ts";
import type { StoreReader } from "../../src/store/reader.ts";
import { forEachDriver } from "../support/store.ts";
import { childScript, raceChildren } from "./children.ts";

/** The SQLite file's `meta` table. */
function sqliteMeta(path: string): Record<string, string> {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.query("SELECT key, value FROM meta").all() as { key: string; value: string }[];
    return Object.fromEntries(rows.map((r) => [r.key, r.value]));
  } finally {
    db.close(false);
  }
}

forEachDriver("open and migrate", (q, driver) => {
  test.if(driver.name === "sqlite")(
    "sqlite: an open of a current queue probes its schema once (one statement on meta), reading or writing",
    async () => {
      await q.store.close();
      const proto = Database.prototype as unknown as { query(sql: string): unknown };
      const real = proto.query;
      const probes: string[] = [];
      proto.query = function (this: Database, sql: string) {
        if (/\b(meta|sqlite_master)\b/.test(sql)) probes.push(sql);
        return real.call(this, sql);
      };
      try {
        for (const opts of [{ create: false, readOnly: true }, { create: true }]) {
          probes.length = 0;
          const store = await openQueue(q.location, opts);
          expect({ opts, probes }).toEqual({
            opts,
            probes: ["SELECT key, value FROM meta WHERE key IN ('schema_version', 'queue_id')"],
          });
          expect(store.queueId).toMatch(/^[0-9a-f]{32}$/);
          await store.close();
        }
      } finally {
        proto.query = real;
      }
    },
  );

  test("an opened queue describes itself: driver, location, spool folder, exists, queue id", async () => {
    const s = q.store;
    expect(s.driver).toBe(driver.name);
    expect(s.exists).toBe(true);
    expect(s.spoolDir).toBe(q.location.spoolDir);
    expect(typeof s.location).toBe("string");
    expect(s.location.length).toBeGreaterThan(0);
    if (driver.name === "sqlite") expect(s.location).toBe(q.location.dbPath);
    expect(s.queueId).toMatch(/^[0-9a-f-]{16,}$/i);
  });

  test("a fresh queue has the current schema version (doctor's schema_version check passes)", async () => {
    const checks = await diagnoseQueue(q.location.dbPath);
    const schema = checks.find((c) => c.id === "schema_version");
    expect(schema).toMatchObject({ status: "pass" });
  });

  test.if(driver.name === "sqlite")("sqlite: meta holds schema_version and the queue id", async () => {
    const meta = sqliteMeta(q.location.dbPath);
    expect(meta.schema_version).toBe(String(SCHEMA_VERSION));
    expect(meta.queue_id).toBe(q.store.queueId);
  });

  test("the queue id is stable across reopening (read-write and read-only); two queues have different ids", async () => {
    const id = q.store.queueId;
    await q.store.close();
    const again = await openQueue(q.location, { create: true });
    expect(again.queueId).toBe(id);
    await again.close();
    const reader = await openQueue(q.location, { create: false, readOnly: true });
    expect(reader.exists).toBe(true);
    expect(reader.queueId).toBe(id);
    await reader.close();
    const other = await driver.open();
    try {
      expect(other.store.queueId).not.toBe(id);
    } finally {
      await other.cleanup();
    }
  });

  test("an absent queue opened without create reads as empty, has no id, and is not created", async () => {
    const where = await driver.fresh();
    try {
      const store = await openQueue(where.location, { create: false, readOnly: true });
      try {
        expect(store.exists).toBe(false);
        expect(store.queueId).toBe("");
        const seen = await store.read(async (tx) => ({
          jobs: await tx.listJobs({ limit: 10 }),
          counts: await tx.countByStateAndLane(),
          settings: await tx.listSettings(),
          events: await tx.listEvents({ afterId: 0, limit: 10 }),
          workers: await tx.listWorkers(10),
        }));
        expect(seen).toEqual({ jobs: [], counts: [], settings: {}, events: [], workers: [] });
      } finally {
        await store.close();
      }
      if (driver.name === "sqlite") expect(existsSync(where.location.dbPath)).toBe(false);
      // Created for real by a later open with create.
      const created = await openQueue(where.location, { create: true });
      expect(created.exists).toBe(true);
      expect(created.queueId).not.toBe("");
      await created.close();
    } finally {
      await where.cleanup();
    }
  });

  test("the shared empty queue (what an absent queue reads as) answers every read as a fresh queue does", async () => {
    const reads = async (tx: StoreReader) => ({
      job: await tx.getJob(1),
      active: await tx.findActiveJobByKey("k"),
      actives: [...(await tx.findActiveJobsByKeys(["k"]))],
      latest: await tx.findLatestJobByKey("k"),
      jobs: await tx.listJobs({ limit: 10 }),
      groups: await tx.failureGroups({}, 1),
      unmet: [...(await tx.unmetNeeds([1]))],
      waiting: await tx.waitingOnNeeds(10),
      counts: await tx.countByStateAndLane(),
      scheduled: await tx.countScheduledByLane(0),
      dead: await tx.recentDead(10),
      failed: await tx.recentFailedAttempts(10),
      drain: await tx.drainState("default", 0),
      attempts: await tx.attemptsOf(1),
      attempt: await tx.getAttempt(1, 1),
      eventsOf: await tx.eventsOf(1),
      output: await tx.readAttemptOutput(1, 1, "stdout", 0, 10),
      settings: await tx.listSettings(),
      setting: await tx.getSetting("timeout"),
      due: await tx.nextDueAt("default"),
      stale: await tx.staleRunningJobs(30),
      worker: await tx.getWorker("w"),
      workers: await tx.listWorkers(10),
      byWorker: await tx.runningJobsByWorker(),
      events: await tx.listEvents({ afterId: 0, limit: 10 }),
      prune: await tx.pruneCandidates(["done"], 0),
      history: await tx.historyCounts([1]),
      batch: await tx.getBatch("b"),
      batches: await tx.listBatches(10),
      lanes: await tx.listLanes(),
      earliest: await tx.recurring.earliestSlot(),
      schedules: await tx.recurring.listSchedules(),
      schedule: await tx.recurring.getSchedule("s"),
      slots: await tx.recurring.slotsOf("s", 10),
      hooks: await tx.recurring.listHooks(),
    });
    expect(await reads(EMPTY_QUEUE)).toEqual(await q.store.read(reads));
  });

  test("race: 8 processes opening the same fresh queues at once migrate each once (no open fails, one queue id each)", async () => {
    // Fresh queues opened in the same order by every child, the children
    // meeting before each one: the race on a fresh queue happens QUEUES
    // times for one start of 8 processes.
    // (Fewer for PostgreSQL, where each fresh queue is a CREATE DATABASE and a full migration.)
    const QUEUES = driver.name === "sqlite" ? 24 : 8;
    const wheres = await Promise.all(Array.from({ length: QUEUES }, () => driver.fresh()));
    try {
      type Opened = { queueId: string; exists: boolean; driver: string } | { error: string };
      const results = await raceChildren<{ id: string; opened: Opened[] }>(
        childScript("opener.ts"),
        wheres.map((w) => w.location),
        Array.from({ length: 8 }, () => ["--parties", "8"]),
      );
      const failures = results.flatMap((r) =>
        r.opened.flatMap((o, i) => ("error" in o ? [`queue #${i}, process ${r.id}: ${o.error}`] : [])),
      );
      expect(failures).toEqual([]);
      for (const [i, where] of wheres.entries()) {
        const opens = results
          .map((r) => r.opened[i]!)
          .filter((o): o is Exclude<Opened, { error: string }> => !("error" in o));
        const ids = new Set(opens.map((o) => o.queueId));
        expect(ids.size).toBe(1);
        const [queueId] = [...ids];
        expect(queueId).not.toBe("");
        for (const o of opens) expect(o).toMatchObject({ exists: true, driver: driver.name });
        const store = await openQueue(where.location, { create: true });
        try {
          expect(store.queueId).toBe(queueId!);
          const settings = await store.read(async (tx) => tx.listSettings());
          expect(Object.keys(settings).sort()).toEqual(results.map((r) => `opened_by_${r.id}`).sort());
        } finally {
          await store.close();
        }
        expect((await diagnoseQueue(where.location.dbPath)).find((c) => c.id === "schema_version")).toMatchObject({
          status: "pass",
        });
        if (driver.name === "sqlite")
          expect(sqliteMeta(where.location.dbPath)).toEqual({
            schema_version: String(SCHEMA_VERSION),
            queue_id: queueId!,
          });
      }
    } finally {
      await Promise.all(wheres.map((w) => w.cleanup()));
    }
  }, 120_000);
});
