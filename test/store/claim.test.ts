/**
 * Store.claimJobs: claim order, limit, due time, lanes, the rows a claim
 * writes, and a real race between OS processes claiming from one lane.
 */
import { expect, test } from "bun:test";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openQueue } from "../../src/store/index.ts";
import { attemptOutputPaths } from "../../src/store/spool.ts";
import {
  attemptRecord,
  CLOCK_SLACK,
  claim,
  claimOne,
  forEachDriver,
  insertJob,
  insertJobs,
  jobOf,
  newJob,
  pollUntil,
  record,
  sorted,
} from "../support/store.ts";
import { childScript, raceChildren } from "./children.ts";

forEachDriver("claimJobs", (q) => {
  test("claims one at a time in claim order: priority DESC, next_run_at ASC, id ASC; skips not-due jobs and other lanes", async () => {
    const t = q.store.now();
    const [a, b, c, , , d] = await insertJobs(q.store, [
      { priority: 0, next_run_at: t - 10 }, // a
      { priority: 5, next_run_at: t - 5 }, // b
      { priority: 5, next_run_at: t - 10 }, // c
      { priority: 9, next_run_at: t + 3600 }, // not due
      { priority: 99, queue: "other" }, // other lane
      { priority: 0, next_run_at: t - 10 }, // d: a's twin, later id
    ]);
    const order: number[] = [];
    for (let i = 0; i < 10; i++) {
      const got = await claim(q.store, { now: t });
      if (got.length === 0) break;
      expect(got).toHaveLength(1);
      order.push(got[0]!.job.id);
    }
    expect(order).toEqual([c!.id, b!.id, a!.id, d!.id]);
  });

  test("one call claims up to limit jobs, in claim order", async () => {
    const t = q.store.now();
    const jobs = await insertJobs(q.store, [
      { priority: 1, next_run_at: t - 1 },
      { priority: 3, next_run_at: t - 1 },
      { priority: 2, next_run_at: t - 2 },
      { priority: 2, next_run_at: t - 3 },
      { priority: -1, next_run_at: t - 100 },
    ]);
    const ids = jobs.map((j) => j.id);
    const first = await claim(q.store, { limit: 3, now: t });
    expect(first.map((c) => c.job.id)).toEqual([ids[1]!, ids[3]!, ids[2]!]);
    const second = await claim(q.store, { limit: 3, now: t });
    expect(second.map((c) => c.job.id)).toEqual([ids[0]!, ids[4]!]);
    expect(await claim(q.store, { limit: 3, now: t })).toEqual([]);
  });

  test("each attempt records the claiming process's start time (null when the claim gives none)", async () => {
    const [a, b] = await insertJobs(q.store, [{}, {}]);
    const first = await claimOne(q.store, { workerStartTime: "123456" });
    expect(first.attempt).toMatchObject({ job_id: a!.id, worker_pid: 4242, worker_start_time: "123456" });
    expect((await q.store.read(async (tx) => tx.getAttempt(a!.id, 1)))?.worker_start_time).toBe("123456");
    const second = await claimOne(q.store);
    expect(second.attempt).toMatchObject({ job_id: b!.id, worker_start_time: null });
  });

  test("writeAndClaim: a result and the claim of the slot it frees commit together; a throwing write claims nothing", async () => {
    const [first, second] = await insertJobs(q.store, [{ queue: "wc" }, { queue: "wc" }]);
    await claimOne(q.store, { queue: "wc", workerId: "w1", slots: 1 });
    const req = { queue: "wc", workerId: "w1", workerPid: 1, slots: 1, limit: 1, now: q.store.now() };
    const { result, claimed } = await q.store.writeAndClaim(
      (tx) => tx.recordAttempt(attemptRecord(first!.id, 1, "w1", q.store.now())),
      req,
    );
    expect(result).toBe(true);
    // The slot freed by the result is seen by the claim in the same transaction (slots 1).
    expect(claimed!.map((c) => c.job.id)).toEqual([second!.id]);
    expect((await jobOf(q.store, second!.id)).state).toBe("running");
    // The ledger reads: the first job ended, then the second was claimed.
    const ledger = await q.store.read(async (tx) => tx.listEvents({ afterId: 0, limit: 100 }));
    const tail = ledger
      .filter((e) => e.job_id === first!.id || e.job_id === second!.id)
      .map((e) => `${e.job_id}:${e.event}`);
    expect(tail.slice(-2)).toEqual([`${first!.id}:succeeded`, `${second!.id}:claimed`]);
    expect((await jobOf(q.store, first!.id)).state).toBe("done");
    const third = await insertJob(q.store, { queue: "wc" });
    const failing = q.store.writeAndClaim(
      async (tx) => {
        await tx.insertJob({ ...third!, idempotency_key: null }, q.store.now());
        throw new Error("boom");
      },
      { ...req, slots: null, limit: 5 },
    );
    await expect(failing).rejects.toThrow("boom");
    expect((await jobOf(q.store, third!.id)).state).toBe("queued");
    expect((await q.store.read(async (tx) => tx.listJobs({ queue: "wc", limit: 10 }))).length).toBe(3);
  });

  test("an undated claim is dated when it runs: a result that waited for a lock does not start the next job's lease in the past", async () => {
    const [first, second] = await insertJobs(q.store, [{ queue: "late" }, { queue: "late" }]);
    await claimOne(q.store, { queue: "late", workerId: "w1" });
    const held = join(mkdtempSync(join(tmpdir(), "spoolctl-held-")), "held");
    const HOLD_MS = 1500;
    let t0 = 0;
    let claimed: Awaited<ReturnType<typeof q.store.writeAndClaim>>["claimed"] = null;
    // Another process holds the first job's row (PostgreSQL) or the write lock (SQLite) while this one records it.
    await raceChildren(
      childScript("locker.ts"),
      q.location,
      [["--job", String(first!.id), "--ms", String(HOLD_MS), "--held", held]],
      {
        duringRace: async () => {
          await pollUntil("the locker to hold its lock", async () => existsSync(held), 30_000, 5);
          t0 = q.store.now();
          ({ claimed } = await q.store.writeAndClaim((tx) => tx.recordAttempt(attemptRecord(first!.id, 1, "w1", t0)), {
            queue: "late",
            workerId: "w1",
            workerPid: 1,
            slots: null,
            limit: 1,
          }));
        },
      },
    );
    expect(claimed!.map((c) => c.job.id)).toEqual([second!.id]);
    const late = (HOLD_MS - 300) / 1000; // the wait, less slack for the locker's start
    const job = await jobOf(q.store, second!.id);
    expect(job.heartbeat_at! - t0).toBeGreaterThan(late);
    expect(job.locked_at! - t0).toBeGreaterThan(late);
    expect(claimed![0]!.attempt.started_at - t0).toBeGreaterThan(late);
  });

  test("an empty lane claims nothing", async () => {
    expect(await claim(q.store, { limit: 5 })).toEqual([]);
    await insertJob(q.store, { queue: "elsewhere" });
    expect(await claim(q.store, { limit: 5 })).toEqual([]);
  });

  test("a job is due at next_run_at, not before", async () => {
    const t = q.store.now();
    const job = await insertJob(q.store, { next_run_at: t + 100 });
    expect(await claim(q.store, { now: t })).toEqual([]);
    expect(await claim(q.store, { now: t + 99.5 })).toEqual([]);
    expect((await jobOf(q.store, job.id)).state).toBe("queued");
    const got = await claim(q.store, { now: t + 100 });
    expect(got.map((c) => c.job.id)).toEqual([job.id]);
  });

  test("a claim moves the job to running for the worker, opens the attempt row and writes a claimed event", async () => {
    const t = q.store.now();
    const inserted = await insertJob(q.store, { next_run_at: t - 1 });
    const { job, attempt } = await claimOne(q.store, { workerId: "worker-a", workerPid: 777, now: t });
    expect(job).toMatchObject({
      id: inserted.id,
      state: "running",
      locked_by: "worker-a",
      locked_pid: 777,
      locked_at: t,
      started_at: t,
      finished_at: null,
      last_attempt_no: 1,
      cancel_requested: false,
    });
    // The lease may be written with the database's clock (PostgreSQL), not the claim's now.
    expect(Math.abs(job.heartbeat_at! - t)).toBeLessThan(CLOCK_SLACK);
    const paths = attemptOutputPaths(q.store.spoolDir, job.id, 1);
    expect(attempt).toMatchObject({
      job_id: job.id,
      attempt_no: 1,
      state: "running",
      worker_id: "worker-a",
      worker_pid: 777,
      pgid: null,
      started_at: t,
      finished_at: null,
      exit_code: null,
      signal: null,
      error: null,
      failure_reason: null,
      stdout_path: paths.stdout,
      stderr_path: paths.stderr,
      stderr_last_line: null,
      stderr_signature: null,
    });
    // What the claim returned is what was stored.
    expect(await jobOf(q.store, job.id)).toEqual(job);
    const stored = await q.store.read(async (tx) => ({
      attempt: await tx.getAttempt(job.id, 1),
      events: await tx.eventsOf(job.id),
    }));
    expect(stored.attempt).toEqual(attempt);
    expect(stored.events).toHaveLength(1);
    expect(stored.events[0]).toMatchObject({ job_id: job.id, event: "claimed", worker_id: "worker-a", at: t });
  });

  test("a claim of several jobs writes one attempt row and one claimed event per job", async () => {
    const jobs = await insertJobs(q.store, [{}, {}, {}]);
    const got = await claim(q.store, { limit: 3, workerId: "w-multi" });
    expect(sorted(got.map((c) => c.job.id))).toEqual(jobs.map((j) => j.id));
    for (const { job, attempt } of got) {
      expect(attempt.job_id).toBe(job.id);
      const events = await q.store.read(async (tx) => tx.eventsOf(job.id));
      expect(events.map((e) => [e.event, e.worker_id])).toEqual([["claimed", "w-multi"]]);
      expect(await q.store.read(async (tx) => tx.attemptsOf(job.id))).toEqual([attempt]);
    }
  });

  test("a requeued job's next claim opens attempt 2, keeping attempt 1", async () => {
    const job = await insertJob(q.store);
    const first = await claimOne(q.store, { workerId: "w1" });
    const t = q.store.now();
    expect(
      await record(
        q.store,
        attemptRecord(job.id, 1, "w1", t, {
          attemptState: "failed",
          exitCode: 1,
          error: "exit 1",
          failureReason: "process_exit",
          jobState: "queued",
          attempts: 1,
          nextRunAt: t,
          events: [{ event: "failed", workerId: "w1", detail: null }],
        }),
      ),
    ).toBe(true);
    const second = await claimOne(q.store, { workerId: "w2", now: t });
    expect(second.job.id).toBe(job.id);
    expect(second.job.last_attempt_no).toBe(2);
    expect(second.job.attempts).toBe(1); // the charged failure stays
    expect(second.attempt.attempt_no).toBe(2);
    expect(second.attempt.worker_id).toBe("w2");
    const attempts = await q.store.read(async (tx) => tx.attemptsOf(job.id));
    expect(attempts.map((a) => [a.attempt_no, a.state, a.worker_id])).toEqual([
      [1, "failed", "w1"],
      [2, "running", "w2"],
    ]);
    expect(first.attempt.stdout_path).not.toBe(second.attempt.stdout_path);
  });

  test("two stores on one queue, claiming in turn, never get the same job", async () => {
    const other = await openQueue(q.location, { create: true });
    try {
      const jobs = await insertJobs(
        q.store,
        Array.from({ length: 50 }, () => ({})),
      );
      const seen = new Set<number>();
      for (let i = 0; i < 60; i++) {
        const s = i % 2 ? q.store : other;
        const got = await claim(s, { workerId: `w${i % 2}`, limit: 1 + (i % 3) });
        for (const { job } of got) {
          expect(seen.has(job.id)).toBe(false);
          seen.add(job.id);
          expect(job.last_attempt_no).toBe(1);
        }
      }
      expect(sorted([...seen])).toEqual(jobs.map((j) => j.id));
    } finally {
      await other.close();
    }
  });

  test("race: 4 processes claiming from one lane of 300 jobs never get the same job and together get all of them", async () => {
    const jobs = await insertJobs(
      q.store,
      Array.from({ length: 300 }, (_, i) => ({ priority: i % 7, tags: { n: String(i) } })),
    );
    await insertJobs(
      q.store,
      Array.from({ length: 20 }, () => ({ queue: "bystander" })),
    );
    type Out = { workerId: string; claimed: number[]; locked: number };
    const results = await raceChildren<Out>(
      childScript("claimant.ts"),
      q.location,
      [0, 1, 2, 3].map((i) => ["--worker", `racer-${i}`, "--limit", String(1 + (i % 3))]),
    );
    const all = results.flatMap((r) => r.claimed);
    expect(all.length).toBe(300);
    expect(new Set(all).size).toBe(300);
    expect(sorted(all)).toEqual(jobs.map((j) => j.id));
    // The driver agrees: each job is running for the process that reported it, with one attempt and one claimed event.
    const owner = new Map(results.flatMap((r) => r.claimed.map((id) => [id, r.workerId] as const)));
    const byWorker = await q.store.read(async (tx) => tx.runningJobsByWorker());
    expect(byWorker).toHaveLength(300);
    for (const row of byWorker) expect(row.worker_id).toBe(owner.get(row.job_id)!);
    expect(await q.store.read(async (tx) => tx.historyCounts(all))).toEqual({ attempts: 300, events: 300 });
    expect(await q.store.read(async (tx) => (await tx.drainState("bystander", 0)).running)).toBe(0);
  }, 120_000);
});

forEachDriver("claimJobs: order, rows and slots", (q) => {
  test("claim takes jobs in claim order with one attempt and one event each; slots cap the lane", async () => {
    const lane = "claims";
    const now = q.store.now();
    const jobs = await q.store.write(async (tx) => {
      const out = [];
      for (const p of [1, 5, 3, 5]) out.push(await tx.insertJob(newJob({ queue: lane, priority: p }), now));
      return out;
    });
    const got = await q.store.claimJobs({ queue: lane, workerId: "w", workerPid: 1, slots: 3, limit: 10, now });
    expect(got.map((c) => c.job.id)).toEqual([jobs[1]!.id, jobs[3]!.id, jobs[2]!.id]);
    expect(got.map((c) => c.attempt.attempt_no)).toEqual([1, 1, 1]);
    expect(await q.store.claimJobs({ queue: lane, workerId: "w", workerPid: 1, slots: 3, limit: 10, now })).toEqual([]);
    const events = await q.store.read(async (tx) => tx.listEvents({ afterId: 0, jobId: jobs[1]!.id, limit: 10 }));
    expect(events.map((e) => e.event)).toEqual(["claimed"]);
  });
});
