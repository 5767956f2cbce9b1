/**
 * deleteJobs with `queued` (the `delete` verb): queued jobs go too, running
 * ones never; without it (prune, triage) queued ones stay. Shipped output rows
 * go with their attempts.
 */
import { expect, test } from "bun:test";
import { attemptRecord, claimOne, forEachDriver, insertJob, record } from "../support/store.ts";

forEachDriver("deleteJobs of queued jobs", (q, driver) => {
  test("queued jobs are deleted only when asked; a running job never", async () => {
    const running = await insertJob(q.store);
    const { job } = await claimOne(q.store, { workerId: "w1" });
    expect(job.id).toBe(running.id);
    const queued = await insertJob(q.store);
    await q.store.write(async (tx) => tx.appendEvent(queued.id, "added", null, null, q.store.now()));
    // Without the option (prune, triage): the queued job stays.
    expect(await q.store.write(async (tx) => tx.deleteJobs([queued.id, running.id]))).toEqual({
      jobs: 0,
      attempts: 0,
      events: 0,
      closed: [],
    });
    // With it: the queued job and its ledger go, the running one stays whatever the ids.
    expect(await q.store.write(async (tx) => tx.deleteJobs([queued.id, running.id], { queued: true }))).toEqual({
      jobs: 1,
      attempts: 0,
      events: 1,
      closed: [],
    });
    expect(await q.store.read(async (tx) => tx.getJob(queued.id))).toBeNull();
    expect((await q.store.read(async (tx) => tx.getJob(running.id)))?.state).toBe("running");
    const byState = Object.fromEntries(
      (await q.store.read(async (tx) => tx.countByStateAndLane())).filter((c) => c.n > 0).map((c) => [c.state, c.n]),
    );
    expect(byState).toEqual({ running: 1 });
  });

  test.if(driver.shipsOutput)("a deleted job's shipped output rows go with its attempts", async () => {
    const job = await insertJob(q.store);
    const { attempt } = await claimOne(q.store, { workerId: "w1" });
    const chunk = {
      jobId: job.id,
      attemptNo: attempt.attempt_no,
      workerId: "w1",
      stream: "stdout" as const,
      offset: 0,
      bytes: new TextEncoder().encode("hello\n"),
      truncated: false,
    };
    expect(await q.store.write(async (tx) => tx.appendAttemptOutput(chunk))).toBe(true);
    expect(await record(q.store, attemptRecord(job.id, 1, "w1", q.store.now()))).toBe(true);
    expect(await q.store.write(async (tx) => tx.deleteJobs([job.id], { queued: true }))).toMatchObject({
      jobs: 1,
      attempts: 1,
    });
    expect(await q.store.read(async (tx) => tx.readAttemptOutput(job.id, 1, "stdout", 0, 1024))).toBeNull();
  });
});
