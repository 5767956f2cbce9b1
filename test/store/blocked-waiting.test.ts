/**
 * The `blockedWaiting` read (src/store/reader.ts): the queued dependents of a
 * lane that count in its `drainState().waiting`, what a drain judges when only
 * dependents hold it (docs/architecture.md "Drain"), on both drivers.
 */
import { expect, test } from "bun:test";
import type { Job, JobNeeds, NewJob } from "../../src/model/job.ts";
import type { Store } from "../../src/store/store.ts";
import { claimOne, forEachDriver, newJob } from "../support/store.ts";

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

const ids = (jobs: Job[]) => jobs.map((j) => j.id);

forEachDriver("blockedWaiting", (q) => {
  test("only the lane's queued dependents that hold its drain, oldest first, at most limit", async () => {
    const now = q.store.now();
    const [need, plain] = await add(q.store, [{ next_run_at: now + 3600 }, {}]);
    const deps = await add(
      q.store,
      [{}, {}, { queue: "other" }, { next_run_at: now + 3600 }, {}],
      [{ ids: [need!.id] }, { ids: [need!.id] }, { ids: [need!.id] }, { ids: [need!.id] }, { ids: [need!.id] }],
    );
    const [d1, d2, dOther, dDelayed, d5] = deps;
    const blocked = await q.store.read((tx) => tx.blockedWaiting("default", now, 100));
    // Not the need (no needs), not the plain job, not the other lane's, not the one delayed by its adder.
    expect(ids(blocked)).toEqual([d1!.id, d2!.id, d5!.id]);
    expect(blocked.every((j) => j.state === "queued" && j.needs_left === 1)).toBe(true);
    expect(ids(await q.store.read((tx) => tx.blockedWaiting("default", now, 2)))).toEqual([d1!.id, d2!.id]);
    expect(ids(await q.store.read((tx) => tx.blockedWaiting("other", now, 100)))).toEqual([dOther!.id]);
    expect(await q.store.read((tx) => tx.blockedWaiting("nowhere", now, 100))).toEqual([]);
    // They are what drainState counts as waiting, beside the due plain job.
    const state = await q.store.read((tx) => tx.drainState("default", now));
    expect(state.waiting).toBe(4);
    // Once its delay is over, the delayed dependent counts too.
    expect(ids(await q.store.read((tx) => tx.blockedWaiting("default", now + 7200, 100)))).toEqual([
      d1!.id,
      d2!.id,
      dDelayed!.id,
      d5!.id,
    ]);
    expect(plain!.needs_left).toBe(0);
  });

  test("a running need is not listed; its queued dependent still is", async () => {
    const now = q.store.now();
    const [need] = await add(q.store, [{ priority: 9 }]);
    const [dep] = await add(q.store, [{}], [{ ids: [need!.id] }]);
    const { job } = await claimOne(q.store, { workerId: "w1", now });
    expect(job.id).toBe(need!.id);
    expect(ids(await q.store.read((tx) => tx.blockedWaiting("default", now, 100)))).toEqual([dep!.id]);
  });
});
