/**
 * recordAttempt: writing an attempt's outcome, fenced by (job, attempt,
 * worker); and the process group, carried by the first heartbeat or the result.
 */
import { expect, test } from "bun:test";
import type { AttemptRecord } from "../../src/store/attempt-types.ts";
import type { Store } from "../../src/store/store.ts";
import { complete, recordAttemptEnd } from "../../src/store/verbs/record.ts";
import { setSetting } from "../../src/store/verbs/settings.ts";
import { attemptRecord, claim, claimOne, forEachDriver, insertJob, record } from "../support/store.ts";

/** Everything the store holds about a job, to show a refused write changed nothing. */
async function snapshot(store: Store, jobId: number) {
  return store.read(async (tx) => ({
    job: await tx.getJob(jobId),
    attempts: await tx.attemptsOf(jobId),
    events: await tx.eventsOf(jobId),
  }));
}

forEachDriver("recordAttempt", (q) => {
  test("a success closes the attempt, finishes the job, clears its owner and writes the events", async () => {
    const job = await insertJob(q.store);
    const { attempt } = await claimOne(q.store, { workerId: "w1" });
    const t = q.store.now() + 5;
    expect(
      await record(
        q.store,
        attemptRecord(job.id, attempt.attempt_no, "w1", t, {
          events: [{ event: "succeeded", workerId: "w1", detail: '{"attempt":1}' }],
        }),
      ),
    ).toBe(true);
    const { job: stored, attempts, events } = await snapshot(q.store, job.id);
    expect(stored).toMatchObject({
      state: "done",
      attempts: 0,
      crashes: 0,
      last_exit_code: 0,
      last_error: null,
      finished_at: t,
      locked_by: null,
      locked_pid: null,
      locked_at: null,
      heartbeat_at: null,
      cancel_requested: false,
      last_attempt_no: 1,
    });
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({
      attempt_no: 1,
      state: "succeeded",
      finished_at: t,
      exit_code: 0,
      signal: null,
      error: null,
      failure_reason: null,
      worker_id: "w1",
    });
    expect(events.map((e) => [e.event, e.worker_id, e.detail, e.at])).toEqual([
      ["claimed", "w1", events[0]!.detail, attempt.started_at],
      ["succeeded", "w1", '{"attempt":1}', t],
    ]);
  });

  test("a failure that is retried requeues the job with its budgets, due at nextRunAt, finished_at unset", async () => {
    const job = await insertJob(q.store);
    await claimOne(q.store, { workerId: "w1" });
    const t = q.store.now();
    const written = await record(
      q.store,
      attemptRecord(job.id, 1, "w1", t, {
        attemptState: "timed_out",
        exitCode: null,
        signal: 15,
        error: "timed out after 300s",
        failureReason: "timeout",
        jobState: "queued",
        attempts: 1,
        crashes: 0,
        nextRunAt: t + 2,
        events: [{ event: "timed_out", workerId: "w1", detail: '{"retry_in":2}' }],
      }),
    );
    expect(written).toBe(true);
    const { job: stored, attempts, events } = await snapshot(q.store, job.id);
    expect(stored).toMatchObject({
      state: "queued",
      attempts: 1,
      crashes: 0,
      next_run_at: t + 2,
      last_exit_code: null,
      last_error: "timed out after 300s",
      finished_at: null,
      locked_by: null,
      heartbeat_at: null,
    });
    expect(attempts[0]).toMatchObject({
      state: "timed_out",
      signal: 15,
      exit_code: null,
      error: "timed out after 300s",
      failure_reason: "timeout",
      finished_at: t,
    });
    expect(events.map((e) => e.event)).toEqual(["claimed", "timed_out"]);
  });

  test("the attempt keeps the stderr line its worker read and its signature (UTF-8 as is); null when none was given", async () => {
    const [a, b] = [await insertJob(q.store), await insertJob(q.store)];
    await claimOne(q.store, { workerId: "w1" });
    await claimOne(q.store, { workerId: "w1" });
    const t = q.store.now();
    const failed = {
      attemptState: "failed",
      exitCode: 3,
      error: "exited with code 3",
      failureReason: "process_exit",
      jobState: "dead",
      events: [],
    } satisfies Partial<AttemptRecord>;
    expect(
      await record(
        q.store,
        attemptRecord(a.id, 1, "w1", t, {
          ...failed,
          stderrLastLine: "Fehler: Zeitüberschreitung — 接続 3",
          stderrSignature: "1|Fehler: Zeitüberschreitung — 接続 <n>",
        }),
      ),
    ).toBe(true);
    expect(await record(q.store, attemptRecord(b.id, 1, "w1", t, failed))).toBe(true);
    expect((await snapshot(q.store, a.id)).attempts[0]).toMatchObject({
      stderr_last_line: "Fehler: Zeitüberschreitung — 接続 3",
      stderr_signature: "1|Fehler: Zeitüberschreitung — 接続 <n>",
    });
    expect((await snapshot(q.store, b.id)).attempts[0]).toMatchObject({
      stderr_last_line: null,
      stderr_signature: null,
    });
  });

  test("several events are written in order with the record; their worker id is the event's own", async () => {
    const job = await insertJob(q.store);
    await claimOne(q.store, { workerId: "w1" });
    const t = q.store.now();
    const written = await record(
      q.store,
      attemptRecord(job.id, 1, "w1", t, {
        attemptState: "abandoned",
        exitCode: null,
        error: "worker died",
        failureReason: "worker_crash",
        jobState: "dead",
        crashes: 1,
        events: [
          { event: "reaped", workerId: "reaper-9", detail: "a" },
          { event: "dead", workerId: "reaper-9", detail: "b" },
        ],
      }),
    );
    expect(written).toBe(true);
    const { job: stored, events } = await snapshot(q.store, job.id);
    expect(stored).toMatchObject({ state: "dead", crashes: 1, finished_at: t });
    expect(events.slice(1).map((e) => [e.event, e.worker_id, e.detail])).toEqual([
      ["reaped", "reaper-9", "a"],
      ["dead", "reaper-9", "b"],
    ]);
    expect(events[2]!.id).toBeGreaterThan(events[1]!.id);
  });

  test("fencing: a wrong worker or a wrong attempt number changes nothing and returns false (no events either)", async () => {
    const job = await insertJob(q.store);
    await claimOne(q.store, { workerId: "w1" });
    const before = await snapshot(q.store, job.id);
    const t = q.store.now();
    expect(await record(q.store, attemptRecord(job.id, 1, "intruder", t))).toBe(false);
    expect(await record(q.store, attemptRecord(job.id, 2, "w1", t))).toBe(false);
    expect(await record(q.store, attemptRecord(job.id, 0, "w1", t))).toBe(false);
    expect(await record(q.store, attemptRecord(job.id + 1000, 1, "w1", t))).toBe(false);
    expect(await snapshot(q.store, job.id)).toEqual(before);
    // The owner's record still goes through, once.
    expect(await record(q.store, attemptRecord(job.id, 1, "w1", t))).toBe(true);
    const after = await snapshot(q.store, job.id);
    expect(await record(q.store, attemptRecord(job.id, 1, "w1", t + 1))).toBe(false);
    expect(await snapshot(q.store, job.id)).toEqual(after);
  });

  test("fencing: after the job was requeued and claimed again, the first attempt's late record is refused even from the same worker", async () => {
    const job = await insertJob(q.store);
    await claimOne(q.store, { workerId: "w1" });
    await q.store.write(async (tx) => {
      await tx.closeAttempt({
        jobId: job.id,
        attemptNo: 1,
        state: "canceled",
        failureReason: "canceled",
        error: "abandoned by retry --force",
        now: q.store.now(),
      });
      expect(await tx.requeueJob(job.id, "running", q.store.now())).toBe(true);
    });
    // Requeued, not yet reclaimed: the old owner's record is refused.
    expect(await record(q.store, attemptRecord(job.id, 1, "w1", q.store.now()))).toBe(false);
    await claimOne(q.store, { workerId: "w1" });
    const before = await snapshot(q.store, job.id);
    expect(await record(q.store, attemptRecord(job.id, 1, "w1", q.store.now()))).toBe(false);
    expect(await snapshot(q.store, job.id)).toEqual(before);
    expect(before.attempts.map((a) => [a.attempt_no, a.state])).toEqual([
      [1, "canceled"],
      [2, "running"],
    ]);
    expect(await record(q.store, attemptRecord(job.id, 2, "w1", q.store.now()))).toBe(true);
  });

  test("a record with no events writes none", async () => {
    const job = await insertJob(q.store);
    await claimOne(q.store, { workerId: "w1" });
    expect(await record(q.store, attemptRecord(job.id, 1, "w1", q.store.now(), { events: [] }))).toBe(true);
    expect((await snapshot(q.store, job.id)).events.map((e) => e.event)).toEqual(["claimed"]);
  });

  test("the first heartbeat records the process group and its start time on an attempt the worker still owns", async () => {
    const job = await insertJob(q.store);
    const lost = await insertJob(q.store);
    await claim(q.store, { workerId: "w1", limit: 2 });
    await q.store.write(async (tx) => tx.requeueJob(lost.id, "running", q.store.now())); // taken from w1
    const leases = await q.store.write(async (tx) =>
      tx.heartbeatJobs("w1", [
        { jobId: job.id, attemptNo: 1, process: { pgid: 31337, startTime: "123456" } },
        { jobId: lost.id, attemptNo: 1, process: { pgid: 4242, startTime: null } },
      ]),
    );
    expect(leases.map((l) => l.owned)).toEqual([true, false]);
    expect(await q.store.read(async (tx) => tx.getAttempt(job.id, 1))).toMatchObject({
      pgid: 31337,
      pgid_start_time: "123456",
      state: "running",
    });
    expect(await q.store.read(async (tx) => tx.getAttempt(lost.id, 1))).toMatchObject({
      pgid: null,
      pgid_start_time: null,
    });
    // A later beat without it keeps it; the result keeps what the heartbeat recorded.
    await q.store.write(async (tx) => tx.heartbeatJobs("w1", [{ jobId: job.id, attemptNo: 1 }]));
    expect(
      await record(q.store, attemptRecord(job.id, 1, "w1", q.store.now(), { process: { pgid: 1, startTime: "1" } })),
    ).toBe(true);
    expect(await q.store.read(async (tx) => tx.getAttempt(job.id, 1))).toMatchObject({
      pgid: 31337,
      pgid_start_time: "123456",
      state: "succeeded",
    });
  });

  test("the result records the process group when no heartbeat did (a job shorter than a heartbeat interval)", async () => {
    const job = await insertJob(q.store);
    await claimOne(q.store, { workerId: "w1" });
    expect(
      await record(
        q.store,
        attemptRecord(job.id, 1, "w1", q.store.now(), { process: { pgid: 31338, startTime: null } }),
      ),
    ).toBe(true);
    expect(await q.store.read(async (tx) => tx.getAttempt(job.id, 1))).toMatchObject({
      pgid: 31338,
      pgid_start_time: null,
      state: "succeeded",
    });
    // A fenced-out result writes no group either.
    const other = await insertJob(q.store);
    await claimOne(q.store, { workerId: "w1" });
    expect(
      await record(
        q.store,
        attemptRecord(other.id, 1, "intruder", q.store.now(), { process: { pgid: 7, startTime: "7" } }),
      ),
    ).toBe(false);
    expect(await q.store.read(async (tx) => tx.getAttempt(other.id, 1))).toMatchObject({
      pgid: null,
      state: "running",
    });
  });
});

forEachDriver("recordAttemptEnd (src/store/verbs/record.ts)", (q) => {
  test("written again by its own worker (the first COMMIT's answer lost), a result writes nothing and returns the outcome recorded the first time", async () => {
    const failing = await insertJob(q.store, { max_retries: 2 });
    const a = await claimOne(q.store, { workerId: "w1" });
    const ref = { jobId: failing.id, attemptNo: a.attempt.attempt_no, workerId: "w1" };
    const first = await recordAttemptEnd(q.store, ref, { kind: "exited", code: 3 });
    expect(first).toMatchObject({ attemptState: "failed", jobState: "queued", exitCode: 3 });
    const before = await snapshot(q.store, failing.id);
    const again = await recordAttemptEnd(q.store, ref, { kind: "exited", code: 3 });
    expect(again).toMatchObject({
      attemptState: "failed",
      jobState: "queued",
      exitCode: 3,
      backoffSeconds: first!.backoffSeconds,
      events: first!.events,
    });
    expect(await snapshot(q.store, failing.id)).toEqual(before);
    // Another worker's write for that attempt is not "ours": the job was taken from it.
    expect(await recordAttemptEnd(q.store, { ...ref, workerId: "w2" }, { kind: "exited", code: 0 })).toBeNull();
    // Nor is a reaper's view of a job whose worker recorded it meanwhile.
    expect(
      await recordAttemptEnd(
        q.store,
        ref,
        { kind: "worker_crash", error: "x" },
        { kind: "reaper", reaperId: "reaper", staleBefore: null },
      ),
    ).toBeNull();
    expect(await snapshot(q.store, failing.id)).toEqual(before);
  });

  test("a result refused because a reaper took the attempt stays refused (null) when written again", async () => {
    const job = await insertJob(q.store);
    const a = await claimOne(q.store, { workerId: "w1" });
    const ref = { jobId: job.id, attemptNo: a.attempt.attempt_no, workerId: "w1" };
    expect(
      await recordAttemptEnd(
        q.store,
        ref,
        { kind: "worker_crash", error: "lease expired" },
        { kind: "reaper", reaperId: "reaper", staleBefore: null },
      ),
    ).toMatchObject({ attemptState: "abandoned" });
    expect(await recordAttemptEnd(q.store, ref, { kind: "exited", code: 0 })).toBeNull();
    expect(await recordAttemptEnd(q.store, ref, { kind: "exited", code: 0 })).toBeNull();
  });
});

forEachDriver("complete (src/store/verbs/record.ts): decided on what holds at its commit", (q) => {
  // PostgreSQL decides a result on the row its claim returned (src/store/postgres/kept-rows.ts): a cancel or a
  // setting changed since the claim must still be what the outcome follows, as with a read of its own.
  test("a cancel requested and a backoff changed after the claim rule the outcome of the next result", async () => {
    await insertJob(q.store, { max_retries: 3 });
    await insertJob(q.store, { max_retries: 3 });
    const claimed = await claim(q.store, { workerId: "w1", limit: 2 });
    expect(claimed).toHaveLength(2);
    const [a, b] = claimed as [(typeof claimed)[0], (typeof claimed)[0]];
    const end = (c: typeof a) => ({
      ref: { jobId: c.job.id, attemptNo: c.attempt.attempt_no, workerId: "w1" },
      end: { kind: "exited" as const, code: 1 },
      endedAt: q.store.now(),
    });
    const next = {
      queue: "default",
      workerId: "w1",
      workerPid: process.pid,
      workerStartTime: null,
      slots: null,
      limit: 0,
    };
    // The first result: nothing changed since the claim; requeued with the default backoff.
    const first = await complete(q.store, [end(a)], next);
    expect(first.outcomes[0]).toMatchObject({ jobState: "queued", backoffSeconds: 2 });
    // Then the operator: a cancel of the second job, and a new backoff base.
    expect(await q.store.write((tx) => tx.requestCancel(b.job.id))).toBe(true);
    await setSetting(q.store, { key: "backoff_base", value: 7 });
    const second = await complete(q.store, [end(b)], next);
    // A cancel requested turns a retry into canceled (src/ops/outcome.ts), whatever the claim saw.
    expect(second.outcomes[0]).toMatchObject({ jobState: "canceled" });
    const stored = await q.store.read((tx) => tx.getJob(b.job.id));
    expect(stored).toMatchObject({ state: "canceled", cancel_requested: false });
    // And the new backoff is what a retry after it is scheduled with.
    await insertJob(q.store, { max_retries: 3 });
    const [c] = await claim(q.store, { workerId: "w1", limit: 1 });
    const third = await complete(q.store, [end(c!)], next);
    expect(third.outcomes[0]).toMatchObject({ jobState: "queued", backoffSeconds: 7 });
  });
});
