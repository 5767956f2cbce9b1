/**
 * heartbeatJobs: one call renews the leases of several attempts and reports,
 * per attempt, whether the worker still owns it and whether a cancel was requested.
 * heartbeat (the operation): the registry row and the leases in one transaction.
 */
import { expect, test } from "bun:test";
import { heartbeat } from "../../src/store/verbs/heartbeat.ts";
import {
  attemptRecord,
  CLOCK_SLACK,
  claim,
  claimOne,
  forEachDriver,
  insertJobs,
  jobOf,
  record,
} from "../support/store.ts";

forEachDriver("heartbeatJobs", (q) => {
  test("one call renews every owned attempt and reports owned / cancelRequested per attempt, in request order", async () => {
    const [a, b, c, d] = await insertJobs(q.store, [
      { priority: 4 },
      { priority: 3 },
      { priority: 2 },
      { priority: 1 },
    ]);
    expect(await claim(q.store, { workerId: "w1", limit: 3 })).toHaveLength(3);
    await claimOne(q.store, { workerId: "w2" });
    for (const job of [a!, b!, c!, d!]) await q.backdateLease(job.id, 1000);
    const dLease = (await jobOf(q.store, d!.id)).heartbeat_at;
    expect(await q.store.write(async (tx) => tx.requestCancel(b!.id))).toBe(true);
    const now = q.store.now();
    const leases = await q.store.write(async (tx) =>
      tx.heartbeatJobs("w1", [
        { jobId: a!.id, attemptNo: 1 },
        { jobId: b!.id, attemptNo: 1 },
        { jobId: d!.id, attemptNo: 1 }, // w2's
        { jobId: c!.id, attemptNo: 1 },
        { jobId: a!.id, attemptNo: 2 }, // no such attempt
        { jobId: d!.id + 1000, attemptNo: 1 }, // no such job
      ]),
    );
    expect(leases).toEqual([
      { jobId: a!.id, attemptNo: 1, owned: true, cancelRequested: false },
      { jobId: b!.id, attemptNo: 1, owned: true, cancelRequested: true },
      { jobId: d!.id, attemptNo: 1, owned: false, cancelRequested: false },
      { jobId: c!.id, attemptNo: 1, owned: true, cancelRequested: false },
      { jobId: a!.id, attemptNo: 2, owned: false, cancelRequested: false },
      { jobId: d!.id + 1000, attemptNo: 1, owned: false, cancelRequested: false },
    ]);
    // Renewed: from 1000 s old to the queue's clock.
    for (const job of [a!, b!, c!])
      expect(Math.abs((await jobOf(q.store, job.id)).heartbeat_at! - now)).toBeLessThan(CLOCK_SLACK);
    // Another worker's lease is not touched.
    expect((await jobOf(q.store, d!.id)).heartbeat_at).toBe(dLease);
  });

  test("an empty heartbeat reports nothing", async () => {
    expect(await q.store.write(async (tx) => tx.heartbeatJobs("w1", []))).toEqual([]);
  });

  test("an attempt that was recorded, force-retried or reclaimed is no longer owned, and its row is not touched", async () => {
    const [a, b] = await insertJobs(q.store, [{ priority: 2 }, { priority: 1 }]);
    await claim(q.store, { workerId: "w1", limit: 2 });
    expect(await record(q.store, attemptRecord(a!.id, 1, "w1", q.store.now()))).toBe(true);
    await q.store.write(async (tx) => {
      await tx.closeAttempt({
        jobId: b!.id,
        attemptNo: 1,
        state: "canceled",
        failureReason: "canceled",
        error: "forced",
        now: q.store.now(),
      });
      expect(await tx.requeueJob(b!.id, "running", q.store.now())).toBe(true);
    });
    const hb = () =>
      q.store.write(async (tx) =>
        tx.heartbeatJobs("w1", [
          { jobId: a!.id, attemptNo: 1 },
          { jobId: b!.id, attemptNo: 1 },
        ]),
      );
    expect((await hb()).map((l) => l.owned)).toEqual([false, false]);
    expect((await jobOf(q.store, a!.id)).heartbeat_at).toBeNull();
    expect((await jobOf(q.store, b!.id)).heartbeat_at).toBeNull();
    // Reclaimed by another worker as attempt 2: w1's attempt 1 stays disowned, w2's attempt 2 is owned.
    await claimOne(q.store, { workerId: "w2" });
    await q.backdateLease(b!.id, 1000);
    const w2Lease = (await jobOf(q.store, b!.id)).heartbeat_at;
    expect((await hb()).map((l) => l.owned)).toEqual([false, false]);
    expect((await jobOf(q.store, b!.id)).heartbeat_at).toBe(w2Lease);
    const w2 = await q.store.write(async (tx) => tx.heartbeatJobs("w2", [{ jobId: b!.id, attemptNo: 2 }]));
    expect(w2).toEqual([{ jobId: b!.id, attemptNo: 2, owned: true, cancelRequested: false }]);
    expect((await jobOf(q.store, b!.id)).heartbeat_at!).toBeGreaterThan(w2Lease! + 900);
  });

  test("a cancel request is seen on the next heartbeat and cleared by a requeue", async () => {
    const [a] = await insertJobs(q.store, [{}]);
    await claimOne(q.store, { workerId: "w1" });
    const beat = (workerId: string, attemptNo: number) =>
      q.store.write(async (tx) => tx.heartbeatJobs(workerId, [{ jobId: a!.id, attemptNo }]));
    expect((await beat("w1", 1))[0]!.cancelRequested).toBe(false);
    expect(await q.store.write(async (tx) => tx.requestCancel(a!.id))).toBe(true);
    expect((await beat("w1", 1))[0]).toMatchObject({ owned: true, cancelRequested: true });
    expect((await beat("w1", 1))[0]).toMatchObject({ owned: true, cancelRequested: true });
    await q.store.write(async (tx) => tx.requeueJob(a!.id, "running", q.store.now()));
    await claimOne(q.store, { workerId: "w1" });
    expect((await beat("w1", 2))[0]).toMatchObject({ owned: true, cancelRequested: false });
  });

  test("heartbeat renews the worker's row and its leases together, and answers a stop request", async () => {
    const [a] = await insertJobs(q.store, [{}]);
    await claimOne(q.store, { workerId: "w1" });
    await q.backdateLease(a!.id, 1000);
    const row = { worker_id: "w1", pid: 1000, host: "h", boot_id: null, start_time: null, queue: "default" };
    await q.store.write(async (tx) =>
      tx.upsertWorker({ ...row, started_at: 1, heartbeat_at: 1, stop_requested: false, stopped_at: null }),
    );
    const first = await heartbeat(q.store, "w1", [{ jobId: a!.id, attemptNo: 1 }]);
    expect(first).toEqual({
      stopRequested: false,
      leases: [{ jobId: a!.id, attemptNo: 1, owned: true, cancelRequested: false }],
    });
    expect((await jobOf(q.store, a!.id)).heartbeat_at!).toBeGreaterThan(q.store.now() - CLOCK_SLACK);
    const worker = await q.store.read(async (tx) => tx.getWorker("w1"));
    expect(worker!.heartbeat_at).toBeGreaterThan(q.store.now() - CLOCK_SLACK);
    expect(await q.store.write(async (tx) => tx.requestWorkerStop("w1"))).toEqual(["w1"]);
    expect((await heartbeat(q.store, "w1", [])).stopRequested).toBe(true);
  });
});
