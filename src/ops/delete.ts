/**
 * Deleting jobs (triage's "delete", of one job or a whole group): their rows
 * (attempts, events, jobs) in one write transaction, then their output files,
 * by the same code path as `prune` (docs/architecture.md "Prune"), so the two
 * can never disagree about what a deletion removes. Triage deletes terminal
 * jobs only; the `delete` verb queued ones too (the store's guard skips one a
 * claim took meanwhile). Never a running job: its process would keep writing
 * output nobody could read; it must be canceled first.
 */
import { SpoolError, type Warning } from "../contract/errors.ts";
import type { Job } from "../store/model.ts";
import type { Store } from "../store/store.ts";
import { resolveJob } from "./jobs.ts";
import { deleteJobRows, previewDeletion, removeOutputs } from "./prune.ts";
import { resolveUnique } from "./retry.ts";
import { isTerminal } from "./states.ts";

/** What deleting one job removed. Sizes in bytes. */
export interface DeletedJob {
  job_id: number;
  deleted_attempts: number;
  deleted_events: number;
  freed_bytes: number;
  /** `OUTPUT_NOT_REMOVED` when a file could not be removed (the rows are gone). */
  warnings: Warning[];
}

/** What deleting several jobs removed. Sizes in bytes. */
export interface DeletedJobs extends Omit<DeletedJob, "job_id"> {
  job_ids: number[];
}

/** What a deletion would remove (for its confirm). Sizes in bytes. */
export interface DeletionPreview {
  jobs: number;
  attempts: number;
  events: number;
  bytes: number;
}

/** Which jobs a deletion may take: terminal ones, and queued ones too for the `delete` verb (never running ones). */
export interface DeleteOptions {
  queued?: boolean;
}

/** Raises `CONFLICT` unless `job` may be deleted: terminal, or queued when `opts.queued`. */
function checkDeletable(job: Job, opts: DeleteOptions): void {
  if (isTerminal(job.state) || (opts.queued && job.state === "queued")) return;
  const which = opts.queued ? "queued, done, dead or canceled" : "done, dead or canceled";
  throw new SpoolError("CONFLICT", `job ${job.id} is ${job.state}; only ${which} jobs can be deleted`, {
    remediation: `cancel it first: spoolctl cancel ${job.id}${job.state === "running" ? " --running --yes" : ""}`,
    detail: { job_id: job.id, state: job.state },
  });
}

/**
 * The jobs `refs` name (duplicates dropped), checked for deletion, and what
 * deleting them would remove, read in one snapshot: what `delete` counts in
 * its confirm. Raises `NOT_FOUND`, or `CONFLICT` for a job that may not be
 * deleted (a running one: cancel it first).
 */
export async function checkDeletion(
  store: Store,
  refs: string[],
  opts: DeleteOptions = {},
): Promise<{ jobs: Job[]; preview: DeletionPreview }> {
  return await store.read(async (tx) => {
    const seen = new Map<number, Job>();
    for (const ref of refs) {
      const job = await resolveJob(tx, ref);
      seen.set(job.id, job);
    }
    const jobs = [...seen.values()];
    for (const job of jobs) checkDeletable(job, opts);
    return { jobs, preview: { jobs: jobs.length, ...(await previewDeletion(tx, jobs)) } };
  });
}

/**
 * Deletes the jobs named by `refs` with their history and output: the rows
 * all or none, then the files. Raises `NOT_FOUND` or `CONFLICT` (one is
 * running, or queued without `opts.queued`, or changed meanwhile: a claim
 * took it); then no row was deleted. A file
 * that cannot be removed is a warning in the result, the rows being gone.
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
      outputs,
    };
  });
  // The rows are gone (committed); then the files, as prune does.
  const { freed, warnings } = removeOutputs(store.spoolDir, gone.outputs);
  return {
    job_ids: gone.job_ids,
    deleted_attempts: gone.deleted_attempts,
    deleted_events: gone.deleted_events,
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
