/**
 * Reads: getJob and insertJob's round trip, listJobs filters, counts per
 * lane, the status views (recentDead, recentFailedAttempts), the drain and
 * claim checks (laneBacklog, laneSettled, nextDueAt, runningInLane,
 * hasDueJob), attempts and ledger rows of a job, and the key look-ups.
 */
import { expect, test } from "bun:test";
import type { Job, JobFilter } from "../../src/model/job.ts";
import { drainSettled } from "../../src/store/reader.ts";
import type { Store } from "../../src/store/store.ts";
import {
  attemptRecord,
  claim,
  claimOne,
  forceRetried,
  forEachDriver,
  insertJob,
  insertJobs,
  newJob,
  record,
} from "../support/store.ts";

const ids = (jobs: Job[]) => jobs.map((j) => j.id);

/** Counts per "lane/state", zero rows left out. */
async function laneCounts(store: Store): Promise<Record<string, number>> {
  const rows = await store.read(async (tx) => tx.countByStateAndLane());
  return Object.fromEntries(rows.filter((c) => c.n > 0).map((c) => [`${c.queue}/${c.state}`, c.n]));
}

forEachDriver("reads", (q) => {
  /** Fails the running job's attempt and requeues it (a retry backoff) or kills it. */
  const fail = (
    jobId: number,
    attemptNo: number,
    workerId: string,
    now: number,
    over: Parameters<typeof attemptRecord>[4] = {},
  ) =>
    record(
      q.store,
      attemptRecord(jobId, attemptNo, workerId, now, {
        attemptState: "failed",
        exitCode: 1,
        error: "exit 1",
        failureReason: "process_exit",
        jobState: "queued",
        attempts: 1,
        nextRunAt: now + 2,
        events: [],
        ...over,
      }),
    );

  test("insertJob stores every field of a new job, and getJob reads it back (null for an unknown id)", async () => {
    const t = q.store.now();
    const spec = newJob({
      argv: ["sh", "-c", "echo 'héllo wörld' \"$X\"", "", " spaced "],
      priority: -7,
      queue: "lane.x_1",
      next_run_at: t + 30,
      timeout_seconds: 12.5,
      max_retries: 0,
      max_crashes: 2,
      idempotency_key: "key-1",
      tags: { team: "web", "x.y:z/w": "v" },
      note: "a note ✓",
      cwd: "/tmp/some dir",
      env: { A: "1", EMPTY: "" },
    });
    const stored = await q.store.write(async (tx) => tx.insertJob(spec, t));
    expect(stored).toEqual({
      ...spec,
      id: stored.id,
      name: null,
      state: "queued",
      attempts: 0,
      crashes: 0,
      last_attempt_no: 0,
      needs_left: 0,
      held: false,
      locked_by: null,
      locked_pid: null,
      locked_at: null,
      heartbeat_at: null,
      last_exit_code: null,
      last_error: null,
      created_at: t,
      started_at: null,
      finished_at: null,
      cancel_requested: false,
      batch: null,
      trace: null,
    });
    expect(await q.store.read(async (tx) => tx.getJob(stored.id))).toEqual(stored);
    expect(await q.store.read(async (tx) => tx.getJob(stored.id + 1000))).toBeNull();
    const plain = await insertJob(q.store, { max_crashes: null, note: null, cwd: null, idempotency_key: null });
    expect(await q.store.read(async (tx) => tx.getJob(plain.id))).toMatchObject({
      max_crashes: null,
      note: null,
      cwd: null,
      idempotency_key: null,
      tags: {},
      env: {},
    });
    expect(plain.id).toBeGreaterThan(stored.id);
  });

  /** Four jobs: j1 (lane a, running), j2 (lane b), j3 (lane a, scheduled), j4 (lane a, canceled). */
  const listScene = async () => {
    const t = q.store.now();
    const [j1, j2, j3, j4] = await q.store.write(async (tx) => [
      await tx.insertJob(newJob({ queue: "a", priority: 1, tags: { team: "web" }, next_run_at: t - 100 }), t - 100),
      await tx.insertJob(
        newJob({ queue: "b", priority: 5, tags: { team: "api", env: "prod", "x.y:z/w": "odd" }, next_run_at: t - 50 }),
        t - 50,
      ),
      await tx.insertJob(
        newJob({ queue: "a", priority: 10, tags: { team: "web", env: "prod" }, next_run_at: t + 3600 }),
        t,
      ),
      await tx.insertJob(newJob({ queue: "a", priority: 0, next_run_at: t }), t),
    ]);
    expect((await claimOne(q.store, { queue: "a", now: t })).job.id).toBe(j1!.id);
    expect(await q.store.write(async (tx) => tx.cancelQueuedJob(j4!.id, t))).toBe(true);
    const list = (filter: Partial<JobFilter>) =>
      q.store.read(async (tx) => ids(await tx.listJobs({ limit: 100, ...filter })));
    return { t, list, i: [j1!.id, j2!.id, j3!.id, j4!.id] as const };
  };

  test("listJobs: newest first, with each filter but tags alone and combined", async () => {
    const {
      t,
      list,
      i: [i1, i2, i3, i4],
    } = await listScene();
    expect(await list({})).toEqual([i4, i3, i2, i1]);
    expect(await list({ limit: 2 })).toEqual([i4, i3]);
    expect(await list({ states: ["queued"] })).toEqual([i3, i2]);
    expect(await list({ states: ["running", "canceled"] })).toEqual([i4, i1]);
    expect(await list({ states: ["done", "dead"] })).toEqual([]);
    expect(await list({ queue: "a" })).toEqual([i4, i3, i1]);
    expect(await list({ queue: "nope" })).toEqual([]);
    expect(await list({ priorityMin: 1 })).toEqual([i3, i2, i1]);
    expect(await list({ priorityMin: 6 })).toEqual([i3]);
    expect(await list({ beforeId: i3 })).toEqual([i2, i1]);
    expect(await list({ beforeId: i3, limit: 1 })).toEqual([i2]);
    expect(await list({ ids: [i1, i4, 99_999] })).toEqual([i4, i1]);
    expect(await list({ ids: [] })).toEqual([]);
    expect(await list({ createdSince: t - 50 })).toEqual([i4, i3, i2]);
    expect(await list({ createdSince: t + 1 })).toEqual([]);
    expect(await list({ runAfter: t })).toEqual([i3]);
    expect(await list({ states: ["queued"], runAfter: t })).toEqual([i3]);
    expect(await list({ queue: "a", states: ["queued", "canceled"], priorityMin: 0, tags: {} })).toEqual([i4, i3]);
  });

  test("listJobs: a tags filter matches the jobs holding every given tag, any key spelling", async () => {
    const {
      list,
      i: [i1, i2, i3],
    } = await listScene();
    expect(await list({ tags: { team: "web" } })).toEqual([i3, i1]);
    expect(await list({ tags: { team: "web", env: "prod" } })).toEqual([i3]);
    expect(await list({ tags: { env: "prod" } })).toEqual([i3, i2]);
    expect(await list({ tags: { "x.y:z/w": "odd" } })).toEqual([i2]);
    expect(await list({ tags: { team: "nope" } })).toEqual([]);
    expect(await list({ tags: { team: "we" } })).toEqual([]);
    expect(await list({ queue: "a", tags: { team: "web" }, beforeId: i3 })).toEqual([i1]);
  });

  test("countByStateAndLane follows every transition, lane and delete", async () => {
    const [a] = await insertJobs(q.store, [{}, { queue: "b" }]);
    expect(await laneCounts(q.store)).toEqual({ "default/queued": 1, "b/queued": 1 });
    await claimOne(q.store, { workerId: "w1" });
    expect(await laneCounts(q.store)).toEqual({ "default/running": 1, "b/queued": 1 });
    expect(await record(q.store, attemptRecord(a!.id, 1, "w1", q.store.now()))).toBe(true);
    expect(await laneCounts(q.store)).toEqual({ "default/done": 1, "b/queued": 1 });
    await q.store.write(async (tx) => tx.requeueJob(a!.id, "done", q.store.now()));
    expect(await laneCounts(q.store)).toEqual({ "default/queued": 1, "b/queued": 1 });
    await q.store.write(async (tx) => tx.cancelQueuedJob(a!.id, q.store.now()));
    expect(await laneCounts(q.store)).toEqual({ "default/canceled": 1, "b/queued": 1 });
    await q.store.write(async (tx) => tx.deleteJobs([a!.id]));
    expect(await laneCounts(q.store)).toEqual({ "b/queued": 1 });
    await expect(
      q.store.write(async (tx) => {
        await tx.insertJob(newJob({ queue: "c" }), q.store.now());
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    expect(await laneCounts(q.store)).toEqual({ "b/queued": 1 });
  });

  test("countMatchingByState counts the jobs a filter selects by state, whatever its limit", async () => {
    const t = q.store.now();
    await insertJobs(q.store, [
      { queue: "a", tags: { run: "1" } },
      { queue: "a", tags: { run: "2" } },
      { queue: "b", tags: { run: "1" } },
    ]);
    const counts = async (filter: Omit<JobFilter, "limit">) =>
      Object.fromEntries(
        (await q.store.read(async (tx) => tx.countMatchingByState(filter))).map((r) => [r.state, Number(r.n)]),
      );
    expect(await counts({ queue: "a" })).toEqual({ queued: 2 });
    expect(await counts({ tags: { run: "1" } })).toEqual({ queued: 2 });
    expect(await counts({ queue: "b", tags: { run: "1" } })).toEqual({ queued: 1 });
    expect(await counts({ queue: "nope" })).toEqual({});
    const { job } = await claimOne(q.store, { queue: "a", now: t });
    expect(await record(q.store, attemptRecord(job.id, 1, "w1", t + 1))).toBe(true);
    expect(await counts({ queue: "a" })).toEqual({ queued: 1, done: 1 });
  });

  test("countScheduledByLane counts queued jobs due after `now`, per lane", async () => {
    const t = q.store.now();
    await insertJobs(q.store, [
      { queue: "a", next_run_at: t + 10 },
      { queue: "a", next_run_at: t + 20 },
      { queue: "b", next_run_at: t + 30 },
      { queue: "b", next_run_at: t - 1 },
      { queue: "c", next_run_at: t },
    ]);
    const scheduled = async (now: number) =>
      Object.fromEntries(
        (await q.store.read(async (tx) => tx.countScheduledByLane(now)))
          .filter((r) => r.n > 0)
          .map((r) => [r.queue, r.n]),
      );
    expect(await scheduled(t)).toEqual({ a: 2, b: 1 });
    expect(await scheduled(t + 15)).toEqual({ a: 1, b: 1 });
    expect(await scheduled(t + 30)).toEqual({});
  });

  test("recentDead lists the newest dead jobs first, at most `limit`", async () => {
    const t = q.store.now();
    const jobs = await insertJobs(q.store, [{}, {}, {}, {}]);
    const got = await claim(q.store, { workerId: "w1", limit: 4, now: t });
    expect(got).toHaveLength(4);
    // Finished out of id order: job 2 last.
    const finishedAt = [t + 1, t + 3, t + 2];
    for (const [i, at] of finishedAt.entries())
      expect(await fail(jobs[i]!.id, 1, "w1", at, { jobState: "dead", attempts: 4 })).toBe(true);
    expect(await record(q.store, attemptRecord(jobs[3]!.id, 1, "w1", t + 4))).toBe(true); // done, not dead
    const dead = await q.store.read(async (tx) => tx.recentDead(10));
    expect(ids(dead)).toEqual([jobs[1]!.id, jobs[2]!.id, jobs[0]!.id]);
    expect(dead.every((j) => j.state === "dead")).toBe(true);
    expect(ids(await q.store.read(async (tx) => tx.recentDead(2)))).toEqual([jobs[1]!.id, jobs[2]!.id]);
  });

  test("recentFailedAttempts lists failed, timed-out and abandoned attempts, newest first", async () => {
    const t = q.store.now();
    const [a, b, c, d] = await insertJobs(q.store, [
      { priority: 4 },
      { priority: 3 },
      { priority: 2 },
      { priority: 1 },
    ]);
    await claim(q.store, { workerId: "w1", limit: 4, now: t });
    expect(await fail(a!.id, 1, "w1", t + 1)).toBe(true); // failed, requeued
    expect(
      await fail(b!.id, 1, "w1", t + 3, {
        attemptState: "timed_out",
        failureReason: "timeout",
        exitCode: null,
        signal: 15,
      }),
    ).toBe(true);
    expect(
      await fail(c!.id, 1, "w1", t + 2, {
        attemptState: "abandoned",
        failureReason: "worker_crash",
        exitCode: null,
        attempts: 0,
        crashes: 1,
      }),
    ).toBe(true);
    expect(await record(q.store, attemptRecord(d!.id, 1, "w1", t + 4))).toBe(true); // succeeded: not listed
    const again = await claimOne(q.store, { workerId: "w1", now: t + 10 }); // a's (or b's/c's) next attempt, running: not listed
    expect(again.attempt.attempt_no).toBe(2);
    const failed = await q.store.read(async (tx) => tx.recentFailedAttempts(10));
    expect(failed.map((x) => [x.job_id, x.attempt_no, x.state])).toEqual([
      [b!.id, 1, "timed_out"],
      [c!.id, 1, "abandoned"],
      [a!.id, 1, "failed"],
    ]);
    expect((await q.store.read(async (tx) => tx.recentFailedAttempts(1))).map((x) => x.job_id)).toEqual([b!.id]);
  });

  test("drainState: running jobs, due jobs and retry backoff hold a drain; user delays do not", async () => {
    const now = q.store.now();
    const state = (lane = "default", at = now) => q.store.read(async (tx) => tx.drainState(lane, at));
    expect(await state()).toEqual({ running: 0, waiting: 0 });
    expect(drainSettled(await state())).toBe(true);
    // A job delayed by the user (never ran): not waited for.
    await insertJob(q.store, { next_run_at: now + 3600 });
    expect(await state()).toEqual({ running: 0, waiting: 0 });
    // A due job holds the drain; a later `now` makes the delayed one due too.
    const due = await insertJob(q.store, { next_run_at: now - 1 });
    expect(await state()).toEqual({ running: 0, waiting: 1 });
    expect(drainSettled(await state())).toBe(false);
    expect(await state("default", now + 3601)).toEqual({ running: 0, waiting: 2 });
    // Running.
    await claimOne(q.store, { workerId: "w1", now });
    expect(await state()).toEqual({ running: 1, waiting: 0 });
    // Requeued with a retry backoff: waiting although not due, and counted once when due.
    expect(await fail(due.id, 1, "w1", now, { nextRunAt: now + 60 })).toBe(true);
    expect(await state()).toEqual({ running: 0, waiting: 1 });
    expect(await state("default", now + 61)).toEqual({ running: 0, waiting: 1 });
    // Other lanes are settled.
    expect(drainSettled(await state("other-lane"))).toBe(true);
  });

  test("drainState counts a reap backoff (a crash charged) as waiting", async () => {
    const now = q.store.now();
    const job = await insertJob(q.store);
    await claimOne(q.store, { workerId: "w1", now });
    expect(
      await fail(job.id, 1, "w1", now, {
        attemptState: "abandoned",
        failureReason: "worker_crash",
        attempts: 0,
        crashes: 1,
        nextRunAt: now + 60,
      }),
    ).toBe(true);
    expect(await q.store.read(async (tx) => tx.drainState("default", now))).toEqual({ running: 0, waiting: 1 });
  });

  test("drainState counts a job force-retried while running as waiting through its hold-off", async () => {
    // retry --force requeues a running job with fresh budgets (attempts and crashes 0), due after a
    // hold-off: the drain must wait for it, and say so (before, the count said 0 left while it waited).
    const now = q.store.now();
    const job = await insertJob(q.store);
    await claimOne(q.store, { workerId: "w1", now });
    expect(await forceRetried(q.store, job.id, now, now + 30)).toBe(true);
    const state = await q.store.read(async (tx) => tx.drainState("default", now));
    expect(state).toEqual({ running: 0, waiting: 1 });
    expect(drainSettled(state)).toBe(false);
  });

  test("nextDueAt looks at one lane's queued jobs; drainState counts its running ones", async () => {
    const now = q.store.now();
    const look = (lane: string) =>
      q.store.read(async (tx) => [await tx.nextDueAt(lane), (await tx.drainState(lane, now)).running]);
    expect(await look("a")).toEqual([null, 0]);
    await insertJobs(q.store, [
      { queue: "a", next_run_at: now + 50, priority: 0 },
      { queue: "a", next_run_at: now - 5, priority: 9 },
      { queue: "a", next_run_at: now + 20, priority: 0 },
      { queue: "b", next_run_at: now - 100 },
    ]);
    expect(await look("a")).toEqual([now - 5, 0]);
    await claimOne(q.store, { queue: "a", now });
    // The running job no longer counts for nextDueAt.
    expect(await look("a")).toEqual([now + 20, 1]);
    expect(await look("b")).toEqual([now - 100, 0]);
  });

  test("attemptsOf, getAttempt and eventsOf list a job's history, oldest first", async () => {
    const now = q.store.now();
    const job = await insertJob(q.store);
    await q.store.write(async (tx) => tx.appendEvent(job.id, "added", null, null, now));
    await claimOne(q.store, { workerId: "w1", now });
    expect(
      await fail(job.id, 1, "w1", now + 1, {
        nextRunAt: now + 1,
        events: [{ event: "failed", workerId: "w1", detail: null }],
      }),
    ).toBe(true);
    await claimOne(q.store, { workerId: "w2", now: now + 2 });
    const { attempts, one, two, none, events } = await q.store.read(async (tx) => ({
      attempts: await tx.attemptsOf(job.id),
      one: await tx.getAttempt(job.id, 1),
      two: await tx.getAttempt(job.id, 2),
      none: await tx.getAttempt(job.id, 3),
      events: await tx.eventsOf(job.id),
    }));
    expect(attempts.map((a) => [a.attempt_no, a.state, a.worker_id])).toEqual([
      [1, "failed", "w1"],
      [2, "running", "w2"],
    ]);
    expect(attempts).toEqual([one!, two!]);
    expect(none).toBeNull();
    expect(events.map((e) => [e.event, e.worker_id])).toEqual([
      ["added", null],
      ["claimed", "w1"],
      ["failed", "w1"],
      ["claimed", "w2"],
    ]);
    expect(
      await q.store.read(async (tx) => [await tx.attemptsOf(job.id + 1000), await tx.eventsOf(job.id + 1000)]),
    ).toEqual([[], []]);
  });
});

forEachDriver("reads: stored shapes, exact tag filters, lane counts", (q) => {
  test("numbers are numbers and a stored job keeps the shape it was given (tags' key order too)", async () => {
    const j = await q.store.write(async (tx) =>
      tx.insertJob(newJob({ tags: { b: "2", a: "1" }, env: { X: "1" }, argv: ["echo", "é"] }), 1234.5),
    );
    expect(typeof j.id).toBe("number");
    expect(j).toMatchObject({
      argv: ["echo", "é"],
      tags: { b: "2", a: "1" },
      env: { X: "1" },
      cancel_requested: false,
      created_at: 1234.5,
      state: "queued",
    });
    expect(Object.keys(j.tags)).toEqual(["b", "a"]); // key order kept (text, not jsonb)
    const counts = await q.store.read(async (tx) => tx.countByStateAndLane());
    expect(counts.length).toBeGreaterThan(0);
    expect(counts.every((c) => typeof c.n === "number")).toBe(true);
  });

  test("tags filter exactly, NUL bytes included", async () => {
    const lane = "tags";
    const [a, b, c] = await q.store.write(async (tx) => [
      await tx.insertJob(newJob({ queue: lane, tags: { k: "v", "n\u0000": "x" } }), 1),
      await tx.insertJob(newJob({ queue: lane, tags: { k: "vv", z: "v\u0000" } }), 1),
      await tx.insertJob(newJob({ queue: lane, tags: { k: "v", 'a"b': "c,d}" } }), 1),
    ]);
    const ids = (tags: Record<string, string>) =>
      q.store.read(async (tx) => (await tx.listJobs({ queue: lane, tags, limit: 10 })).map((x) => x.id));
    expect(await ids({ k: "v" })).toEqual([c!.id, a!.id]);
    expect(await ids({ k: "v", 'a"b': "c,d}" })).toEqual([c!.id]);
    expect(await ids({ k: "vv" })).toEqual([b!.id]);
    expect(await ids({ "n\u0000": "x" })).toEqual([a!.id]);
    expect(await ids({ z: "v\u0000" })).toEqual([b!.id]);
    expect(await ids({ k: "w" })).toEqual([]);
  });

  test("lane counts stay exact through many small writes (deltas folded back now and then)", async () => {
    const lane = "counts";
    for (let i = 0; i < 300; i++) await q.store.write(async (tx) => tx.insertJob(newJob({ queue: lane }), 1));
    for (let i = 0; i < 40; i++)
      await q.store.claimJobs({ queue: lane, workerId: "w", workerPid: 1, slots: null, limit: 3, now: q.store.now() });
    const counts = await q.store.read(async (tx) => tx.countByStateAndLane());
    const mine = Object.fromEntries(counts.filter((c) => c.queue === lane).map((c) => [c.state, c.n]));
    expect(mine).toEqual({ queued: 180, running: 120 });
  }, 60_000);
});
