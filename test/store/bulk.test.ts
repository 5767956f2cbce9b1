/**
 * The batch forms (docs/architecture.md "Retry", "Cancel"): `retry --all`
 * requeues in SQL (requeueMatching: filter and guard in the UPDATE's WHERE)
 * and `cancel` of several jobs is one statement (cancelMany). The guard cases
 * fail if the statement changed a job that left its state meanwhile.
 */
import { expect, test } from "bun:test";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Job, JobNeeds, NewJob } from "../../src/model/job.ts";
import type { Store } from "../../src/store/store.ts";
import { cancelJobs } from "../../src/store/verbs/cancel.ts";
import { retryJobs } from "../../src/store/verbs/retry.ts";
import {
  attemptRecord,
  claimOne,
  endedJob,
  forEachDriver,
  insertJob,
  jobOf,
  newJob,
  pollUntil,
  record,
} from "../support/store.ts";
import { childScript, raceChildren } from "./children.ts";

/** The `event:detail` rows of job `id`'s ledger. */
async function ledger(store: Store, id: number): Promise<string[]> {
  return (await store.read(async (tx) => tx.eventsOf(id))).map((e) => `${e.event}:${e.detail ?? ""}`);
}

/** Adds jobs with needs in one write (`needs[i]` of `jobs[i]`). */
function add(store: Store, jobs: Partial<NewJob>[], needs: (Partial<JobNeeds> | undefined)[] = []): Promise<Job[]> {
  return store.write((tx) =>
    tx.addJobs(
      jobs.map((j) => newJob(j)),
      store.now(),
      needs.map((n) => (n ? { ids: [], earlier: [], policy: "success", ...n } : undefined)),
    ),
  );
}

/** Claims the next job of lane `queue` and records it ended in `jobState`; its id. */
async function endIn(store: Store, queue: string, jobState: "dead" | "done"): Promise<number> {
  const { job } = await claimOne(store, { queue, workerId: "w1" });
  const rec = attemptRecord(job.id, 1, "w1", store.now(), {
    attemptState: jobState === "done" ? "succeeded" : "failed",
    exitCode: jobState === "done" ? 0 : 1,
    jobState,
  });
  expect(await record(store, rec)).toBe(true);
  return job.id;
}

forEachDriver("retry --all in SQL", (q) => {
  test("requeues the matching dead and canceled jobs, one retried row each, from its own state", async () => {
    await insertJob(q.store, { queue: "x" });
    const dead = await endIn(q.store, "x", "dead");
    const canceled = await insertJob(q.store, { queue: "x" });
    await cancelJobs(q.store, [String(canceled.id)], false);
    await insertJob(q.store, { queue: "x" });
    const done = await endIn(q.store, "x", "done");
    await insertJob(q.store, { queue: "y" });
    const other = await endIn(q.store, "y", "dead");
    const queued = await insertJob(q.store, { queue: "x" });
    const out = await retryJobs(
      q.store,
      { filter: { queue: "x", states: ["dead", "canceled", "done"] } },
      { force: false },
    );
    expect(out).toEqual({ jobs: [dead, canceled.id].map((id) => ({ job_id: id, state: "queued" })), skipped: [] });
    expect((await ledger(q.store, dead)).at(-1)).toBe('retried:{"from":"dead"}');
    expect((await ledger(q.store, canceled.id)).at(-1)).toBe('retried:{"from":"canceled"}');
    expect(await jobOf(q.store, dead)).toMatchObject({ state: "queued", attempts: 0, finished_at: null });
    expect((await jobOf(q.store, done)).state).toBe("done");
    expect((await jobOf(q.store, other)).state).toBe("dead");
    expect((await jobOf(q.store, queued.id)).state).toBe("queued");
  });

  test("per key only the newest job whose key is free; a key an active job holds is skipped", async () => {
    const older = await endedJob(q.store, "dead", { idempotency_key: "k" });
    const newer = await endedJob(q.store, "dead", { idempotency_key: "k" });
    const heldDead = await endedJob(q.store, "dead", { idempotency_key: "h" });
    const holder = await insertJob(q.store, { idempotency_key: "h" });
    const out = await retryJobs(q.store, { filter: { states: ["dead"] } }, { force: false });
    expect(out.jobs.map((j) => j.job_id)).toEqual([newer]);
    expect(out.skipped).toEqual([
      { job_id: older, key: "k", holder_id: newer },
      { job_id: heldDead, key: "h", holder_id: holder.id },
    ]);
    expect((await jobOf(q.store, older)).state).toBe("dead");
    expect((await jobOf(q.store, heldDead)).state).toBe("dead");
  });

  test("a job whose need is dead and not retried with it is blocked; retried with it, both go", async () => {
    const [need] = await add(q.store, [{ queue: "n" }]);
    const [dep] = await add(q.store, [{ queue: "d" }], [{ ids: [need!.id] }]);
    await endIn(q.store, "n", "dead");
    expect((await jobOf(q.store, dep!.id)).state).toBe("canceled"); // closed by its need's failure
    const alone = await retryJobs(q.store, { filter: { queue: "d", states: ["canceled"] } }, { force: false });
    expect(alone).toEqual({
      jobs: [],
      skipped: [],
      blocked: [{ job_id: dep!.id, need_id: need!.id, need_state: "dead" }],
    });
    expect((await jobOf(q.store, dep!.id)).state).toBe("canceled");
    const both = await retryJobs(q.store, { filter: { states: ["dead", "canceled"] } }, { force: false });
    expect(both.jobs.map((j) => j.job_id)).toEqual([need!.id, dep!.id]);
    expect(both.blocked).toBeUndefined();
    expect((await jobOf(q.store, dep!.id)).needs_left).toBe(1);
  });

  test("the guard: requeueMatching without a state filter still takes only dead and canceled jobs", async () => {
    const dead = await endedJob(q.store, "dead");
    const done = await endedJob(q.store, "done");
    const excluded = await endedJob(q.store, "dead");
    const running = await insertJob(q.store);
    await claimOne(q.store, { workerId: "w2" });
    const queued = await insertJob(q.store);
    const now = q.store.now();
    expect(await q.store.write(async (tx) => tx.requeueMatching({}, [excluded], now))).toEqual([dead]);
    expect((await jobOf(q.store, done)).state).toBe("done");
    expect((await jobOf(q.store, excluded)).state).toBe("dead");
    expect(await jobOf(q.store, running.id)).toMatchObject({ state: "running", locked_by: "w2" });
    expect((await ledger(q.store, queued.id)).filter((e) => e.startsWith("retried"))).toEqual([]);
  });

  test("a job that leaves dead while the UPDATE waits for it is not retried", async () => {
    const a = await endedJob(q.store, "dead");
    const b = await endedJob(q.store, "dead");
    const held = join(mkdtempSync(join(tmpdir(), "spoolctl-held-")), "held");
    let out: Awaited<ReturnType<typeof retryJobs>> | null = null;
    // Another process reruns b (dead → queued) and holds its row (PostgreSQL) or the write lock (SQLite) a while.
    await raceChildren(
      childScript("locker.ts"),
      q.location,
      [["--job", String(b), "--ms", "2000", "--held", held, "--rerun"]],
      {
        duringRace: async () => {
          await pollUntil("the locker to hold its lock", async () => existsSync(held), 30_000, 5);
          out = await retryJobs(q.store, { filter: { states: ["dead"] } }, { force: false });
        },
      },
    );
    expect(out!.jobs.map((j) => j.job_id)).toEqual([a]);
    expect((await ledger(q.store, b)).filter((e) => e.startsWith("retried"))).toEqual([
      'retried:{"from":"dead","rerun":true}',
    ]);
  });
});

forEachDriver("cancel of several jobs in one statement", (q) => {
  test("queued jobs canceled, running ones flagged, one ledger row each in the order named", async () => {
    const a = await insertJob(q.store);
    const b = await insertJob(q.store);
    const running = await insertJob(q.store, { queue: "r" });
    await claimOne(q.store, { queue: "r", workerId: "w1" });
    const out = await cancelJobs(q.store, [String(b.id), String(running.id), String(a.id)], true);
    expect(out.jobs).toEqual([
      { job_id: b.id, state: "canceled", was_running: false },
      { job_id: running.id, state: "running", was_running: true },
      { job_id: a.id, state: "canceled", was_running: false },
    ]);
    expect((await jobOf(q.store, a.id)).state).toBe("canceled");
    expect(await jobOf(q.store, running.id)).toMatchObject({ state: "running", cancel_requested: true });
    expect((await ledger(q.store, b.id)).at(-1)).toBe('canceled:{"from":"queued"}');
    expect((await ledger(q.store, running.id)).at(-1)).toBe('cancel_requested:{"attempt":1,"worker":"w1"}');
    // Asked again: nothing new for the running job.
    await cancelJobs(q.store, [String(running.id)], true);
    expect((await ledger(q.store, running.id)).filter((e) => e.startsWith("cancel_requested"))).toHaveLength(1);
  });

  test("the guard: a running job given as queued is not canceled, a queued one given as running not flagged", async () => {
    const queued = await insertJob(q.store);
    const running = await insertJob(q.store, { queue: "r" });
    await claimOne(q.store, { queue: "r", workerId: "w1" });
    const now = q.store.now();
    const out = await q.store.write(async (tx) => tx.cancelMany([running.id], [queued.id], now));
    expect(out).toEqual({ canceled: [], requested: [], closed: [] });
    expect(await jobOf(q.store, running.id)).toMatchObject({ state: "running", cancel_requested: false });
    expect(await jobOf(q.store, queued.id)).toMatchObject({ state: "queued", cancel_requested: false });
    const both = await q.store.write(async (tx) => tx.cancelMany([queued.id], [running.id], now));
    expect(both).toEqual({ canceled: [queued.id], requested: [running.id], closed: [] });
    expect(await jobOf(q.store, queued.id)).toMatchObject({ state: "canceled", finished_at: now });
  });
});
