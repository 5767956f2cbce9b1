/**
 * Operator writes (retry, cancel, triage, stop) and the worker registry:
 * requeueJob, closeAttempt, cancelQueuedJob, requestCancel, updateJobSettings,
 * requestWorkerStop, upsertWorker, markWorkerStopped, heartbeatWorker,
 * getWorker, listWorkers, runningJobsByWorker.
 */
import { expect, test } from "bun:test";
import type { WorkerRecord } from "../../src/model/job.ts";
import type { Store } from "../../src/store/store.ts";
import { attemptRecord, claimOne, forEachDriver, insertJob, insertJobs, jobOf, record } from "../support/store.ts";

async function history(store: Store, jobId: number) {
  return store.read(async (tx) => ({ attempts: await tx.attemptsOf(jobId), events: await tx.eventsOf(jobId) }));
}

function worker(id: string, over: Partial<WorkerRecord> = {}): WorkerRecord {
  return {
    worker_id: id,
    pid: 1000,
    host: "host-a",
    boot_id: "boot-1",
    start_time: "4242",
    pid_ns: "4026531836",
    queue: "default",
    started_at: 100,
    heartbeat_at: 100,
    stop_requested: false,
    stopped_at: null,
    ...over,
  };
}

forEachDriver("operator writes", (q) => {
  /** A job taken to `dead` after one failed attempt charged 4 retries. */
  const deadJob = async (over: Parameters<typeof insertJob>[1] = {}) => {
    const job = await insertJob(q.store, over);
    await claimOne(q.store, { workerId: "w1" });
    const rec = attemptRecord(job.id, 1, "w1", q.store.now(), {
      attemptState: "failed",
      exitCode: 1,
      error: "exit 1",
      failureReason: "process_exit",
      jobState: "dead",
      attempts: 4,
      crashes: 2,
      events: [
        { event: "failed", workerId: "w1", detail: null },
        { event: "dead", workerId: "w1", detail: null },
      ],
    });
    expect(await record(q.store, rec)).toBe(true);
    return jobOf(q.store, job.id);
  };

  test("requeueJob: a dead job back to queued with fresh budgets, due now, history kept", async () => {
    const dead = await deadJob();
    const before = await history(q.store, dead.id);
    const now = q.store.now() + 7;
    expect(await q.store.write(async (tx) => tx.requeueJob(dead.id, "dead", now))).toBe(true);
    expect(await jobOf(q.store, dead.id)).toMatchObject({
      state: "queued",
      attempts: 0,
      crashes: 0,
      next_run_at: now,
      finished_at: null,
      locked_by: null,
      locked_pid: null,
      locked_at: null,
      heartbeat_at: null,
      cancel_requested: false,
      last_attempt_no: 1,
    });
    expect(await history(q.store, dead.id)).toEqual(before);
    // The next claim opens attempt 2.
    const { attempt } = await claimOne(q.store, { now });
    expect(attempt.attempt_no).toBe(2);
  });

  test("requeueJob is guarded by the state it expects: a job no longer in `from` is left alone", async () => {
    const dead = await deadJob();
    const before = await jobOf(q.store, dead.id);
    expect(await q.store.write(async (tx) => tx.requeueJob(dead.id, "canceled", q.store.now()))).toBe(false);
    expect(await q.store.write(async (tx) => tx.requeueJob(dead.id, "running", q.store.now()))).toBe(false);
    expect(await q.store.write(async (tx) => tx.requeueJob(dead.id + 1000, "dead", q.store.now()))).toBe(false);
    expect(await jobOf(q.store, dead.id)).toEqual(before);
    const canceled = await insertJob(q.store);
    await q.store.write(async (tx) => tx.cancelQueuedJob(canceled.id, q.store.now()));
    expect(await q.store.write(async (tx) => tx.requeueJob(canceled.id, "canceled", q.store.now()))).toBe(true);
    expect((await jobOf(q.store, canceled.id)).state).toBe("queued");
  });

  test("requeueJob of a running job (retry --force) clears its owner and cancel request; closeAttempt closes its attempt", async () => {
    const job = await insertJob(q.store);
    await claimOne(q.store, { workerId: "w1" });
    await q.store.write(async (tx) => tx.requestCancel(job.id));
    const now = q.store.now();
    const [closed, requeued] = await q.store.write(async (tx) => [
      await tx.closeAttempt({
        jobId: job.id,
        attemptNo: 1,
        state: "canceled",
        failureReason: "canceled",
        error: "abandoned by retry --force",
        now,
      }),
      await tx.requeueJob(job.id, "running", now),
    ]);
    expect([closed, requeued]).toEqual([true, true]);
    expect(await jobOf(q.store, job.id)).toMatchObject({
      state: "queued",
      locked_by: null,
      cancel_requested: false,
      heartbeat_at: null,
    });
    expect(await q.store.read(async (tx) => tx.getAttempt(job.id, 1))).toMatchObject({
      state: "canceled",
      failure_reason: "canceled",
      error: "abandoned by retry --force",
      finished_at: now,
    });
    // The old worker's late result changes nothing.
    expect(await record(q.store, attemptRecord(job.id, 1, "w1", q.store.now()))).toBe(false);
  });

  test("closeAttempt closes only a running attempt and leaves the job row alone", async () => {
    const job = await insertJob(q.store);
    await claimOne(q.store, { workerId: "w1" });
    const jobBefore = await jobOf(q.store, job.id);
    const closing = {
      jobId: job.id,
      attemptNo: 1,
      state: "abandoned" as const,
      failureReason: "worker_crash" as const,
      error: "gone",
      now: q.store.now(),
    };
    expect(await q.store.write(async (tx) => tx.closeAttempt(closing))).toBe(true);
    expect(await jobOf(q.store, job.id)).toEqual(jobBefore);
    const closed = await q.store.read(async (tx) => tx.getAttempt(job.id, 1));
    expect(closed).toMatchObject({ state: "abandoned", failure_reason: "worker_crash", error: "gone" });
    expect(await q.store.write(async (tx) => tx.closeAttempt({ ...closing, state: "canceled", error: "again" }))).toBe(
      false,
    );
    expect(await q.store.read(async (tx) => tx.getAttempt(job.id, 1))).toEqual(closed);
    expect(await q.store.write(async (tx) => tx.closeAttempt({ ...closing, attemptNo: 2 }))).toBe(false);
    expect(await q.store.write(async (tx) => tx.closeAttempt({ ...closing, jobId: job.id + 1000 }))).toBe(false);
  });

  test("cancelQueuedJob cancels a queued job at once, and nothing else", async () => {
    const [queued, running] = await insertJobs(q.store, [{ priority: 0 }, { priority: 5 }]);
    await claimOne(q.store, { workerId: "w1" });
    const now = q.store.now();
    expect(await q.store.write(async (tx) => tx.cancelQueuedJob(queued!.id, now))).toBe(true);
    expect(await jobOf(q.store, queued!.id)).toMatchObject({ state: "canceled", finished_at: now });
    expect(await q.store.write(async (tx) => tx.cancelQueuedJob(queued!.id, now))).toBe(false);
    expect(await q.store.write(async (tx) => tx.cancelQueuedJob(running!.id, now))).toBe(false);
    expect((await jobOf(q.store, running!.id)).state).toBe("running");
    expect(await q.store.write(async (tx) => tx.cancelQueuedJob(running!.id + 1000, now))).toBe(false);
  });

  test("requestCancel flags a running job only", async () => {
    const [queued, running] = await insertJobs(q.store, [{ priority: 0 }, { priority: 5 }]);
    await claimOne(q.store, { workerId: "w1" });
    expect(await q.store.write(async (tx) => tx.requestCancel(queued!.id))).toBe(false);
    expect((await jobOf(q.store, queued!.id)).cancel_requested).toBe(false);
    expect(await q.store.write(async (tx) => tx.requestCancel(running!.id))).toBe(true);
    expect(await jobOf(q.store, running!.id)).toMatchObject({ state: "running", cancel_requested: true });
    expect(await q.store.write(async (tx) => tx.requestCancel(running!.id))).toBe(true);
    expect(
      await record(
        q.store,
        attemptRecord(running!.id, 1, "w1", q.store.now(), {
          attemptState: "canceled",
          failureReason: "canceled",
          jobState: "canceled",
        }),
      ),
    ).toBe(true);
    expect(await q.store.write(async (tx) => tx.requestCancel(running!.id))).toBe(false);
    expect(await jobOf(q.store, running!.id)).toMatchObject({ state: "canceled", cancel_requested: false });
  });

  test("updateJobSettings changes only the given fields (env replaced whole), guarded by the expected state", async () => {
    const dead = await deadJob({ timeout_seconds: 300, max_retries: 3, env: { A: "1", B: "2" } });
    expect(await q.store.write(async (tx) => tx.updateJobSettings(dead.id, "dead", { timeout_seconds: 42.5 }))).toBe(
      true,
    );
    expect(await jobOf(q.store, dead.id)).toMatchObject({
      timeout_seconds: 42.5,
      max_retries: 3,
      env: { A: "1", B: "2" },
    });
    expect(
      await q.store.write(async (tx) => tx.updateJobSettings(dead.id, "dead", { max_retries: 9, env: { C: "3" } })),
    ).toBe(true);
    expect(await jobOf(q.store, dead.id)).toMatchObject({ timeout_seconds: 42.5, max_retries: 9, env: { C: "3" } });
    expect(await q.store.write(async (tx) => tx.updateJobSettings(dead.id, "dead", { env: {} }))).toBe(true);
    expect((await jobOf(q.store, dead.id)).env).toEqual({});
    expect(await q.store.write(async (tx) => tx.updateJobSettings(dead.id, "dead", {}))).toBe(true);
    const before = await jobOf(q.store, dead.id);
    expect(
      await q.store.write(async (tx) =>
        tx.updateJobSettings(dead.id, "canceled", { timeout_seconds: 1, env: { X: "y" } }),
      ),
    ).toBe(false);
    expect(
      await q.store.write(async (tx) => tx.updateJobSettings(dead.id + 1000, "dead", { timeout_seconds: 1 })),
    ).toBe(false);
    expect(await jobOf(q.store, dead.id)).toEqual(before);
  });

  test("runningJobsByWorker pairs each running job with its owner", async () => {
    const [a, b, c] = await insertJobs(q.store, [{ priority: 3 }, { priority: 2 }, { priority: 1 }, {}]);
    await claimOne(q.store, { workerId: "w1" });
    await claimOne(q.store, { workerId: "w2" });
    await claimOne(q.store, { workerId: "w1" });
    const rows = await q.store.read(async (tx) => tx.runningJobsByWorker());
    expect([...rows].sort((x, y) => x.job_id - y.job_id)).toEqual([
      { worker_id: "w1", job_id: a!.id },
      { worker_id: "w2", job_id: b!.id },
      { worker_id: "w1", job_id: c!.id },
    ]);
    expect(await record(q.store, attemptRecord(b!.id, 1, "w2", q.store.now()))).toBe(true);
    expect((await q.store.read(async (tx) => tx.runningJobsByWorker())).map((r) => r.job_id).sort()).toEqual(
      [a!.id, c!.id].sort(),
    );
  });
});

forEachDriver("worker registry", (q) => {
  test("upsertWorker registers a worker and refreshes every field on re-registration; getWorker reads it", async () => {
    expect(await q.store.read(async (tx) => tx.getWorker("w1"))).toBeNull();
    await q.store.write(async (tx) => tx.upsertWorker(worker("w1")));
    expect(await q.store.read(async (tx) => tx.getWorker("w1"))).toEqual(worker("w1"));
    const again = worker("w1", {
      pid: 2000,
      host: "host-b",
      boot_id: null,
      start_time: null,
      pid_ns: null,
      queue: "builds",
      started_at: 200,
      heartbeat_at: 201,
      stop_requested: false,
      stopped_at: null,
    });
    await q.store.write(async (tx) => tx.upsertWorker(again));
    expect(await q.store.read(async (tx) => tx.getWorker("w1"))).toEqual(again);
  });

  test("listWorkers lists the most recently seen first, at most `limit`", async () => {
    await q.store.write(async (tx) => {
      await tx.upsertWorker(worker("old", { heartbeat_at: 100 }));
      await tx.upsertWorker(worker("new", { heartbeat_at: 300 }));
      await tx.upsertWorker(worker("mid", { heartbeat_at: 200 }));
    });
    expect((await q.store.read(async (tx) => tx.listWorkers(10))).map((w) => w.worker_id)).toEqual([
      "new",
      "mid",
      "old",
    ]);
    expect((await q.store.read(async (tx) => tx.listWorkers(2))).map((w) => w.worker_id)).toEqual(["new", "mid"]);
    await q.store.write(async (tx) => tx.heartbeatWorker("old", 400));
    expect((await q.store.read(async (tx) => tx.listWorkers(1))).map((w) => w.worker_id)).toEqual(["old"]);
  });

  test("heartbeatWorker advances the registry heartbeat and reports a stop request", async () => {
    await q.store.write(async (tx) => tx.upsertWorker(worker("w1")));
    expect(await q.store.write(async (tx) => tx.heartbeatWorker("w1", 150))).toEqual({ stopRequested: false });
    expect((await q.store.read(async (tx) => tx.getWorker("w1")))?.heartbeat_at).toBe(150);
    expect(await q.store.write(async (tx) => tx.requestWorkerStop("w1"))).toEqual(["w1"]);
    expect(await q.store.write(async (tx) => tx.heartbeatWorker("w1", 160))).toEqual({ stopRequested: true });
    expect(await q.store.write(async (tx) => tx.heartbeatWorker("unknown", 160))).toEqual({ stopRequested: false });
    expect(await q.store.read(async (tx) => tx.getWorker("unknown"))).toBeNull();
  });

  test("requestWorkerStop flags one worker or every worker not yet stopped, and returns their ids", async () => {
    await q.store.write(async (tx) => {
      for (const id of ["a", "b", "c"]) await tx.upsertWorker(worker(id));
    });
    await q.store.write(async (tx) => tx.markWorkerStopped("c", 500));
    expect(await q.store.write(async (tx) => tx.requestWorkerStop("c"))).toEqual([]);
    expect(await q.store.write(async (tx) => tx.requestWorkerStop("nobody"))).toEqual([]);
    expect(await q.store.write(async (tx) => tx.requestWorkerStop("a"))).toEqual(["a"]);
    expect((await q.store.read(async (tx) => tx.getWorker("b")))?.stop_requested).toBe(false);
    expect((await q.store.write(async (tx) => tx.requestWorkerStop(null))).sort()).toEqual(["a", "b"]);
    const all = await q.store.read(async (tx) => tx.listWorkers(10));
    expect(Object.fromEntries(all.map((w) => [w.worker_id, w.stop_requested]))).toEqual({ a: true, b: true, c: false });
  });

  test("markWorkerStopped records the stop time (and last sighting)", async () => {
    await q.store.write(async (tx) => tx.upsertWorker(worker("w1")));
    await q.store.write(async (tx) => tx.markWorkerStopped("w1", 777));
    expect(await q.store.read(async (tx) => tx.getWorker("w1"))).toMatchObject({ stopped_at: 777, heartbeat_at: 777 });
    await q.store.write(async (tx) => tx.markWorkerStopped("nobody", 777));
    expect(await q.store.read(async (tx) => tx.getWorker("nobody"))).toBeNull();
  });
});
