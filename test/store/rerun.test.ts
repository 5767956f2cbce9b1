/**
 * rerunJob, the store operation behind `rerun`: a finished job (done, dead,
 * canceled) back to queued with fresh budgets, guarded in its statement by
 * the finished states, with one `retried` ledger row marked `"rerun": true`,
 * and refused when another active job holds its idempotency key.
 */
import { expect, test } from "bun:test";
import { claimOne, endedJob, forEachDriver, insertJob, jobOf } from "../support/store.ts";
import { childScript, raceChildren } from "./children.ts";

forEachDriver("rerunJob", (q) => {
  test("a done job is queued again with fresh budgets, its attempt kept, and a rerun event", async () => {
    const id = await endedJob(q.store, "done");
    const now = q.store.now();
    expect(await q.store.write(async (tx) => tx.rerunJob(id, now + 5, now))).toBe("done");
    expect(await jobOf(q.store, id)).toMatchObject({
      state: "queued",
      attempts: 0,
      crashes: 0,
      next_run_at: now + 5,
      finished_at: null,
      locked_by: null,
      last_attempt_no: 1,
    });
    const events = await q.store.read(async (tx) => tx.eventsOf(id));
    const last = events.at(-1)!;
    expect(last.event).toBe("retried");
    expect(JSON.parse(last.detail!)).toEqual({ from: "done", rerun: true });
    expect((await q.store.read(async (tx) => tx.attemptsOf(id))).length).toBe(1);
    // The next claim opens attempt 2 of the same job.
    const { attempt } = await claimOne(q.store, { workerId: "w2", now: now + 10 });
    expect([attempt.job_id, attempt.attempt_no]).toEqual([id, 2]);
  });

  test("dead and canceled jobs are rerun; queued, running and missing ones are not (null, nothing changed)", async () => {
    const dead = await endedJob(q.store, "dead");
    const canceled = await insertJob(q.store);
    await q.store.write(async (tx) => tx.cancelQueuedJob(canceled.id, q.store.now()));
    const queued = await insertJob(q.store);
    const now = q.store.now();
    expect(await q.store.write(async (tx) => tx.rerunJob(dead, now, now))).toBe("dead");
    expect(await q.store.write(async (tx) => tx.rerunJob(canceled.id, now, now))).toBe("canceled");
    // `dead` is queued now: a second rerun finds nothing finished.
    expect(await q.store.write(async (tx) => tx.rerunJob(dead, now, now))).toBeNull();
    expect(await q.store.write(async (tx) => tx.rerunJob(queued.id, now, now))).toBeNull();
    expect(await q.store.write(async (tx) => tx.rerunJob(999_999, now, now))).toBeNull();
    expect((await q.store.read(async (tx) => tx.eventsOf(queued.id))).map((e) => e.event)).not.toContain("retried");
    const { job } = await claimOne(q.store, { workerId: "w3" });
    expect(await q.store.write(async (tx) => tx.rerunJob(job.id, now, now))).toBeNull();
    expect(await jobOf(q.store, job.id)).toMatchObject({ state: "running", locked_by: "w3" });
  });

  test("a key held by another active job refuses the rerun: IDEMPOTENCY_CONFLICT, nothing changed", async () => {
    const keyed = await endedJob(q.store, "done", { idempotency_key: "k" });
    await insertJob(q.store, { idempotency_key: "k" }); // active holder
    const now = q.store.now();
    await expect(q.store.write(async (tx) => tx.rerunJob(keyed, now, now))).rejects.toMatchObject({
      code: "IDEMPOTENCY_CONFLICT",
    });
    expect((await jobOf(q.store, keyed)).state).toBe("done");
  });

  test("race: 6 processes rerunning one done job at once rerun it exactly once; the others find it queued", async () => {
    const id = await endedJob(q.store, "done");
    type Out = { outcome: string };
    const results = await raceChildren<Out>(
      childScript("retrier.ts"),
      q.location,
      Array.from({ length: 6 }, () => ["--job", String(id), "--rerun"]),
    );
    expect(results.map((r) => r.outcome).sort()).toEqual([
      "CONFLICT",
      "CONFLICT",
      "CONFLICT",
      "CONFLICT",
      "CONFLICT",
      "rerun",
    ]);
    expect((await jobOf(q.store, id)).state).toBe("queued");
    const reruns = (await q.store.read(async (tx) => tx.eventsOf(id))).filter((e) => e.event === "retried");
    expect(reruns).toHaveLength(1);
  }, 120_000);
});
