/**
 * requeueJobs, the batch requeue behind `retry --all`: one statement for many
 * jobs, guarded by the states it expects, and refused whole when a key it would
 * make active is held by another active job.
 */
import { expect, test } from "bun:test";
import { endedJob, forEachDriver, insertJob, jobOf } from "../support/store.ts";

forEachDriver("requeueJobs", (q) => {
  test("requeues every job still in one of the given states, due at dueAt, with fresh budgets", async () => {
    const a = await endedJob(q.store, "dead");
    const b = await endedJob(q.store, "dead");
    const done = await endedJob(q.store, "done");
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
    const free = await endedJob(q.store, "dead");
    const keyed = await endedJob(q.store, "dead", { idempotency_key: "k" });
    await insertJob(q.store, { idempotency_key: "k" }); // active holder
    await expect(q.store.write(async (tx) => tx.requeueJobs([free, keyed], ["dead"], q.store.now()))).rejects.toThrow(
      /cannot all be requeued|idempotency/,
    );
    expect((await jobOf(q.store, free)).state).toBe("dead");
    expect((await jobOf(q.store, keyed)).state).toBe("dead");
  });
});
