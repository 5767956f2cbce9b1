/**
 * Dependencies in the store (docs/architecture.md "Dependencies"): addJobs with
 * needs, the claim's needs_left rule, the job-ended hook (met needs counted
 * down, dependents of a failed need closed down the chain, on every path that
 * ends a job), reviveDependents, unmetNeeds; and 8 racing claimant processes
 * over a graph never claiming a dependent before its need's success committed.
 */
import { expect, test } from "bun:test";
import type { Job, JobNeeds, NewJob } from "../../src/model/job.ts";
import type { Store } from "../../src/store/store.ts";
import { attemptRecord, claim, claimOne, forEachDriver, jobOf, newJob, record, sorted } from "../support/store.ts";
import { childScript, raceChildren } from "./children.ts";

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

/** Claims the next job and records it `done` (or `dead`). */
async function runNext(store: Store, end: "done" | "dead" = "done"): Promise<number> {
  const { job, attempt } = await claimOne(store);
  const rec = attemptRecord(job.id, attempt.attempt_no, "w1", store.now(), {
    jobState: end,
    attemptState: end === "done" ? "succeeded" : "failed",
    exitCode: end === "done" ? 0 : 1,
  });
  expect(await record(store, rec)).toBe(true);
  return job.id;
}

const claimedIds = async (store: Store) => (await claim(store, { limit: 100 })).map((c) => c.job.id);

forEachDriver("needs", (q) => {
  test("addJobs counts unmet needs; the claim skips a job until its last need is done", async () => {
    const [a, b] = await add(q.store, [{}, {}]);
    const [c] = await add(q.store, [{ priority: 9 }], [{ ids: [a!.id, b!.id] }]);
    expect(c!.needs_left).toBe(2);
    expect(await q.store.read((tx) => tx.unmetNeeds([c!.id, a!.id]))).toEqual(new Map([[c!.id, [a!.id, b!.id]]]));
    // c has the highest priority but waits: a and b come first.
    expect(await runNext(q.store)).toBe(a!.id);
    expect((await jobOf(q.store, c!.id)).needs_left).toBe(1);
    expect(await runNext(q.store)).toBe(b!.id);
    expect((await jobOf(q.store, c!.id)).needs_left).toBe(0);
    expect(await q.store.read((tx) => tx.unmetNeeds([c!.id]))).toEqual(new Map());
    expect(await runNext(q.store)).toBe(c!.id);
  });

  test("a met need run again (rerun, retry) holds its queued dependents back until it ends again", async () => {
    const [a, b] = await add(q.store, [{ priority: 9 }, {}]);
    const [c] = await add(q.store, [{}], [{ ids: [a!.id, b!.id] }]);
    const [d] = await add(q.store, [{}], [{ ids: [a!.id], policy: "done" }]);
    expect(await runNext(q.store)).toBe(a!.id);
    expect((await jobOf(q.store, c!.id)).needs_left).toBe(1);
    expect((await jobOf(q.store, d!.id)).needs_left).toBe(0);
    // a runs again: c and d wait for its new outcome; b is not involved.
    expect(await q.store.write((tx) => tx.rerunJob(a!.id, q.store.now(), q.store.now()))).toBe("done");
    expect((await jobOf(q.store, c!.id)).needs_left).toBe(2);
    expect((await jobOf(q.store, d!.id)).needs_left).toBe(1);
    expect(await q.store.read((tx) => tx.unmetNeeds([c!.id, d!.id]))).toEqual(
      new Map([
        [c!.id, [a!.id, b!.id]],
        [d!.id, [a!.id]],
      ]),
    );
    expect(await runNext(q.store, "dead")).toBe(a!.id); // c is closed (need failed); d (policy done) is free
    expect((await jobOf(q.store, c!.id)).state).toBe("canceled");
    expect((await jobOf(q.store, d!.id)).needs_left).toBe(0);
    // A retry of the dead need holds d back again, as it is queued still.
    expect(await q.store.write((tx) => tx.requeueJobs([a!.id], ["dead"], q.store.now()))).toEqual([a!.id]);
    expect((await jobOf(q.store, d!.id)).needs_left).toBe(1);
    expect(await claimedIds(q.store)).toEqual([a!.id, b!.id]);
  });

  test("needs on earlier jobs of the same add, and on a job already done, which is met at once", async () => {
    const [done] = await add(q.store, [{}]);
    await runNext(q.store);
    const [x, y, z] = await add(
      q.store,
      [{}, {}, {}],
      [undefined, { earlier: [0], ids: [done!.id] }, { earlier: [0, 1] }],
    );
    expect([x!.needs_left, y!.needs_left, z!.needs_left]).toEqual([0, 1, 2]);
    expect(await claimedIds(q.store)).toEqual([x!.id]);
  });

  test("an unknown need, or a dead one that must succeed, is INVALID_INPUT and adds nothing; policy done takes a dead need as met", async () => {
    const [dead] = await add(q.store, [{}]);
    await runNext(q.store, "dead");
    const before = await q.store.read((tx) => tx.listJobs({ limit: 100 }));
    await expect(add(q.store, [{}, {}], [undefined, { ids: [999_999] }])).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    await expect(add(q.store, [{}], [{ ids: [dead!.id] }])).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining(`job ${dead!.id} is dead`),
    });
    expect(await q.store.read((tx) => tx.listJobs({ limit: 100 }))).toEqual(before);
    const [ok] = await add(q.store, [{}], [{ ids: [dead!.id], policy: "done" }]);
    expect(ok!.needs_left).toBe(0);
  });

  test("a need that ends dead closes its dependents down the chain, in its own transaction; policy done runs on", async () => {
    const [a] = await add(q.store, [{ priority: 9 }]);
    const [b, c, d] = await add(
      q.store,
      [{}, {}, {}],
      [{ ids: [a!.id] }, { earlier: [0] }, { ids: [a!.id], policy: "done" }],
    );
    expect(await runNext(q.store, "dead")).toBe(a!.id);
    for (const [id, need] of [
      [b!.id, a!.id],
      [c!.id, b!.id],
    ] as const) {
      const job = await jobOf(q.store, id);
      expect(job.state).toBe("canceled");
      expect(job.last_error).toBe(`need_failed: job ${need} ended ${need === a!.id ? "dead" : "canceled"}`);
      const events = await q.store.read((tx) => tx.eventsOf(id));
      expect(events.at(-1)).toMatchObject({ event: "canceled" });
      expect(JSON.parse(events.at(-1)!.detail!)).toMatchObject({ reason: "need_failed", need });
    }
    // d ran once a ended, however it ended.
    expect((await jobOf(q.store, d!.id)).needs_left).toBe(0);
    expect(await claimedIds(q.store)).toEqual([d!.id]);
  });

  test("cancelQueuedJob, cancelMany and delete of a queued need close its dependents too, naming them", async () => {
    const [a, b, e] = await add(q.store, [{}, {}, {}]);
    const [c, d, f] = await add(q.store, [{}, {}, {}], [{ ids: [a!.id] }, { ids: [b!.id] }, { ids: [e!.id] }]);
    const [g] = await add(q.store, [{}], [{ ids: [f!.id] }]);
    expect(await q.store.write((tx) => tx.cancelQueuedJob(a!.id, q.store.now()))).toBe(true);
    expect((await jobOf(q.store, c!.id)).state).toBe("canceled");
    const deleted = await q.store.write((tx) => tx.deleteJobs([b!.id], { queued: true }));
    expect(deleted).toMatchObject({ jobs: 1, closed: [d!.id] });
    expect((await jobOf(q.store, d!.id)).state).toBe("canceled");
    expect((await jobOf(q.store, d!.id)).last_error).toBe(
      `need_failed: need deleted: job ${b!.id} was deleted before it ran`,
    );
    // Down the chain: e's cancel closes f, whose end closes g.
    const canceled = await q.store.write((tx) => tx.cancelMany([e!.id], [], q.store.now()));
    expect(canceled).toEqual({ canceled: [e!.id], requested: [], closed: [f!.id, g!.id] });
    expect((await q.store.write((tx) => tx.deleteJobs([c!.id]))).closed).toEqual([]);
  });

  test("reviveDependents after a retry of the failed need: the chain is queued again, waiting; one with another failed need stays closed", async () => {
    const [a, other] = await add(q.store, [{ priority: 9 }, { priority: 8 }]);
    const [b, c, d] = await add(
      q.store,
      [{}, {}, {}],
      [{ ids: [a!.id] }, { earlier: [0] }, { ids: [a!.id, other!.id] }],
    );
    expect(await runNext(q.store, "dead")).toBe(a!.id);
    expect(await runNext(q.store, "dead")).toBe(other!.id);
    expect((await jobOf(q.store, d!.id)).state).toBe("canceled");
    const revived = await q.store.write(async (tx) => {
      expect(await tx.requeueJob(a!.id, "dead", q.store.now())).toBe(true);
      return tx.reviveDependents([a!.id], q.store.now());
    });
    expect(sorted(revived)).toEqual([b!.id, c!.id]);
    expect(await jobOf(q.store, b!.id)).toMatchObject({ state: "queued", needs_left: 1, last_error: null });
    expect(await jobOf(q.store, c!.id)).toMatchObject({ state: "queued", needs_left: 1 });
    expect((await jobOf(q.store, d!.id)).state).toBe("canceled");
    const events = await q.store.read((tx) => tx.eventsOf(b!.id));
    expect(JSON.parse(events.at(-1)!.detail!)).toMatchObject({ from: "canceled", reason: "need_retried", need: a!.id });
    // Now in order: a, then b, then c.
    expect(await claimedIds(q.store)).toEqual([a!.id]);
    await record(q.store, attemptRecord(a!.id, 2, "w1", q.store.now()));
    expect(await runNext(q.store)).toBe(b!.id);
    expect(await runNext(q.store)).toBe(c!.id);
  });

  test("retry revives a dependent that needs both the failed job and one of its dependents (build, test, deploy)", async () => {
    const [build] = await add(q.store, [{ priority: 9 }]);
    const [test, deploy, after] = await add(
      q.store,
      [{}, {}, {}],
      [{ ids: [build!.id] }, { ids: [build!.id], earlier: [0] }, { earlier: [1] }],
    );
    expect(await runNext(q.store, "dead")).toBe(build!.id);
    for (const j of [test, deploy, after]) expect((await jobOf(q.store, j!.id)).state).toBe("canceled");
    const revived = await q.store.write(async (tx) => {
      expect(await tx.requeueJob(build!.id, "dead", q.store.now())).toBe(true);
      return tx.reviveDependents([build!.id], q.store.now());
    });
    expect(sorted(revived)).toEqual([test!.id, deploy!.id, after!.id]);
    expect(await jobOf(q.store, deploy!.id)).toMatchObject({ state: "queued", needs_left: 2 });
    expect(await jobOf(q.store, after!.id)).toMatchObject({ state: "queued", needs_left: 1 });
  });

  test("a dependent that lost a need (deleted before it was met) is neither revived nor retried by --all", async () => {
    const [a, gone] = await add(q.store, [{ priority: 9 }, { queue: "held" }]);
    const [b] = await add(q.store, [{}], [{ ids: [a!.id, gone!.id] }]);
    expect(await runNext(q.store, "dead")).toBe(a!.id);
    expect((await jobOf(q.store, b!.id)).state).toBe("canceled");
    // The other need goes while b is closed: its edge with it; b still counts 2 unmet needs, 1 edge left.
    expect((await q.store.write((tx) => tx.deleteJobs([gone!.id], { queued: true }))).jobs).toBe(1);
    expect((await jobOf(q.store, b!.id)).needs_left).toBe(2);
    expect(await q.store.read((tx) => tx.unmetNeeds([b!.id]))).toEqual(new Map([[b!.id, [a!.id]]]));
    const rows = await q.store.write((tx) => tx.retryNeedRows({}));
    expect(rows).toEqual([
      { job_id: b!.id, need_id: null, need_state: "deleted", need_matches: false },
      { job_id: b!.id, need_id: a!.id, need_state: "dead", need_matches: true },
    ]);
    const revived = await q.store.write(async (tx) => {
      expect(await tx.requeueJob(a!.id, "dead", q.store.now())).toBe(true);
      return tx.reviveDependents([a!.id], q.store.now());
    });
    expect(revived).toEqual([]);
    expect((await jobOf(q.store, b!.id)).state).toBe("canceled");
  });

  test("race: 8 claimant processes over a graph never claim a dependent before its need's success committed", async () => {
    // 6 chains of 6 jobs, a fan-in job needing every chain's end, and a fan-out of 8 after it.
    const jobs: Partial<NewJob>[] = [];
    const needs: (Partial<JobNeeds> | undefined)[] = [];
    const ends: number[] = [];
    for (let chain = 0; chain < 6; chain++)
      for (let k = 0; k < 6; k++) {
        jobs.push({ priority: 6 - k });
        needs.push(k === 0 ? undefined : { earlier: [jobs.length - 2] });
        if (k === 5) ends.push(jobs.length - 1);
      }
    jobs.push({ priority: 100 });
    needs.push({ earlier: ends });
    const fanIn = jobs.length - 1;
    for (let k = 0; k < 8; k++) {
      jobs.push({ priority: 100 });
      needs.push({ earlier: [fanIn] });
    }
    const added = await add(q.store, jobs, needs);
    const results = await raceChildren<{ claimed: number[] }>(
      childScript("needs-claimant.ts"),
      q.location,
      Array.from({ length: 8 }, () => ["--total", String(added.length)]),
    );
    const claimed = results.flatMap((r) => r.claimed);
    expect(sorted(claimed)).toEqual(added.map((j) => j.id));
    // Ledger ids are in commit order on both drivers: every dependent's claim after its needs' success.
    const eventsOf = async (id: number) => q.store.read((tx) => tx.eventsOf(id));
    const ledger = new Map<number, { claimed: number; succeeded: number }>();
    for (const j of added) {
      const events = await eventsOf(j.id);
      ledger.set(j.id, {
        claimed: events.find((e) => e.event === "claimed")!.id,
        succeeded: events.find((e) => e.event === "succeeded")!.id,
      });
    }
    needs.forEach((n, i) => {
      for (const e of n?.earlier ?? [])
        expect(ledger.get(added[i]!.id)!.claimed).toBeGreaterThan(ledger.get(added[e]!.id)!.succeeded);
    });
  }, 120_000);
});
