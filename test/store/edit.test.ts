/**
 * editQueuedJob and the `editJob` operation (docs/architecture.md "Editing a
 * job"): a queued or held job's command and settings changed in one guarded
 * transaction, with one `edited` ledger row naming the fields; a job that has
 * started — or that ran while its $EDITOR was open — is refused whole with
 * CONFLICT; a lane change moves the job's count; a priority change reorders
 * the claim.
 */

import { expect, test } from "bun:test";
import { SpoolError } from "../../src/contract/errors.ts";
import { editJob } from "../../src/store/verbs/edit.ts";
import { holdJobs } from "../../src/store/verbs/hold.ts";
import { attemptRecord, claimOne, forEachDriver, insertJob, insertJobs, jobOf, record } from "../support/store.ts";

forEachDriver("editQueuedJob", (q) => {
  test("edit changes the fields asked for, keeps the rest, and writes one edited row", async () => {
    const job = await insertJob(q.store, { argv: ["echo", "a"], env: { A: "1" }, priority: 1 });
    const out = await editJob(q.store, String(job.id), {
      argv: ["echo", "b"],
      env: { A: "1", B: "2" },
      cwd: "/tmp",
      queue: "gpu",
      priority: 1, // unchanged: not listed
      timeout_seconds: 60,
      max_retries: 7,
    });
    expect(out.changed).toEqual(["argv", "env", "cwd", "queue", "timeout_seconds", "max_retries"]);
    const stored = await jobOf(q.store, job.id);
    expect(stored).toMatchObject({
      argv: ["echo", "b"],
      env: { A: "1", B: "2" },
      cwd: "/tmp",
      queue: "gpu",
      priority: 1,
      timeout_seconds: 60,
      max_retries: 7,
      state: "queued",
      note: job.note,
      created_at: job.created_at,
    });
    const events = (await q.store.read(async (tx) => tx.eventsOf(job.id))).filter((e) => e.event === "edited");
    expect(events.map((e) => JSON.parse(e.detail!))).toEqual([{ changed: out.changed }]);
    // Nothing to change: no row, nothing written.
    const again = await editJob(q.store, String(job.id), { priority: 1 });
    expect(again.changed).toEqual([]);
    expect((await q.store.read(async (tx) => tx.eventsOf(job.id))).filter((e) => e.event === "edited")).toHaveLength(1);
  });

  test("a lane change moves the job's count and its claim; a priority change reorders the claim", async () => {
    const [a, b] = await insertJobs(q.store, [{}, {}]);
    await editJob(q.store, String(a!.id), { queue: "gpu" });
    const counts = await q.store.read(async (tx) => tx.countByStateAndLane());
    expect(counts.filter((c) => c.state === "queued" && c.n > 0).map((c) => [c.queue, c.n])).toEqual(
      expect.arrayContaining([
        ["gpu", 1],
        ["default", 1],
      ]),
    );
    const c = await insertJob(q.store);
    await editJob(q.store, String(c.id), { priority: 50 });
    expect((await claimOne(q.store)).job.id).toBe(c.id);
    expect((await claimOne(q.store)).job.id).toBe(b!.id);
    expect((await claimOne(q.store, { queue: "gpu" })).job.id).toBe(a!.id);
  });

  test("a held job can be edited and stays held", async () => {
    const job = await insertJob(q.store);
    await holdJobs(q.store, [String(job.id)], true);
    await editJob(q.store, String(job.id), { argv: ["true"] });
    expect(await jobOf(q.store, job.id)).toMatchObject({ argv: ["true"], held: true, state: "queued" });
  });

  test("a running or finished job is refused with CONFLICT and nothing changes", async () => {
    const job = await insertJob(q.store, { argv: ["echo", "a"] });
    const got = await claimOne(q.store);
    const err = await editJob(q.store, String(job.id), { argv: ["echo", "b"] }).catch((e) => e);
    expect(err).toBeInstanceOf(SpoolError);
    expect(err.code).toBe("CONFLICT");
    expect(err.message).toContain("is running");
    await record(q.store, attemptRecord(got.job.id, 1, "w1", q.store.now()));
    expect((await editJob(q.store, String(job.id), { priority: 3 }).catch((e) => e)).code).toBe("CONFLICT");
    expect(await jobOf(q.store, job.id)).toMatchObject({ argv: ["echo", "a"], priority: 0 });
    // The driver's own guard: no row for a job that is not queued.
    expect(await q.store.write(async (tx) => tx.editQueuedJob(job.id, { priority: 9 }))).toBeNull();
  });

  test("a job that ran while being edited ($EDITOR open) is refused, though queued again", async () => {
    const job = await insertJob(q.store, { max_retries: 3 });
    const seen = (await jobOf(q.store, job.id)).last_attempt_no;
    // It runs and fails, and is queued again for its retry while the editor is open.
    const got = await claimOne(q.store);
    const failed = { ...attemptRecord(got.job.id, 1, "w1", q.store.now()), attemptState: "failed" as const };
    await record(q.store, {
      ...failed,
      exitCode: 1,
      failureReason: "process_exit",
      jobState: "queued",
      attempts: 1,
      events: [{ event: "failed", workerId: "w1", detail: null }],
    });
    expect((await jobOf(q.store, job.id)).state).toBe("queued");
    const err = await editJob(q.store, String(job.id), { priority: 5 }, seen).catch((e) => e);
    expect(err.code).toBe("CONFLICT");
    expect(err.message).toContain("while being edited");
    expect((await jobOf(q.store, job.id)).priority).toBe(0);
  });
});
