/**
 * Deleting jobs (`delete`, triage's "delete" of one job or a whole group):
 * their rows (attempts, events, jobs) in one write transaction, then their
 * output files, by the same code as `prune` (./deletion.ts), so the two can
 * never disagree about what a deletion removes. Never a running job: its
 * process would keep writing output nobody could read; it must be canceled
 * first (docs/architecture.md "Prune").
 */
import { SpoolError } from "../../contract/errors.ts";
import type { Job } from "../../model/job.ts";
import {
  checkDeletable,
  type DeletedJob,
  type DeletedJobs,
  type DeleteOptions,
  type DeletionPreview,
} from "../../ops/delete.ts";
import type { Store } from "../store.ts";
import { deleteJobRows, previewDeletion, removeOutputs } from "./deletion.ts";
import { resolveJob, resolveUnique } from "./job-refs.ts";

/**
 * The jobs `refs` name (duplicates dropped), checked for deletion, and what
 * deleting them would remove, read in one snapshot (one read per reference,
 * then the history counts and the attempts' output paths): what `delete`
 * counts in its confirm; with `countCloses`, also the dependents it would
 * close (`preview.closes`). Writes nothing. Raises `NOT_FOUND`, or `CONFLICT`
 * for a job that may not be deleted (a running one: cancel it first).
 */
export async function checkDeletion(
  store: Store,
  refs: string[],
  opts: DeleteOptions & { countCloses?: boolean } = {},
): Promise<{ jobs: Job[]; preview: DeletionPreview }> {
  const checked = await store.read(async (tx) => {
    const seen = new Map<number, Job>();
    for (const ref of refs) {
      const job = await resolveJob(tx, ref);
      seen.set(job.id, job);
    }
    const jobs = [...seen.values()];
    for (const job of jobs) checkDeletable(job, opts);
    return { jobs, preview: { jobs: jobs.length, ...(await previewDeletion(tx, jobs)) } };
  });
  // Only a queued job's deletion closes dependents; they are counted by the deletion itself, rolled back.
  if (!opts.countCloses || !opts.queued || !checked.jobs.some((j) => j.state === "queued")) return checked;
  return { ...checked, preview: { ...checked.preview, closes: await closedByDeleting(store, refs, opts) } };
}

/** Carries the dependents a rolled-back deletion closed out of its transaction. */
class Counted extends Error {
  constructor(readonly closed: number[]) {
    super("counted");
  }
}

/**
 * The dependents deleting `refs` would close, found by running the deletion's
 * rows in a write transaction that is then rolled back (the same statements
 * as {@link deleteJobs}, so the count cannot disagree with what it does:
 * only dependents whose need must succeed, down the chain).
 */
async function closedByDeleting(store: Store, refs: string[], opts: DeleteOptions): Promise<number[]> {
  try {
    await store.write(async (tx) => {
      const jobs = await resolveUnique(tx, refs);
      for (const job of jobs) checkDeletable(job, opts);
      throw new Counted(
        (
          await tx.deleteJobs(
            jobs.map((j) => j.id),
            opts,
          )
        ).closed,
      );
    });
  } catch (error) {
    if (error instanceof Counted) return error.closed;
    throw error;
  }
  return [];
}

/**
 * Deletes the jobs named by `refs` with their history and output: the rows
 * all or none in one write transaction (resolve, check, `deleteJobs`, whose
 * SQL guard skips a running job: a claim that took one meanwhile makes the
 * counts disagree, and the transaction is rolled back), then the files after
 * the commit. Writes no ledger row (the job's rows go) but those of the
 * dependents a deleted queued job closes (`closed`, docs/architecture.md
 * "Dependencies"); wakes no worker.
 * Raises `NOT_FOUND` or `CONFLICT` (one is running, or queued without
 * `opts.queued`, or changed meanwhile: a claim took it); then no row was
 * deleted. A file that cannot be removed is an `OUTPUT_NOT_REMOVED` warning
 * in the result, the rows being gone.
 */
export async function deleteJobs(store: Store, refs: string[], opts: DeleteOptions = {}): Promise<DeletedJobs> {
  const gone = await store.write(async (tx) => {
    const jobs = await resolveUnique(tx, refs);
    for (const job of jobs) checkDeletable(job, opts);
    const { deleted, outputs } = await deleteJobRows(tx, jobs, opts);
    if (deleted.jobs !== jobs.length) {
      throw new SpoolError("CONFLICT", `a job changed state while being deleted; nothing was deleted`, {
        detail: { job_ids: jobs.map((j) => j.id) },
      });
    }
    return {
      job_ids: jobs.map((j) => j.id),
      deleted_attempts: deleted.attempts,
      deleted_events: deleted.events,
      closed: deleted.closed,
      outputs,
    };
  });
  // The rows are gone (committed); then the files, as prune does.
  const { freed, warnings } = removeOutputs(store.spoolDir, gone.outputs);
  return {
    job_ids: gone.job_ids,
    deleted_attempts: gone.deleted_attempts,
    deleted_events: gone.deleted_events,
    closed: gone.closed,
    freed_bytes: freed,
    warnings,
  };
}

/** Deletes the job named by `ref` with its history and output (see {@link deleteJobs}). */
export async function deleteJob(store: Store, ref: string): Promise<DeletedJob> {
  const { job_ids, ...gone } = await deleteJobs(store, [ref]);
  return { job_id: job_ids[0]!, ...gone };
}

/** What deleting the jobs `ids` would remove, read in one snapshot; jobs already gone count as nothing. */
export async function deletionPreview(store: Store, ids: number[]): Promise<DeletionPreview> {
  return await store.read(async (tx) => {
    const jobs = await tx.listJobs({ ids, limit: ids.length || 1 });
    return { jobs: jobs.length, ...(await previewDeletion(tx, jobs)) };
  });
}
