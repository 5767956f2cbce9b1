/**
 * The transaction that ends a job runs every effect of that end, whichever
 * feature ended it (docs/architecture.md "Dependencies", "Batches", "Hooks"):
 * a batch's fail-fast cancels its queued jobs, and those cancels close their
 * own dependents (need_failed) and add their `canceled` hooks in the same
 * commit, so no dependent waits on a job fail-fast canceled.
 */
import { expect, test } from "bun:test";
import type { BatchAdd, Job, JobNeeds, NewJob } from "../../src/model/job.ts";
import type { Store } from "../../src/store/store.ts";
import { attemptRecord, claimOne, forEachDriver, jobOf, newJob, record } from "../support/store.ts";

function add(store: Store, job: Partial<NewJob>, needs?: Partial<JobNeeds>, batch?: BatchAdd): Promise<Job> {
  return store
    .write((tx) =>
      tx.addJobs(
        [newJob(job)],
        store.now(),
        [needs ? { ids: [], earlier: [], policy: "success", ...needs } : undefined],
        batch ?? null,
      ),
    )
    .then((jobs) => jobs[0]!);
}

forEachDriver("job ended", (q) => {
  test("a fail-fast cancel closes the canceled job's dependents and adds its canceled hooks, in one commit", async () => {
    const batch = (seal = false): BatchAdd => ({ name: "ci", failFast: "queued", seal });
    const failing = await add(q.store, { priority: 9 }, undefined, batch());
    const later = await add(q.store, { next_run_at: q.store.now() + 3600 }, undefined, batch(true));
    const dependent = await add(q.store, {}, { ids: [later.id] });
    const template = { argv: ["true"], priority: 0, queue: "hooks", timeout_seconds: 60, max_retries: 0 };
    const job0 = { ...template, max_crashes: null, tags: {}, note: null, cwd: null, env: {} };
    await q.store.write((tx) =>
      tx.recurring.addHook({
        name: "on-cancel",
        on_outcome: "canceled",
        match_queue: null,
        match_tag_key: null,
        match_tag_value: null,
        job: job0,
        created_at: 0,
      }),
    );
    const { job, attempt } = await claimOne(q.store);
    expect(job.id).toBe(failing.id);
    const rec = attemptRecord(job.id, attempt.attempt_no, "w1", q.store.now(), {
      jobState: "dead",
      attemptState: "failed",
      exitCode: 1,
    });
    expect(await record(q.store, rec)).toBe(true);
    expect((await jobOf(q.store, later.id)).state).toBe("canceled");
    const closed = await jobOf(q.store, dependent.id);
    expect(closed.state).toBe("canceled");
    expect(closed.last_error).toContain("need_failed");
    const hooks = await q.store.read((tx) => tx.listJobs({ queue: "hooks", limit: 10 }));
    const keys = hooks.map((h) => h.idempotency_key ?? "");
    expect(keys.filter((k) => k.startsWith(`hook:on-cancel:${later.id}:`))).toHaveLength(1);
    expect(keys.filter((k) => k.startsWith(`hook:on-cancel:${dependent.id}:`))).toHaveLength(1);
  });
});
