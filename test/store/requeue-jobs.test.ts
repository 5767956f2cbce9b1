/**
 * requeueJobs, the batch requeue behind `retry --all`: one statement for many
 * jobs, guarded by the states it expects, and refused whole when a key it would
 * make active is held by another active job.
 */
import { expect, test } from "bun:test";
import { attemptRecord, claimOne, forEachDriver, insertJob, jobOf, record } from "./support.ts";

forEachDriver("requeueJobs", (q) => {
  /** A job taken to `dead` (or another end state) after one attempt. */
  const ended = async (jobState: "dead" | "done", over: Parameters<typeof insertJob>[1] = {}) => {
    const job = await insertJob(q.store, over);
    const { attempt } = await claimOne(q.store, { workerId: "w1" });
    expect(attempt.job_id).toBe(job.id);
    const rec = attemptRecord(job.id, 1, "w1", q.store.now(), {
      attemptState: jobState === "done" ? "succeeded" : "failed",
      exitCode: jobState === "done" ? 0 : 1,
      jobState,
      attempts: 3,
      crashes: 1,
    });
    expect(await record(q.store, rec)).toBe(true);
    return job.id;
  };

  test("requeues every job still in one of the given states, due at dueAt, with fresh budgets", async () => {
    const a = await ended("dead");
    const b = await ended("dead");
    const done = await ended("done");
    const canceled = await insertJob(q.store);
    await q.store.write(async (tx) => tx.cancelQueuedJob(canceled.id, q.store.now()));
    const dueAt = q.store.now() + 9;
    const ids = await q.store.write(async (tx) =>
      tx.requeueJobs([a, b, done, canceled.id, 999_999], ["dead", "canceled"], dueAt),
    );
    expect([...ids].sort((x, y) => x - y)).toEqual([a, b, canceled.id]);
    for (const id of [a, b, canceled.id]) {
      expect(await jobOf(q.store, id)).toMatchObject({
        state: "queued",
        attempts: 0,
        crashes: 0,
        next_run_at: dueAt,
        finished_at: null,
        locked_by: null,
      });
    }
    expect((await jobOf(q.store, done)).state).toBe("done");
    expect(await q.store.write(async (tx) => tx.requeueJobs([], ["dead"], dueAt))).toEqual([]);
  });

  test("a key held by an active job refuses the whole batch: nothing requeued", async () => {
    const free = await ended("dead");
    const keyed = await ended("dead", { idempotency_key: "k" });
    await insertJob(q.store, { idempotency_key: "k" }); // active holder
    await expect(q.store.write(async (tx) => tx.requeueJobs([free, keyed], ["dead"], q.store.now()))).rejects.toThrow(
      /cannot all be requeued|idempotency/,
    );
    expect((await jobOf(q.store, free)).state).toBe("dead");
    expect((await jobOf(q.store, keyed)).state).toBe("dead");
  });
});
