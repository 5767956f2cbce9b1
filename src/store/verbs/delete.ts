/**
 * Deleting jobs (`delete`, triage's "delete" of one job or a whole group):
 * their rows (attempts, events, jobs) in one write transaction, then their
 * output files, by the same code as `prune` (./deletion.ts), so the two can
 * never disagree about what a deletion removes. Never a running job: its
 * process would keep writing output nobody could read; it must be canceled
 * first (docs/architecture.md "Prune and delete").
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
import { type JobTarget, targetJobs, writeOrDryRun } from "./job-targets.ts";

/**
 * The jobs `target` names (duplicates dropped; or every match of a filter,
 * `delete --all`), checked for deletion, and what deleting them would
 * remove, read in one snapshot (the jobs, then the history counts and the
 * attempts' output paths): what `delete` counts in its confirm. Writes
 * nothing. Raises `NOT_FOUND`, `INVALID_INPUT` (a filter over
 * `BULK_LIMIT` jobs), or `CONFLICT` for a job that may not be deleted (a
 * running one: cancel it first).
 */
export async function checkDeletion(
  store: Store,
  target: JobTarget,
  opts: DeleteOptions = {},
): Promise<{ jobs: Job[]; preview: DeletionPreview }> {
  return await store.read(async (tx) => {
    const jobs = await targetJobs(tx, target, "delete");
    for (const job of jobs) checkDeletable(job, opts);
    return { jobs, preview: { jobs: jobs.length, ...(await previewDeletion(tx, jobs)) } };
  });
}

/**
 * Deletes the jobs `target` names (references, or a filter's matches) with
 * their history and output: the rows
 * all or none in one write transaction (resolve, check, `deleteJobs`, whose
 * SQL guard skips a running job: a claim that took one meanwhile makes the
 * counts disagree, and the transaction is rolled back), then the files after
 * the commit. Writes no ledger row (the job's rows go) but those of the
 * dependents a deleted queued job closes (`closed`, docs/architecture.md
 * "Dependencies"); wakes no worker.
 * Raises `NOT_FOUND` or `CONFLICT` (one is running, or queued without
 * `opts.queued`, or changed meanwhile: a claim took it); then no row was
 * deleted. A file that cannot be removed is an `OUTPUT_NOT_REMOVED` warning
 * in the result, the rows being gone. With `opts.dryRun` the rows are
 * deleted in a transaction that is rolled back and no file is touched: the
 * counts and the dependents it would close, exactly (`freed_bytes` 0).
 */
export async function deleteJobs(
  store: Store,
  target: JobTarget,
  opts: DeleteOptions & { dryRun?: boolean } = {},
): Promise<DeletedJobs> {
  const gone = await writeOrDryRun(store, opts.dryRun === true, async (tx) => {
    const jobs = await targetJobs(tx, target, "delete");
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
  const { freed, warnings } = opts.dryRun ? { freed: 0, warnings: [] } : removeOutputs(store.spoolDir, gone.outputs);
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
