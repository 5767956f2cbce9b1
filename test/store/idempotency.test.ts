/**
 * Idempotency keys: the look-ups `add` decides with, the schema rule (one
 * queued-or-running job per key, schema v4's partial UNIQUE index on SQLite),
 * and 8 processes adding with one key at once.
 */
import { expect, test } from "bun:test";
import { validateAddInput } from "../../src/ops/job-spec.ts";
import { addJobs } from "../../src/store/verbs/add.ts";
import { attemptRecord, claimOne, forEachDriver, insertJob, jobOf, newJob, record } from "../support/store.ts";
import { childScript, raceChildren } from "./children.ts";

/** What a refused second active job looks like: a unique-key violation (or the driver's mapping of it). */
const KEY_VIOLATION = /unique|duplicate|conflict|idempotency/i;

forEachDriver("idempotency", (q) => {
  const finish = async (jobId: number, over: Parameters<typeof attemptRecord>[4] = {}) => {
    const { attempt } = await claimOne(q.store, { workerId: "w1" });
    expect(attempt.job_id).toBe(jobId);
    expect(await record(q.store, attemptRecord(jobId, attempt.attempt_no, "w1", q.store.now(), over))).toBe(true);
  };

  test("findActiveJobByKey sees queued and running jobs only; findLatestJobByKey sees the newest in any state", async () => {
    expect(await q.store.read(async (tx) => tx.findActiveJobByKey("k"))).toBeNull();
    expect(await q.store.read(async (tx) => tx.findLatestJobByKey("k"))).toBeNull();
    const a = await insertJob(q.store, { idempotency_key: "k" });
    await insertJob(q.store, { idempotency_key: "other" });
    expect((await q.store.read(async (tx) => tx.findActiveJobByKey("k")))?.id).toBe(a.id);
    await claimOne(q.store, { workerId: "w1" });
    expect((await q.store.read(async (tx) => tx.findActiveJobByKey("k")))?.state).toBe("running");
    expect(await record(q.store, attemptRecord(a.id, 1, "w1", q.store.now()))).toBe(true);
    expect(await q.store.read(async (tx) => tx.findActiveJobByKey("k"))).toBeNull();
    expect((await q.store.read(async (tx) => tx.findLatestJobByKey("k")))?.id).toBe(a.id);
    const b = await insertJob(q.store, { idempotency_key: "k" });
    expect((await q.store.read(async (tx) => tx.findActiveJobByKey("k")))?.id).toBe(b.id);
    expect((await q.store.read(async (tx) => tx.findLatestJobByKey("k")))?.id).toBe(b.id);
    await q.store.write(async (tx) => tx.cancelQueuedJob(b.id, q.store.now()));
    expect(await q.store.read(async (tx) => tx.findActiveJobByKey("k"))).toBeNull();
    expect((await q.store.read(async (tx) => tx.findLatestJobByKey("k")))?.id).toBe(b.id);
  });

  test("a second queued job with an active job's key is refused by the store, and its whole write rolls back", async () => {
    const a = await insertJob(q.store, { idempotency_key: "nightly" });
    await expect(
      q.store.write(async (tx) => {
        await tx.insertJob(newJob({ note: "innocent bystander" }), q.store.now());
        await tx.insertJob(newJob({ idempotency_key: "nightly" }), q.store.now());
      }),
    ).rejects.toThrow(KEY_VIOLATION);
    const jobs = await q.store.read(async (tx) => tx.listJobs({ limit: 10 }));
    expect(jobs.map((j) => j.id)).toEqual([a.id]);
    // Still refused while the holder runs.
    await claimOne(q.store, { workerId: "w1" });
    await expect(
      q.store.write(async (tx) => tx.insertJob(newJob({ idempotency_key: "nightly" }), q.store.now())),
    ).rejects.toThrow(KEY_VIOLATION);
    expect(await q.store.read(async (tx) => tx.listJobs({ limit: 10 }))).toHaveLength(1);
  });

  test("a done, dead or canceled job does not hold its key: a new job with it is accepted", async () => {
    const done = await insertJob(q.store, { idempotency_key: "k" });
    await finish(done.id);
    const dead = await insertJob(q.store, { idempotency_key: "k" });
    await finish(dead.id, {
      attemptState: "failed",
      exitCode: 1,
      failureReason: "process_exit",
      jobState: "dead",
      attempts: 4,
      events: [],
    });
    expect((await jobOf(q.store, dead.id)).state).toBe("dead");
    const canceled = await insertJob(q.store, { idempotency_key: "k" });
    expect(await q.store.write(async (tx) => tx.cancelQueuedJob(canceled.id, q.store.now()))).toBe(true);
    const fresh = await insertJob(q.store, { idempotency_key: "k" });
    expect(fresh.state).toBe("queued");
    const withKey = await q.store.read(async (tx) => tx.listJobs({ limit: 10 }));
    expect(withKey.map((j) => [j.id, j.state])).toEqual([
      [fresh.id, "queued"],
      [canceled.id, "canceled"],
      [dead.id, "dead"],
      [done.id, "done"],
    ]);
  });

  test("jobs without a key never conflict", async () => {
    await insertJob(q.store, { idempotency_key: null });
    await insertJob(q.store, { idempotency_key: null });
    await insertJob(q.store, { idempotency_key: null });
    expect(await q.store.read(async (tx) => tx.listJobs({ limit: 10 }))).toHaveLength(3);
  });

  test("requeueing a dead job whose key another active job now holds is refused, changing nothing", async () => {
    const old = await insertJob(q.store, { idempotency_key: "k" });
    await finish(old.id, {
      attemptState: "failed",
      exitCode: 1,
      failureReason: "process_exit",
      jobState: "dead",
      attempts: 4,
      events: [],
    });
    const holder = await insertJob(q.store, { idempotency_key: "k" });
    const refused = await q.store
      .write(async (tx) => tx.requeueJob(old.id, "dead", q.store.now()))
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(refused).toMatchObject({ code: "IDEMPOTENCY_CONFLICT", detail: { job_id: old.id } });
    expect((await jobOf(q.store, old.id)).state).toBe("dead");
    expect((await q.store.read(async (tx) => tx.findActiveJobByKey("k")))?.id).toBe(holder.id);
  });

  test("two dead jobs with one key: requeueing both in one write is refused (IDEMPOTENCY_CONFLICT) and neither is requeued", async () => {
    const dead = async () => {
      const job = await insertJob(q.store, { idempotency_key: "twice" });
      await finish(job.id, {
        attemptState: "failed",
        exitCode: 1,
        failureReason: "process_exit",
        jobState: "dead",
        attempts: 4,
        events: [],
      });
      return job.id;
    };
    const a = await dead();
    const b = await dead();
    const refused = await q.store
      .write(async (tx) => {
        await tx.requeueJob(a, "dead", q.store.now());
        await tx.requeueJob(b, "dead", q.store.now());
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(refused).toMatchObject({ code: "IDEMPOTENCY_CONFLICT", detail: { job_id: b } });
    expect([(await jobOf(q.store, a)).state, (await jobOf(q.store, b)).state]).toEqual(["dead", "dead"]);
    expect(await q.store.read(async (tx) => tx.findActiveJobByKey("twice"))).toBeNull();
  });

  test("race: 2 processes retrying the two dead jobs of one key at once requeue exactly one; the other is IDEMPOTENCY_CONFLICT", async () => {
    const ids: number[] = [];
    for (let i = 0; i < 2; i++) {
      const job = await insertJob(q.store, { idempotency_key: "contested" });
      await finish(job.id, {
        attemptState: "failed",
        exitCode: 1,
        failureReason: "process_exit",
        jobState: "dead",
        attempts: 4,
        events: [],
      });
      ids.push(job.id);
    }
    type Out = { job_id: number; outcome: string };
    const results = await raceChildren<Out>(
      childScript("retrier.ts"),
      q.location,
      ids.map((id) => ["--job", String(id)]),
    );
    expect(results.map((r) => r.outcome).sort()).toEqual(["IDEMPOTENCY_CONFLICT", "retried"]);
    const winner = results.find((r) => r.outcome === "retried")!.job_id;
    expect((await q.store.read(async (tx) => tx.findActiveJobByKey("contested")))?.id).toBe(winner);
    const states = await Promise.all(ids.map(async (id) => (await jobOf(q.store, id)).state));
    expect(states.filter((s) => s === "queued")).toHaveLength(1);
  }, 120_000);

  test("add (ops) with one key twice returns the first job, deduplicated, with one added event", async () => {
    const spec = validateAddInput({ argv: ["echo", "hi"], key: "same" }, (n) => `--${n}`, "/");
    const first = await addJobs(q.store, [spec]);
    const second = await addJobs(q.store, [spec]);
    expect(first.jobs[0]!.deduplicated).toBe(false);
    expect(second.jobs[0]).toMatchObject({ job_id: first.jobs[0]!.job_id, deduplicated: true });
    const events = await q.store.read(async (tx) => tx.eventsOf(first.jobs[0]!.job_id));
    expect(events.map((e) => e.event)).toEqual(["added"]);
  });

  test("race: 8 processes adding with one key at once make exactly one job, and all report its id", async () => {
    type Out = { job_id: number; deduplicated: boolean };
    const results = await raceChildren<Out>(
      childScript("adder.ts"),
      q.location,
      Array.from({ length: 8 }, () => ["--key", "race-key"]),
    );
    const ids = new Set(results.map((r) => r.job_id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => !r.deduplicated)).toHaveLength(1);
    const jobs = await q.store.read(async (tx) => tx.listJobs({ limit: 100 }));
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({
      id: [...ids][0]!,
      idempotency_key: "race-key",
      state: "queued",
      argv: ["echo", "hi"],
    });
    const events = await q.store.read(async (tx) => tx.eventsOf(jobs[0]!.id));
    expect(events.map((e) => e.event)).toEqual(["added"]);
  }, 120_000);
});
