/**
 * Deleting jobs (`delete`, triage's "delete" of one job or a whole group;
 * docs/architecture.md "Prune and delete"): what may be deleted and the answers' shapes.
 * Triage deletes terminal jobs only; the `delete` verb queued ones too. Never
 * a running job: its process would keep writing output nobody could read; it
 * must be canceled first. The transaction is src/store/verbs/delete.ts.
 */
import { SpoolError, type Warning } from "../contract/errors.ts";
import type { Job } from "../model/job.ts";
import { isTerminal } from "./states.ts";

/** What deleting one job removed. Sizes in bytes. */
export interface DeletedJob {
  job_id: number;
  deleted_attempts: number;
  deleted_events: number;
  freed_bytes: number;
  /** The jobs that needed a deleted queued job's success, closed with it (docs/architecture.md "Dependencies"), ascending. */
  closed: number[];
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
  /** The queued dependents the deletion would close (a deleted queued job is a need that never succeeds), ascending; absent: not counted. */
  closes?: number[];
}

/** Which jobs a deletion may take: terminal ones, and queued ones too for the `delete` verb (never running ones). */
export interface DeleteOptions {
  queued?: boolean;
}

/** Raises `CONFLICT` unless `job` may be deleted: terminal, or queued when `opts.queued`. */
export function checkDeletable(job: Job, opts: DeleteOptions): void {
  if (isTerminal(job.state) || (opts.queued && job.state === "queued")) return;
  const which = opts.queued ? "queued, done, dead or canceled" : "done, dead or canceled";
  throw new SpoolError("CONFLICT", `job ${job.id} is ${job.state}; only ${which} jobs can be deleted`, {
    remediation: `cancel it first: spoolctl cancel ${job.id}${job.state === "running" ? " --running --yes" : ""}`,
    detail: { job_id: job.id, state: job.state },
  });
}
