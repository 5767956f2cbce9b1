/**
 * Store.read / Store.write semantics: commit, rollback on a throw, one
 * consistent snapshot per read, isolation from other connections, the
 * per-connection lock (concurrent transactions of one Store never
 * interleave), and the queue clock.
 */
import { expect, test } from "bun:test";
import { statSync } from "node:fs";
import { openQueue } from "../../src/store/index.ts";
import type { Store } from "../../src/store/store.ts";
import { claim, forEachDriver, insertJob, insertJobs, newJob } from "../support/store.ts";

/** Reads the `counter` setting, awaits another statement of the same transaction, writes counter + 1. */
function bump(store: Store): Promise<number> {
  return store.write(async (tx) => {
    const value = Number((await tx.getSetting("counter")) ?? "0");
    await tx.getJob(1); // something trivial in between: the other transaction must not run here
    await tx.listSettings();
    await tx.setSetting("counter", String(value + 1));
    return value + 1;
  });
}

forEachDriver("transactions", (q) => {
  test("write commits what its callback did and returns the callback's value", async () => {
    const out = await q.store.write(async (tx) => {
      const job = await tx.insertJob(newJob({ note: "kept" }), q.store.now());
      await tx.appendEvent(job.id, "added", null, null, q.store.now());
      await tx.setSetting("s", "1");
      return { id: job.id };
    });
    const seen = await q.store.read(async (tx) => ({
      job: await tx.getJob(out.id),
      events: await tx.eventsOf(out.id),
      s: await tx.getSetting("s"),
    }));
    expect(seen.job?.note).toBe("kept");
    expect(seen.events).toHaveLength(1);
    expect(seen.s).toBe("1");
    expect(await q.store.read(async () => 42)).toBe(42);
  });

  test("the callback's own error comes out of write and read unchanged (not reported as a storage failure)", async () => {
    const boom = new TypeError("a bug in the callback");
    let thrown: unknown;
    try {
      await q.store.write(async (tx) => {
        await tx.setSetting("s", "1");
        throw boom;
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBe(boom);
    thrown = undefined;
    try {
      await q.store.read(async (tx) => {
        await tx.listSettings();
        throw boom;
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBe(boom);
    expect(await q.store.read(async (tx) => tx.getSetting("s"))).toBeNull();
  });

  test("a throw inside write rolls everything back", async () => {
    const [queued] = await insertJobs(q.store, [{}]);
    await q.store.write(async (tx) => tx.setSetting("s", "before"));
    const before = await q.store.read(async (tx) => ({
      jobs: await tx.listJobs({ limit: 10 }),
      events: await tx.listEvents({ afterId: 0, limit: 100 }),
      settings: await tx.listSettings(),
    }));
    await expect(
      q.store.write(async (tx) => {
        const job = await tx.insertJob(newJob(), q.store.now());
        await tx.appendEvent(job.id, "added", null, null, q.store.now());
        await tx.setSetting("s", "after");
        await tx.setSetting("new", "1");
        await tx.cancelQueuedJob(queued!.id, q.store.now());
        await tx.upsertWorker({
          worker_id: "w",
          pid: 1,
          host: "h",
          boot_id: null,
          start_time: null,
          queue: "default",
          started_at: 1,
          heartbeat_at: 1,
          stop_requested: false,
          stopped_at: null,
        });
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    const after = await q.store.read(async (tx) => ({
      jobs: await tx.listJobs({ limit: 10 }),
      events: await tx.listEvents({ afterId: 0, limit: 100 }),
      settings: await tx.listSettings(),
    }));
    expect(after).toEqual(before);
    expect(await q.store.read(async (tx) => tx.getWorker("w"))).toBeNull();
    // The store (and its lock) is fine afterwards.
    expect(await bump(q.store)).toBe(1);
    expect((await claim(q.store)).map((c) => c.job.id)).toEqual([queued!.id]);
  });

  test("a throw inside read is passed on, and the store stays usable", async () => {
    await expect(
      q.store.read(async (tx) => {
        await tx.listSettings();
        throw new Error("read failed");
      }),
    ).rejects.toThrow("read failed");
    expect(await bump(q.store)).toBe(1);
  });

  test("a read sees one snapshot: another connection's commit between its statements is not seen", async () => {
    const other = await openQueue(q.location, { create: true });
    try {
      await insertJob(q.store);
      const [first, second] = await q.store.read(async (tx) => {
        const a = (await tx.listJobs({ limit: 10 })).length;
        await insertJob(other); // commits on another connection meanwhile
        const b = (await tx.listJobs({ limit: 10 })).length;
        return [a, b];
      });
      expect([first, second]).toEqual([1, 1]);
      expect(await q.store.read(async (tx) => (await tx.listJobs({ limit: 10 })).length)).toBe(2);
    } finally {
      await other.close();
    }
  });

  test("a write sees its own changes; other connections see them only after commit", async () => {
    const other = await openQueue(q.location, { create: true });
    try {
      const seenInside = await q.store.write(async (tx) => {
        await tx.setSetting("k", "v");
        const own = await tx.getSetting("k");
        const others = await other.read(async (otx) => otx.getSetting("k"));
        return { own, others };
      });
      expect(seenInside).toEqual({ own: "v", others: null });
      expect(await other.read(async (tx) => tx.getSetting("k"))).toBe("v");
    } finally {
      await other.close();
    }
  });

  test("per-connection lock: two concurrent writes on one store whose callbacks await between statements do not interleave", async () => {
    await Promise.all([bump(q.store), bump(q.store)]);
    expect(await q.store.read(async (tx) => tx.getSetting("counter"))).toBe("2");
  });

  test("per-connection lock: many concurrent writes, reads and claims on one store all serialise", async () => {
    await insertJobs(
      q.store,
      Array.from({ length: 5 }, () => ({})),
    );
    const reads: Promise<[string | null, string | null]>[] = [];
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < 10; i++) {
      work.push(bump(q.store));
      if (i % 2 === 0) work.push(claim(q.store, { workerId: `w${i}` }));
      // A read that reads the counter twice, awaiting in between, sees one value.
      reads.push(
        q.store.read(async (tx) => {
          const first = await tx.getSetting("counter");
          await tx.getJob(1);
          return [first, await tx.getSetting("counter")];
        }),
      );
    }
    await Promise.all(work);
    for (const [a, b] of await Promise.all(reads)) expect(a).toBe(b);
    expect(await q.store.read(async (tx) => tx.getSetting("counter"))).toBe("10");
    expect(await q.store.read(async (tx) => (await tx.drainState("default", 0)).running)).toBe(5);
  });

  test("checkpoint leaves every commit readable and, on SQLite, truncates the write-ahead log to nothing", async () => {
    const ids = (
      await insertJobs(
        q.store,
        Array.from({ length: 50 }, () => ({})),
      )
    ).map((j) => j.id);
    expect(await q.store.checkpoint()).toBe(true);
    if (q.driver.name === "sqlite") {
      expect(statSync(`${q.location.dbPath}-wal`).size).toBe(0);
      expect(await q.store.checkpoint()).toBe(true); // an empty log: nothing to do
    }
    expect(
      (await q.store.read(async (tx) => tx.listJobs({ limit: 100 }))).map((j) => j.id).sort((a, b) => a - b),
    ).toEqual(ids);
    const later = await insertJob(q.store);
    expect((await q.store.read(async (tx) => tx.getJob(later.id)))?.state).toBe("queued");
  });

  test("store.now() is the queue's clock: within a few seconds of this host's", async () => {
    const before = Date.now() / 1000;
    const now = q.store.now();
    const after = Date.now() / 1000;
    expect(now).toBeGreaterThan(before - 5);
    expect(now).toBeLessThan(after + 5);
  });
});
