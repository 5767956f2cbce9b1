/**
 * Batches (docs/architecture.md "Batches"): addJobs with a batch, sealBatch,
 * setBatchFailFast, getBatch/listBatches, the `batch` job filter and ledger
 * query, and the fail-fast effect recordAttempt runs when a job of a batch
 * ends dead (or is requeued in a failed one).
 */
import { expect, test } from "bun:test";
import { SpoolError } from "../../src/contract/errors.ts";
import type { BatchAdd, FailFastMode } from "../../src/model/job.ts";
import { openQueue } from "../../src/store/index.ts";
import type { Store } from "../../src/store/store.ts";
import { recordAttemptEnd } from "../../src/store/verbs/record.ts";
import { attemptRecord, claimOne, forEachDriver, jobOf, newJob, record, sorted } from "../support/store.ts";

const batch = (name: string, over: Partial<BatchAdd> = {}): BatchAdd => ({
  name,
  failFast: null,
  seal: false,
  ...over,
});

/** Adds `n` plain jobs to batch `b` in one write; returns their ids. */
async function addTo(store: Store, b: BatchAdd, n: number, over: Parameters<typeof newJob>[0] = {}): Promise<number[]> {
  const jobs = await store.write(async (tx) =>
    tx.addJobs(
      Array.from({ length: n }, () => newJob(over)),
      store.now(),
      [],
      b,
    ),
  );
  return jobs.map((j) => j.id);
}

/** Claims job `id` (the next one due) for w1 and records it dead. */
async function endDead(store: Store): Promise<number> {
  const { attempt } = await claimOne(store, { workerId: "w1" });
  const rec = attemptRecord(attempt.job_id, attempt.attempt_no, "w1", store.now(), {
    attemptState: "failed",
    exitCode: 1,
    failureReason: "process_exit",
    jobState: "dead",
    attempts: 1,
    events: [{ event: "dead", workerId: "w1", detail: null }],
  });
  expect(await record(store, rec)).toBe(true);
  return attempt.job_id;
}

async function refusal(p: Promise<unknown>): Promise<SpoolError> {
  try {
    await p;
  } catch (error) {
    if (error instanceof SpoolError) return error;
    throw error;
  }
  throw new Error("expected a SpoolError");
}

forEachDriver("batches", (q) => {
  test("addJobs puts every job in the batch; getBatch counts them; a seal closes it to later adds", async () => {
    const ids = await addTo(q.store, batch("ci-1"), 3);
    await addTo(q.store, batch("other"), 1);
    const jobs = await Promise.all(ids.map((id) => jobOf(q.store, id)));
    expect(jobs.map((j) => j.batch)).toEqual(["ci-1", "ci-1", "ci-1"]);
    const view = await q.store.read(async (tx) => tx.getBatch("ci-1"));
    expect(view).toMatchObject({ name: "ci-1", sealed_at: null, fail_fast: null, failed_at: null, total: 3 });
    expect(view!.counts).toEqual({ queued: 3, running: 0, done: 0, dead: 0, canceled: 0 });
    const t = q.store.now();
    const sealed = await q.store.write(async (tx) => tx.sealBatch("ci-1", t));
    expect(sealed.sealed_at).toBe(t);
    // Sealing again keeps the first time.
    expect((await q.store.write(async (tx) => tx.sealBatch("ci-1", t + 10))).sealed_at).toBe(t);
    const err = await refusal(addTo(q.store, batch("ci-1"), 1));
    expect(err.code).toBe("CONFLICT");
    expect(err.message).toContain("sealed");
    // Nothing was added.
    expect((await q.store.read(async (tx) => tx.getBatch("ci-1")))!.total).toBe(3);
    const listed = await q.store.read(async (tx) => tx.listJobs({ batch: "ci-1", limit: 100 }));
    expect(sorted(listed.map((j) => j.id))).toEqual(ids);
    const batches = await q.store.read(async (tx) => tx.listBatches(10));
    expect(batches.map((b) => [b.name, b.total]).sort()).toEqual([
      ["ci-1", 3],
      ["other", 1],
    ]);
  });

  test("an add with seal seals after its jobs are in; sealing an unknown name makes it sealed and empty", async () => {
    await addTo(q.store, batch("b", { seal: true }), 2);
    expect((await q.store.read(async (tx) => tx.getBatch("b")))!.sealed_at).not.toBeNull();
    const empty = await q.store.write(async (tx) => tx.sealBatch("nothing", q.store.now()));
    expect(empty).toMatchObject({ name: "nothing", total: 0 });
    expect(empty.sealed_at).not.toBeNull();
    expect(await q.store.read(async (tx) => tx.getBatch("never"))).toBeNull();
  });

  for (const mode of ["queued", "now"] as FailFastMode[]) {
    test(`fail-fast ${mode}: the first dead job cancels the batch's queued jobs in its transaction${mode === "now" ? " and asks the running ones to stop" : ""}`, async () => {
      const ids = await addTo(q.store, batch("ff", { failFast: mode }), 4);
      const outsider = (await addTo(q.store, batch("bystander"), 1))[0]!;
      // Job 2 runs (claimed after the first); job 1 ends dead.
      const { attempt: first } = await claimOne(q.store, { workerId: "w1" });
      const { attempt: second } = await claimOne(q.store, { workerId: "w2" });
      const rec = attemptRecord(first.job_id, 1, "w1", q.store.now(), {
        attemptState: "failed",
        exitCode: 1,
        jobState: "dead",
        attempts: 1,
        events: [{ event: "dead", workerId: "w1", detail: null }],
      });
      expect(await record(q.store, rec)).toBe(true);
      const view = (await q.store.read(async (tx) => tx.getBatch("ff")))!;
      expect(view.failed_job_id).toBe(first.job_id);
      expect(view.failed_at).not.toBeNull();
      expect(view.counts).toEqual({ queued: 0, running: 1, done: 0, dead: 1, canceled: 2 });
      const queuedBefore = ids.filter((id) => id !== first.job_id && id !== second.job_id);
      for (const id of queuedBefore) {
        const job = await jobOf(q.store, id);
        expect(job.state).toBe("canceled");
        expect(job.last_error).toBe(`fail_fast: batch ff failed (job ${first.job_id} ended dead)`);
        const events = await q.store.read(async (tx) => tx.eventsOf(id));
        expect(events.at(-1)!.event).toBe("canceled");
        expect(JSON.parse(events.at(-1)!.detail!)).toMatchObject({ reason: "fail_fast", failed_job: first.job_id });
      }
      const running = await jobOf(q.store, second.job_id);
      expect(running.state).toBe("running");
      expect(running.cancel_requested).toBe(mode === "now");
      expect((await jobOf(q.store, outsider)).state).toBe("queued");
      // A failed batch takes no job.
      expect((await refusal(addTo(q.store, batch("ff"), 1))).message).toContain("failed fast");
    });
  }

  test("a job that succeeds after fail-fast now failed its batch, before its worker killed it, is canceled, not done", async () => {
    const [a, b] = await addTo(q.store, batch("late-pass", { failFast: "now" }), 2, { max_retries: 0 });
    const { attempt: first } = await claimOne(q.store, { workerId: "w1" });
    const { attempt: second } = await claimOne(q.store, { workerId: "w2" });
    expect([first.job_id, second.job_id].sort()).toEqual([a!, b!].sort());
    // The first ends dead: the batch fails, the second is asked to stop; it exits 0 before its worker acts.
    const dead = await recordAttemptEnd(
      q.store,
      { jobId: first.job_id, attemptNo: 1, workerId: "w1" },
      { kind: "exited", code: 1 },
    );
    expect(dead?.jobState).toBe("dead");
    expect((await jobOf(q.store, second.job_id)).cancel_requested).toBe(true);
    const late = await recordAttemptEnd(
      q.store,
      { jobId: second.job_id, attemptNo: 1, workerId: "w2" },
      { kind: "exited", code: 0 },
    );
    expect(late).toMatchObject({ attemptState: "succeeded", jobState: "canceled" });
    const job = await jobOf(q.store, second.job_id);
    expect(job.state).toBe("canceled");
    expect(job.last_error).toBe(`fail_fast: batch late-pass failed (job ${first.job_id} ended dead)`);
    const view = (await q.store.read(async (tx) => tx.getBatch("late-pass")))!;
    expect(view.counts).toMatchObject({ done: 0, dead: 1, canceled: 1 });
    // Without a failed batch a success is a success, even with fail-fast set.
    const [c] = await addTo(q.store, batch("fine", { failFast: "now" }), 1);
    const { attempt: third } = await claimOne(q.store, { workerId: "w3" });
    expect(third.job_id).toBe(c!);
    const ok = await recordAttemptEnd(
      q.store,
      { jobId: c!, attemptNo: 1, workerId: "w3" },
      { kind: "exited", code: 0 },
    );
    expect(ok?.jobState).toBe("done");
  });

  for (const mode of ["queued", "now"] as FailFastMode[]) {
    test(`fail-fast ${mode} leaves a --needs-policy done job alone: it runs once its needs ended, however they ended`, async () => {
      // a, then b (needs a), c (needs a, done), d (needs b, done): a ends dead.
      const needs = (earlier: number[], policy: "success" | "done") => ({ ids: [], earlier, policy });
      const [a, b, c, d] = (
        await q.store.write(async (tx) =>
          tx.addJobs(
            [newJob(), newJob(), newJob(), newJob()],
            q.store.now(),
            [undefined, needs([0], "success"), needs([0], "done"), needs([1], "done")],
            batch("ff", { failFast: mode }),
          ),
        )
      ).map((j) => j.id);
      expect(await endDead(q.store)).toBe(a!);
      expect((await jobOf(q.store, b!)).state).toBe("canceled");
      for (const id of [c!, d!]) {
        const job = await jobOf(q.store, id);
        expect([job.state, job.needs_left, job.last_error]).toEqual(["queued", 0, null]);
      }
      // They run: claimable, and a later dead job of the batch does not stop them either.
      const { attempt } = await claimOne(q.store, { workerId: "w2" });
      expect([c, d]).toContain(attempt.job_id);
      const other = [c, d].find((id) => id !== attempt.job_id)!;
      expect((await endDead(q.store)) === other).toBe(true);
      const running = await jobOf(q.store, attempt.job_id);
      expect([running.state, running.cancel_requested]).toEqual(["running", false]);
    });
  }

  test("without fail-fast a dead job changes nothing else; setBatchFailFast then fails the batch at once", async () => {
    await addTo(q.store, batch("late"), 3);
    const dead = await endDead(q.store);
    expect((await q.store.read(async (tx) => tx.getBatch("late")))!.counts.queued).toBe(2);
    const set = (await q.store.write(async (tx) => tx.setBatchFailFast("late", "queued", q.store.now())))!;
    expect(set).toMatchObject({ fail_fast: "queued", failed_job_id: dead });
    expect(set.counts).toMatchObject({ queued: 0, canceled: 2, dead: 1 });
    expect(await q.store.write(async (tx) => tx.setBatchFailFast("unknown", "now", q.store.now()))).toBeNull();
  });

  test("a job requeued for a retry in a failed batch is canceled instead", async () => {
    await addTo(q.store, batch("rq", { failFast: "queued" }), 2);
    const { attempt: a } = await claimOne(q.store, { workerId: "w1" });
    const { attempt: b } = await claimOne(q.store, { workerId: "w2" });
    // a ends dead: the batch fails (nothing queued left); b fails with retries left.
    await record(
      q.store,
      attemptRecord(a.job_id, 1, "w1", q.store.now(), {
        attemptState: "failed",
        exitCode: 1,
        jobState: "dead",
        events: [{ event: "dead", workerId: "w1", detail: null }],
      }),
    );
    await record(
      q.store,
      attemptRecord(b.job_id, 1, "w2", q.store.now(), {
        attemptState: "failed",
        exitCode: 1,
        jobState: "queued",
        attempts: 1,
        nextRunAt: q.store.now() + 2,
        events: [{ event: "failed", workerId: "w2", detail: null }],
      }),
    );
    const job = await jobOf(q.store, b.job_id);
    expect(job.state).toBe("canceled");
    expect(job.last_error).toContain("fail_fast");
    const view = (await q.store.read(async (tx) => tx.getBatch("rq")))!;
    expect(view.counts.queued).toBe(0);
  });

  test("retrying jobs of a failed batch reopens its verdict; fail-fast is armed again", async () => {
    const ids = await addTo(q.store, batch("again", { failFast: "queued", seal: true }), 3);
    await endDead(q.store);
    expect((await q.store.read(async (tx) => tx.getBatch("again")))!.failed_at).not.toBeNull();
    const requeued = await q.store.write(async (tx) => tx.requeueJobs(ids, ["dead", "canceled"], q.store.now()));
    expect(sorted(requeued)).toEqual(ids);
    const view = (await q.store.read(async (tx) => tx.getBatch("again")))!;
    expect(view).toMatchObject({ failed_at: null, failed_job_id: null });
    expect(view.counts.queued).toBe(3);
    // The next dead job fails it again.
    const again = await endDead(q.store);
    expect((await q.store.read(async (tx) => tx.getBatch("again")))!).toMatchObject({ failed_job_id: again });
  });

  // SQLite admits one writer, so the interleaving below cannot happen there; PostgreSQL orders it on the batch row.
  test.skipIf(q.driver.name !== "postgres")(
    "an add committing while a dead outcome of its batch waits on the batch row: the fail-fast cancels the added job",
    async () => {
      const [first] = await addTo(q.store, batch("race", { failFast: "queued" }), 1);
      const { attempt } = await claimOne(q.store, { workerId: "w1" });
      expect(attempt.job_id).toBe(first!);
      const other = await openQueue(q.location, { create: true });
      try {
        let release!: () => void;
        const held = new Promise<void>((r) => (release = r));
        let added: number[] = [];
        let joined!: () => void;
        const inside = new Promise<void>((r) => (joined = r));
        // The add joins the batch (locking its row), then holds its transaction open.
        const adding = other.write(async (tx) => {
          added = (await tx.addJobs([newJob(), newJob()], other.now(), [], batch("race"))).map((j) => j.id);
          joined();
          await held;
        });
        await inside;
        // The dead outcome's fail-fast waits for the add's row lock…
        const dying = record(
          q.store,
          attemptRecord(first!, 1, "w1", q.store.now(), {
            attemptState: "failed",
            exitCode: 1,
            jobState: "dead",
            events: [{ event: "dead", workerId: "w1", detail: null }],
          }),
        );
        await Bun.sleep(300); // (only to let the outcome reach the lock; the assertion holds either way)
        release();
        await adding;
        expect(await dying).toBe(true);
        // … and then sees the added jobs: none of them is left queued.
        for (const id of added) expect((await jobOf(q.store, id)).state).toBe("canceled");
        const view = (await q.store.read(async (tx) => tx.getBatch("race")))!;
        expect(view.counts).toMatchObject({ queued: 0, dead: 1, canceled: 2 });
      } finally {
        await other.close();
      }
    },
  );

  test("the ledger query takes a batch", async () => {
    const [a] = await addTo(q.store, batch("ev"), 1);
    await addTo(q.store, batch("else"), 2);
    const events = await q.store.read(async (tx) => tx.listEvents({ afterId: 0, batch: "ev", limit: 100 }));
    expect(events.map((e) => [e.job_id, e.event])).toEqual([[a!, "added"]]);
  });
});
