/**
 * `batch-done` hooks (docs/architecture.md "Hooks"): the hook's job is added in the
 * transaction that finishes a batch (its last queued or running job ends, or it is sealed
 * with every job ended, or empty, or its last unfinished jobs are deleted), once per finish,
 * also when two workers end its last two jobs at once; a batch reopened by a retry that finishes again fires again.
 */
import { expect, test } from "bun:test";
import type { BatchAdd, Job } from "../../src/model/job.ts";
import type { Hook } from "../../src/model/recurring.ts";
import type { AttemptRecord } from "../../src/store/attempt-types.ts";
import { openQueue } from "../../src/store/index.ts";
import type { Store } from "../../src/store/store.ts";
import { attemptRecord, claimOne, forEachDriver, newJob, record } from "../support/store.ts";

const TEMPLATE = { argv: ["true"], priority: 0, queue: "hooks", timeout_seconds: 60, max_retries: 0 };
const JOB = { ...TEMPLATE, max_crashes: null, tags: {}, note: null, cwd: null, env: { MINE: "1" } };

function hook(name: string, on: Hook["on_outcome"] = "batch-done"): Hook {
  return {
    name,
    on_outcome: on,
    match_queue: null,
    match_tag_key: null,
    match_tag_value: null,
    job: JOB,
    created_at: 0,
  };
}

/** Adds `n` jobs to batch `name` (sealed with them when `seal`); their ids. */
async function addTo(store: Store, name: string, n: number, seal: boolean): Promise<number[]> {
  const b: BatchAdd = { name, failFast: null, seal };
  const jobs = await store.write(async (tx) =>
    tx.addJobs(
      Array.from({ length: n }, () => newJob({ queue: "work" })),
      store.now(),
      [],
      b,
    ),
  );
  return jobs.map((j) => j.id);
}

/** The record that ends worker `w`'s attempt at `jobId` in `state`. */
function ending(store: Store, jobId: number, attemptNo: number, w: string, state: "done" | "dead"): AttemptRecord {
  return attemptRecord(jobId, attemptNo, w, store.now(), {
    attemptState: state === "done" ? "succeeded" : "failed",
    exitCode: state === "done" ? 0 : 1,
    jobState: state,
    events: [{ event: state === "done" ? "succeeded" : "dead", workerId: w, detail: null }],
  });
}

const hookJobs = (store: Store): Promise<Job[]> =>
  store.read(async (tx) => tx.listJobs({ queue: "hooks", limit: 50 })).then((js) => js.reverse());

forEachDriver("batch-done hooks", (q) => {
  test("the hook's job comes in the transaction that ends the batch's last job, with the batch in its env", async () => {
    await q.store.write(async (tx) => tx.recurring.addHook(hook("report")));
    await q.store.write(async (tx) => tx.recurring.addHook(hook("on-done", "done")));
    const [a, b] = await addTo(q.store, "ci-1", 2, true);
    const first = await claimOne(q.store, { workerId: "w1", queue: "work" });
    const second = await claimOne(q.store, { workerId: "w2", queue: "work" });
    expect([first.job.id, second.job.id]).toEqual([a!, b!]);
    expect(await record(q.store, ending(q.store, a!, 1, "w1", "done"))).toBe(true);
    // One job still running: only the job's own `done` hook.
    expect((await hookJobs(q.store)).map((j) => j.idempotency_key)).toEqual([`hook:on-done:${a}:1:done`]);
    // A job's own hook names the job's batch too.
    expect((await hookJobs(q.store))[0]!.env.SPOOLCTL_HOOK_BATCH).toBe("ci-1");
    const inside = await q.store.write(async (tx) => {
      expect(await tx.recordAttempt(ending(q.store, b!, 1, "w2", "dead"))).toBe(true);
      return tx.listJobs({ queue: "hooks", limit: 50 });
    });
    const batchHook = inside.filter((j) => j.idempotency_key?.startsWith("hook:report:batch:"));
    expect(batchHook).toHaveLength(1);
    expect(batchHook[0]!.idempotency_key).toMatch(/^hook:report:batch:\d+:ci-1$/);
    expect(batchHook[0]!.batch).toBeNull();
    expect(batchHook[0]!.env).toMatchObject({
      MINE: "1",
      SPOOLCTL_HOOK_BATCH: "ci-1",
      SPOOLCTL_HOOK_STATE: "failed",
      SPOOLCTL_HOOK_BATCH_TOTAL: "2",
      SPOOLCTL_HOOK_BATCH_DONE: "1",
      SPOOLCTL_HOOK_BATCH_DEAD: "1",
      SPOOLCTL_HOOK_BATCH_CANCELED: "0",
    });
    // The hook's own job ending finishes no batch and adds nothing.
    const h = await claimOne(q.store, { workerId: "hw", queue: "hooks" });
    expect(await record(q.store, ending(q.store, h.job.id, 1, "hw", "done"))).toBe(true);
    expect(await hookJobs(q.store)).toHaveLength(2);
  });

  test("an empty sealed batch, and one sealed after its jobs ended, fire at the seal, once", async () => {
    await q.store.write(async (tx) => tx.recurring.addHook(hook("report")));
    await q.store.write(async (tx) => tx.sealBatch("empty", q.store.now()));
    await q.store.write(async (tx) => tx.sealBatch("empty", q.store.now()));
    let jobs = await hookJobs(q.store);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.env).toMatchObject({ SPOOLCTL_HOOK_BATCH: "empty", SPOOLCTL_HOOK_STATE: "done" });
    expect(jobs[0]!.env.SPOOLCTL_HOOK_BATCH_TOTAL).toBe("0");
    const [id] = await addTo(q.store, "open", 1, false);
    const { attempt } = await claimOne(q.store, { workerId: "w1", queue: "work" });
    expect(await record(q.store, ending(q.store, id!, attempt.attempt_no, "w1", "done"))).toBe(true);
    expect(await hookJobs(q.store)).toHaveLength(1); // not sealed: not finished
    await q.store.write(async (tx) => tx.sealBatch("open", q.store.now()));
    jobs = await hookJobs(q.store);
    expect(jobs.map((j) => j.env.SPOOLCTL_HOOK_BATCH)).toEqual(["empty", "open"]);
    expect(jobs[1]!.env).toMatchObject({ SPOOLCTL_HOOK_STATE: "done", SPOOLCTL_HOOK_BATCH_DONE: "1" });
  });

  test("two workers ending the last two jobs at once add the hook's job once", async () => {
    await q.store.write(async (tx) => tx.recurring.addHook(hook("report")));
    const [a, b] = await addTo(q.store, "pair", 2, true);
    const other = await openQueue(q.location, { create: true });
    try {
      await claimOne(q.store, { workerId: "w1", queue: "work" });
      await claimOne(q.store, { workerId: "w2", queue: "work" });
      const ends = [
        () => record(q.store, ending(q.store, a!, 1, "w1", "done")),
        () => record(other, ending(other, b!, 1, "w2", "done")),
      ];
      // SQLite's second BEGIN IMMEDIATE would wait in this very thread for the first to commit: one after the other there.
      const results =
        q.driver.name === "postgres"
          ? await Promise.all(ends.map((end) => end()))
          : [await ends[0]!(), await ends[1]!()];
      expect(results).toEqual([true, true]);
      const jobs = await hookJobs(q.store);
      expect(jobs).toHaveLength(1);
      expect(jobs[0]!.env).toMatchObject({ SPOOLCTL_HOOK_STATE: "done", SPOOLCTL_HOOK_BATCH_DONE: "2" });
    } finally {
      await other.close();
    }
  });

  // SQLite admits one writer (a second BEGIN IMMEDIATE waits in the same thread), so only PostgreSQL can interleave.
  test.skipIf(q.driver.name !== "postgres")(
    "an end that commits while the other end of the batch's last job waits on the batch row: the second one fires",
    async () => {
      await q.store.write(async (tx) => tx.recurring.addHook(hook("report")));
      const [a, b] = await addTo(q.store, "race", 2, true);
      await claimOne(q.store, { workerId: "w1", queue: "work" });
      await claimOne(q.store, { workerId: "w2", queue: "work" });
      const other = await openQueue(q.location, { create: true });
      try {
        let release!: () => void;
        const held = new Promise<void>((r) => (release = r));
        let entered!: () => void;
        const inside = new Promise<void>((r) => (entered = r));
        // Ends job a and holds its transaction open (with the batch row locked).
        const first = other.write(async (tx) => {
          const ok = await tx.recordAttempt(ending(other, a!, 1, "w1", "done"));
          entered();
          await held;
          return ok;
        });
        await inside;
        const second = record(q.store, ending(q.store, b!, 1, "w2", "dead"));
        await Bun.sleep(300); // (only to let the second end reach the lock; the assertion holds either way)
        release();
        expect(await first).toBe(true);
        expect(await second).toBe(true);
        const jobs = await hookJobs(q.store);
        expect(jobs).toHaveLength(1);
        expect(jobs[0]!.env).toMatchObject({ SPOOLCTL_HOOK_STATE: "failed", SPOOLCTL_HOOK_BATCH_DEAD: "1" });
      } finally {
        await other.close();
      }
    },
  );

  test("a fail-fast that cancels the batch's queued jobs finishes it: one hook job, the cancels counted", async () => {
    await q.store.write(async (tx) => tx.recurring.addHook(hook("report")));
    const jobs = await q.store.write(async (tx) =>
      tx.addJobs(
        [newJob({ queue: "work", priority: 9 }), newJob({ queue: "work" }), newJob({ queue: "work" })],
        q.store.now(),
        [],
        { name: "ff", failFast: "queued", seal: true },
      ),
    );
    const { job } = await claimOne(q.store, { workerId: "w1", queue: "work" });
    expect(job.id).toBe(jobs[0]!.id);
    expect(await record(q.store, ending(q.store, job.id, 1, "w1", "dead"))).toBe(true);
    const hooks = await hookJobs(q.store);
    expect(hooks).toHaveLength(1);
    expect(hooks[0]!.env).toMatchObject({
      SPOOLCTL_HOOK_STATE: "failed",
      SPOOLCTL_HOOK_BATCH_TOTAL: "3",
      SPOOLCTL_HOOK_BATCH_DEAD: "1",
      SPOOLCTL_HOOK_BATCH_CANCELED: "2",
    });
  });

  test("deleting a sealed batch's last unfinished jobs finishes it: one hook job, for the jobs left", async () => {
    await q.store.write(async (tx) => tx.recurring.addHook(hook("report")));
    const [first, ...rest] = await addTo(q.store, "del", 3, true);
    const { job } = await claimOne(q.store, { workerId: "w1", queue: "work" });
    expect(job.id).toBe(first!);
    expect(await record(q.store, ending(q.store, job.id, 1, "w1", "done"))).toBe(true);
    expect(await hookJobs(q.store)).toHaveLength(0); // two jobs still queued
    const out = await q.store.write(async (tx) => tx.deleteJobs(rest, { queued: true }));
    expect(out.jobs).toBe(2);
    const hooks = await hookJobs(q.store);
    expect(hooks).toHaveLength(1);
    expect(hooks[0]!.env).toMatchObject({
      SPOOLCTL_HOOK_BATCH: "del",
      SPOOLCTL_HOOK_STATE: "done",
      SPOOLCTL_HOOK_BATCH_TOTAL: "1",
    });
  });

  test("a batch reopened by a retry fires again when it finishes again", async () => {
    await q.store.write(async (tx) => tx.recurring.addHook(hook("report")));
    const [id] = await addTo(q.store, "again", 1, true);
    await claimOne(q.store, { workerId: "w1", queue: "work" });
    expect(await record(q.store, ending(q.store, id!, 1, "w1", "dead"))).toBe(true);
    expect(await q.store.write(async (tx) => tx.requeueJobs([id!], ["dead"], q.store.now()))).toEqual([id!]);
    const { attempt } = await claimOne(q.store, { workerId: "w1", queue: "work" });
    expect(await record(q.store, ending(q.store, id!, attempt.attempt_no, "w1", "done"))).toBe(true);
    const jobs = await hookJobs(q.store);
    expect(jobs.map((j) => j.env.SPOOLCTL_HOOK_STATE)).toEqual(["failed", "done"]);
    expect(new Set(jobs.map((j) => j.idempotency_key)).size).toBe(2);
  });
});
