/**
 * Deleting one job (triage's "delete"): the job's output files, then its rows
 * (attempts, events, job), in one write transaction, by the same code path as
 * `prune` (docs/architecture.md "Prune"), so the two can never disagree about what a
 * deletion removes. Only terminal jobs: a queued or running job must be
 * canceled first, because a worker may be about to claim or be running it.
 */
import { SpoolError } from "../contract/errors.ts";
import type { Store } from "../store/store.ts";
import { resolveJob } from "./jobs.ts";
import { deleteWithOutput } from "./prune.ts";
import { JOB_NOT_FOUND_REMEDIATION } from "./retry.ts";
import { isTerminal } from "./states.ts";

/** What deleting one job removed. Sizes in bytes. */
export interface DeletedJob {
  job_id: number;
  deleted_attempts: number;
  deleted_events: number;
  freed_bytes: number;
}

/**
 * Deletes the job named by `ref` with its history and output. Raises
 * `NOT_FOUND`, `CONFLICT` (queued or running), or `INTERNAL` when a file cannot
 * be removed; then no row was deleted.
 */
export async function deleteJob(store: Store, ref: string): Promise<DeletedJob> {
  return await store.write(async (tx) => {
    const job = await resolveJob(tx, ref, JOB_NOT_FOUND_REMEDIATION);
    if (!isTerminal(job.state)) {
      throw new SpoolError("CONFLICT", `job ${job.id} is ${job.state}; only done, dead or canceled jobs can be deleted`, {
        remediation: `cancel it first: spoolctl cancel ${job.id}${job.state === "running" ? " --running --yes" : ""}`,
        detail: { job_id: job.id, state: job.state },
      });
    }
    const { freed, deleted } = await deleteWithOutput(tx, store.spoolDir, [job], "try again");
    if (deleted.jobs !== 1) throw new SpoolError("CONFLICT", `job ${job.id} changed state while being deleted`, { detail: { job_id: job.id } });
    return { job_id: job.id, deleted_attempts: deleted.attempts, deleted_events: deleted.events, freed_bytes: freed };
  });
}
