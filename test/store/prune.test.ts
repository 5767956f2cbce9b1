/**
 * Pruning: pruneCandidates, historyCounts and deleteJobs, which never delete a
 * queued or running job whatever they are asked.
 */
import { expect, test } from "bun:test";
import type { Job } from "../../src/model/job.ts";
import type { Store } from "../../src/store/store.ts";
import { attemptRecord, claim, forEachDriver, newJob, record } from "../support/store.ts";

interface Scene {
  t0: number;
  done1: Job;
  done2: Job;
  dead: Job;
  canceled: Job;
  queued: Job;
  running: Job;
}

/**
 * Six jobs, each with an `added` event: done1 (finished t0+10), done2 (t0+20),
 * dead (t0+30), canceled (t0+40), one still queued and one running.
 */
async function scene(store: Store): Promise<Scene> {
  const t0 = store.now() - 1000;
  const [done1, done2, dead, running, canceled, queued] = await store.write(async (tx) => {
    const out: Job[] = [];
    for (const priority of [6, 5, 4, 3, 2, 1]) {
      const job = await tx.insertJob(newJob({ priority, next_run_at: t0 }), t0);
      await tx.appendEvent(job.id, "added", null, null, t0);
      out.push(job);
    }
    return out;
  });
  expect(await claim(store, { workerId: "w1", limit: 4, now: t0 + 5 })).toHaveLength(4);
  expect(await record(store, attemptRecord(done1!.id, 1, "w1", t0 + 10))).toBe(true);
  expect(await record(store, attemptRecord(done2!.id, 1, "w1", t0 + 20))).toBe(true);
  const deadRec = attemptRecord(dead!.id, 1, "w1", t0 + 30, {
    attemptState: "failed",
    exitCode: 1,
    failureReason: "process_exit",
    jobState: "dead",
    attempts: 1,
    events: [
      { event: "failed", workerId: "w1", detail: null },
      { event: "dead", workerId: "w1", detail: null },
    ],
  });
  expect(await record(store, deadRec)).toBe(true);
  expect(await store.write(async (tx) => tx.cancelQueuedJob(canceled!.id, t0 + 40))).toBe(true);
  return { t0, done1: done1!, done2: done2!, dead: dead!, canceled: canceled!, queued: queued!, running: running! };
}

forEachDriver("prune", (q) => {
  const candidates = async (states: Job["state"][], before: number) =>
    (await q.store.read(async (tx) => tx.pruneCandidates(states, before))).map((j) => j.id);

  test("pruneCandidates: terminal jobs of the given states finished before the cutoff, oldest first", async () => {
    const s = await scene(q.store);
    expect(await candidates(["done", "dead", "canceled"], s.t0 + 100)).toEqual([
      s.done1.id,
      s.done2.id,
      s.dead.id,
      s.canceled.id,
    ]);
    expect(await candidates(["done"], s.t0 + 100)).toEqual([s.done1.id, s.done2.id]);
    expect(await candidates(["done"], s.t0 + 15)).toEqual([s.done1.id]);
    expect(await candidates(["done"], s.t0 + 10)).toEqual([]); // strictly before
    expect(await candidates(["dead", "canceled"], s.t0 + 35)).toEqual([s.dead.id]);
    expect(await candidates([], s.t0 + 100)).toEqual([]);
    const rows = await q.store.read(async (tx) => tx.pruneCandidates(["canceled"], s.t0 + 100));
    expect(rows[0]).toMatchObject({ id: s.canceled.id, state: "canceled", finished_at: s.t0 + 40 });
  });

  test("pruneCandidates never returns queued or running jobs, even when asked for them", async () => {
    const s = await scene(q.store);
    const future = q.store.now() + 10 * 86400;
    expect(await candidates(["queued", "running"], future)).toEqual([]);
    expect(await candidates(["queued", "running", "done"], future)).toEqual([s.done1.id, s.done2.id]);
  });

  test("historyCounts counts attempt and ledger rows of the given jobs", async () => {
    const s = await scene(q.store);
    expect(await q.store.read(async (tx) => tx.historyCounts([]))).toEqual({ attempts: 0, events: 0 });
    expect(await q.store.read(async (tx) => tx.historyCounts([s.done1.id]))).toEqual({ attempts: 1, events: 3 });
    expect(await q.store.read(async (tx) => tx.historyCounts([s.dead.id, s.canceled.id]))).toEqual({
      attempts: 1,
      events: 5,
    });
    const all = [s.done1, s.done2, s.dead, s.canceled, s.queued, s.running].map((j) => j.id);
    // added x6, claimed x4, succeeded x2, failed + dead.
    expect(await q.store.read(async (tx) => tx.historyCounts([...all, 99_999]))).toEqual({ attempts: 4, events: 14 });
  });

  test("deleteJobs deletes terminal jobs with their attempts and ledger rows, and skips queued and running ones", async () => {
    const s = await scene(q.store);
    const all = [s.done1, s.done2, s.dead, s.canceled, s.queued, s.running].map((j) => j.id);
    const counts = await q.store.write(async (tx) => tx.deleteJobs([...all, 99_999]));
    expect(counts).toEqual({ jobs: 4, attempts: 3, events: 11, closed: [] });
    const left = await q.store.read(async (tx) => tx.listJobs({ limit: 100 }));
    expect(left.map((j) => [j.id, j.state])).toEqual([
      [s.queued.id, "queued"],
      [s.running.id, "running"],
    ]);
    for (const gone of [s.done1, s.done2, s.dead, s.canceled]) {
      const rows = await q.store.read(async (tx) => ({
        job: await tx.getJob(gone.id),
        attempts: await tx.attemptsOf(gone.id),
        events: await tx.eventsOf(gone.id),
      }));
      expect(rows).toEqual({ job: null, attempts: [], events: [] });
    }
    expect(await q.store.read(async (tx) => tx.historyCounts([s.queued.id, s.running.id]))).toEqual({
      attempts: 1,
      events: 3,
    });
    const byState = Object.fromEntries(
      (await q.store.read(async (tx) => tx.countByStateAndLane())).filter((c) => c.n > 0).map((c) => [c.state, c.n]),
    );
    expect(byState).toEqual({ queued: 1, running: 1 });
  });

  test("deleteJobs of only queued and running jobs deletes nothing", async () => {
    const s = await scene(q.store);
    expect(await q.store.write(async (tx) => tx.deleteJobs([s.queued.id, s.running.id]))).toEqual({
      jobs: 0,
      attempts: 0,
      events: 0,
      closed: [],
    });
    expect(await q.store.write(async (tx) => tx.deleteJobs([]))).toEqual({
      jobs: 0,
      attempts: 0,
      events: 0,
      closed: [],
    });
    expect(await q.store.read(async (tx) => tx.listJobs({ limit: 100 }))).toHaveLength(6);
  });
});
