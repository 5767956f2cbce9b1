/**
 * staleRunningJobs: running jobs whose lease (heartbeat) is older than the
 * lease length, judged by the queue's clock — the reaper's candidates — and
 * the reaping write that follows. Old leases are made with the fixture's
 * backdateLease, whichever clock the driver writes leases with.
 */
import { expect, test } from "bun:test";
import { attemptOwner, reap, reapCandidates, runningAttemptsOf, runningJobsOf } from "../../src/store/verbs/reap.ts";
import { registerWorker } from "../../src/store/verbs/registry.ts";
import { attemptRecord, claim, claimOne, forEachDriver, insertJobs, jobOf, record, sorted } from "../support/store.ts";

forEachDriver("staleRunningJobs (reap)", (q) => {
  const staleIds = async (lease: number) =>
    sorted((await q.store.read(async (tx) => tx.staleRunningJobs(lease))).map((j) => j.id));

  test("a running job whose heartbeat is older than the lease is stale; a recent one is not", async () => {
    const [old, older, fresh] = await insertJobs(q.store, [{ priority: 3 }, { priority: 2 }, { priority: 1 }]);
    await claimOne(q.store, { workerId: "w-old" });
    await claimOne(q.store, { workerId: "w-older" });
    await claimOne(q.store, { workerId: "w-fresh" });
    await q.backdateLease(old!.id, 1000);
    await q.backdateLease(older!.id, 5000);
    expect(await staleIds(300)).toEqual(sorted([old!.id, older!.id]));
    expect(await staleIds(3000)).toEqual([older!.id]);
    expect(await staleIds(10_000)).toEqual([]);
    const stale = await q.store.read(async (tx) => tx.staleRunningJobs(300));
    expect(stale.find((j) => j.id === old!.id)).toMatchObject({
      state: "running",
      locked_by: "w-old",
      last_attempt_no: 1,
    });
    expect(stale.map((j) => j.id)).not.toContain(fresh!.id);
  });

  test("a lease ages with the clock: a fresh claim turns stale under a short lease once that much time has passed", async () => {
    const [job] = await insertJobs(q.store, [{}]);
    await claimOne(q.store, { workerId: "w1" });
    expect(await staleIds(3600)).toEqual([]);
    const deadline = Date.now() + 30_000;
    while (!(await staleIds(0.2)).includes(job!.id)) {
      if (Date.now() > deadline) throw new Error("the lease never turned stale under a 0.2 s lease");
      await Bun.sleep(50);
    }
    expect(await staleIds(3600)).toEqual([]);
  });

  test("a heartbeat renews the lease", async () => {
    const [job] = await insertJobs(q.store, [{}]);
    await claimOne(q.store, { workerId: "w1" });
    await q.backdateLease(job!.id, 10_000);
    expect(await staleIds(3600)).toEqual([job!.id]);
    const [lease] = await q.store.write(async (tx) => tx.heartbeatJobs("w1", [{ jobId: job!.id, attemptNo: 1 }]));
    expect(lease!.owned).toBe(true);
    expect(await staleIds(3600)).toEqual([]);
  });

  test("queued, done, dead and canceled jobs are never stale, however old", async () => {
    const past = q.store.now() - 10_000;
    const [done, dead, canceled] = await insertJobs(
      q.store,
      [{ priority: 3 }, { priority: 2 }, { priority: 1 }, { next_run_at: past }],
      past,
    );
    await claim(q.store, { workerId: "w1", limit: 2, now: past });
    expect(await record(q.store, attemptRecord(done!.id, 1, "w1", past))).toBe(true);
    expect(
      await record(
        q.store,
        attemptRecord(dead!.id, 1, "w1", past, {
          attemptState: "failed",
          exitCode: 1,
          failureReason: "process_exit",
          jobState: "dead",
        }),
      ),
    ).toBe(true);
    expect(await q.store.write(async (tx) => tx.cancelQueuedJob(canceled!.id, past))).toBe(true);
    expect(await staleIds(1)).toEqual([]);
  });

  test("reaping: the stale attempt is recorded as a crash for its owner, then the job is no longer stale and the old owner is fenced out", async () => {
    const [job] = await insertJobs(q.store, [{}]);
    await claimOne(q.store, { workerId: "dead-worker" });
    await q.backdateLease(job!.id, 1000);
    const [candidate] = await q.store.read(async (tx) => tx.staleRunningJobs(30));
    expect(candidate!.id).toBe(job!.id);
    const now = q.store.now();
    const reaped = await record(
      q.store,
      attemptRecord(candidate!.id, candidate!.last_attempt_no, candidate!.locked_by!, now, {
        attemptState: "abandoned",
        exitCode: null,
        error: "worker dead-worker died",
        failureReason: "worker_crash",
        jobState: "queued",
        crashes: 1,
        nextRunAt: now + 2,
        events: [{ event: "reaped", workerId: "reaper", detail: null }],
      }),
    );
    expect(reaped).toBe(true);
    expect(await staleIds(30)).toEqual([]);
    expect(await jobOf(q.store, job!.id)).toMatchObject({
      state: "queued",
      crashes: 1,
      locked_by: null,
      heartbeat_at: null,
    });
    const [lease] = await q.store.write(async (tx) =>
      tx.heartbeatJobs("dead-worker", [{ jobId: job!.id, attemptNo: 1 }]),
    );
    expect(lease!.owned).toBe(false);
    // A second reaper racing the first finds nothing left to write.
    expect(
      await record(q.store, attemptRecord(job!.id, 1, "dead-worker", now, { jobState: "queued", crashes: 1 })),
    ).toBe(false);
    const events = await q.store.read(async (tx) => tx.eventsOf(job!.id));
    expect(events.map((e) => [e.event, e.worker_id])).toEqual([
      ["claimed", "dead-worker"],
      ["reaped", "reaper"],
    ]);
  });
});

forEachDriver("the reaper's operations (src/store/verbs/reap.ts)", (q) => {
  const register = (workerId: string, host: string, pid: number) =>
    registerWorker(
      q.store,
      { worker_id: workerId, pid, host, boot_id: null, start_time: null, pid_ns: null, queue: "default" },
      () => {},
    );

  test("reapCandidates: stale jobs, and fresh ones of workers registered on this host, each with its worker row and attempt", async () => {
    const [stale, local, remote] = await insertJobs(q.store, [{ priority: 3 }, { priority: 2 }, { priority: 1 }]);
    await register("w-gone", "host-x", 11);
    await register("w-here", "here", 12);
    await register("w-there", "there", 13);
    await claimOne(q.store, { workerId: "w-gone", workerPid: 11 });
    await claimOne(q.store, { workerId: "w-here", workerPid: 12 });
    await claimOne(q.store, { workerId: "w-there", workerPid: 13 });
    await q.backdateLease(stale!.id, 1000);
    const found = await reapCandidates(q.store, 300, "here");
    expect(found.map((c) => [c.job.id, c.stale, c.worker?.worker_id, c.attempt?.attempt_no])).toEqual([
      [stale!.id, true, "w-gone", 1],
      [local!.id, false, "w-here", 1],
    ]);
    expect(found.map((c) => c.job.id)).not.toContain(remote!.id);
  });

  test("reap: refused while the lease is newer than staleBefore, written once it is older; the reaper signs the events", async () => {
    const [job] = await insertJobs(q.store, [{ max_crashes: 3 }]);
    await claimOne(q.store, { workerId: "w-dead" });
    const ref = { jobId: job!.id, attemptNo: 1, workerId: "w-dead" };
    const staleBefore = q.store.now() - 300;
    expect(await reap(q.store, ref, "lost its lease", { reaperId: "w-reaper", staleBefore })).toBeNull();
    expect((await jobOf(q.store, job!.id)).state).toBe("running");
    await q.backdateLease(job!.id, 1000);
    expect(await reap(q.store, ref, "lost its lease", { reaperId: "w-reaper", staleBefore })).toMatchObject({
      attemptState: "abandoned",
      jobState: "queued",
      crashes: 1,
    });
    const events = await q.store.read(async (tx) => tx.eventsOf(job!.id));
    expect(events.map((e) => [e.event, e.worker_id])).toEqual([
      ["claimed", "w-dead"],
      ["reaped", "w-reaper"],
    ]);
    // The job moved on: a second reaper writes nothing.
    expect(await reap(q.store, ref, "lost its lease", { reaperId: "w-other", staleBefore: null })).toBeNull();
  });

  test("runningAttemptsOf: the running jobs of one id claimed by one PID, ids ascending, with their attempts", async () => {
    const [a, b, c] = await insertJobs(q.store, [{ priority: 3 }, { priority: 2 }, { priority: 1 }]);
    await claimOne(q.store, { workerId: "w1", workerPid: 21 });
    await claimOne(q.store, { workerId: "w1", workerPid: 22 });
    await claimOne(q.store, { workerId: "w1", workerPid: 21 });
    const mine = await runningAttemptsOf(q.store, "w1", 21);
    expect(mine.map((m) => [m.job.id, m.attempt?.attempt_no])).toEqual([
      [a!.id, 1],
      [c!.id, 1],
    ]);
    expect((await runningJobsOf(q.store, "w1")).map((j) => j.id)).toEqual([a!.id, b!.id, c!.id]);
    expect(await runningJobsOf(q.store, "nobody")).toEqual([]);
  });

  test("attemptOwner: a job, the attempt asked for (or its last) and its owner's row in one snapshot", async () => {
    const [job] = await insertJobs(q.store, [{}]);
    await register("w-own", "here", 31);
    await claimOne(q.store, { workerId: "w-own", workerPid: 31 });
    const found = await attemptOwner(q.store, job!.id, "last");
    expect([found?.job.id, found?.attempt?.attempt_no, found?.worker?.worker_id]).toEqual([job!.id, 1, "w-own"]);
    expect((await attemptOwner(q.store, job!.id, 2))?.attempt).toBeNull();
    expect(await attemptOwner(q.store, job!.id + 1000, "last")).toBeNull();
  });
});
