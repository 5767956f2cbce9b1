/**
 * Deleting one job (triage's "delete"): its rows (attempts, events, job) in one
 * write transaction, then its output files, by the same code path as
 * `prune` (docs/architecture.md "Prune"), so the two can never disagree about what a
 * deletion removes. Only terminal jobs: a queued or running job must be
 * canceled first, because a worker may be about to claim or be running it.
 */
import { SpoolError, type Warning } from "../contract/errors.ts";
import type { Store } from "../store/store.ts";
import { resolveJob } from "./jobs.ts";
import { deleteJobRows, removeOutputs } from "./prune.ts";
import { JOB_NOT_FOUND_REMEDIATION } from "./retry.ts";
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

/**
 * Deletes the job named by `ref` with its history and output. Raises
 * `NOT_FOUND` or `CONFLICT` (queued or running); a file that cannot be
 * removed is a warning in the result, the rows being gone.
 */
export async function deleteJob(store: Store, ref: string): Promise<DeletedJob> {
  const gone = await store.write(async (tx) => {
    const job = await resolveJob(tx, ref, JOB_NOT_FOUND_REMEDIATION);
    if (!isTerminal(job.state)) {
      throw new SpoolError("CONFLICT", `job ${job.id} is ${job.state}; only done, dead or canceled jobs can be deleted`, {
        remediation: `cancel it first: spoolctl cancel ${job.id}${job.state === "running" ? " --running --yes" : ""}`,
        detail: { job_id: job.id, state: job.state },
      });
    }
    const { deleted, outputs } = await deleteJobRows(tx, [job]);
    if (deleted.jobs !== 1) throw new SpoolError("CONFLICT", `job ${job.id} changed state while being deleted`, { detail: { job_id: job.id } });
    return { job_id: job.id, deleted_attempts: deleted.attempts, deleted_events: deleted.events, outputs };
  });
  // The rows are gone (committed); then the files, as prune does.
  const { freed, warnings } = removeOutputs(store.spoolDir, gone.outputs);
  return { job_id: gone.job_id, deleted_attempts: gone.deleted_attempts, deleted_events: gone.deleted_events, freed_bytes: freed, warnings };
}
