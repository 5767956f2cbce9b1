/**
 * `rerun` (docs/architecture.md "Rerun"): a finished job (done, dead or
 * canceled) runs again as a new attempt of the same job. Its attempts and
 * ledger are kept, its budgets start fresh as on a retry, and the ledger gets
 * a `retried` row whose detail says `"rerun": true`. The checks, pure; the
 * transaction is the `rerunJob` verb (src/store/verbs/rerun.ts).
 */
import { SpoolError } from "../contract/errors.ts";
import type { Job } from "../model/job.ts";
import { queuedJobHint } from "./jobs.ts";
import { isTerminal } from "./states.ts";

/** Raises `CONFLICT` unless `job` is finished (queued or running jobs are not rerun). */
export function checkRerun(job: Job): void {
  if (isTerminal(job.state)) return;
  const remediation =
    job.state === "queued"
      ? queuedJobHint(job)
      : `wait for it to finish (spoolctl wait ${job.id}), then spoolctl rerun ${job.id}; to restart it now: spoolctl retry ${job.id} --force`;
  throw new SpoolError(
    "CONFLICT",
    `job ${job.id} is ${job.state}; rerun runs a finished job (done, dead or canceled) again`,
    {
      remediation,
      detail: { job_id: job.id, state: job.state },
    },
  );
}

/**
 * `IDEMPOTENCY_CONFLICT` for a rerun of `job` while active job `holder` holds
 * its key (docs/architecture.md "Idempotency"): nothing changed.
 */
export function rerunKeyConflict(job: Job, holder: Job): SpoolError {
  const key = JSON.stringify(job.idempotency_key);
  return new SpoolError(
    "IDEMPOTENCY_CONFLICT",
    `job ${job.id}'s key ${key} belongs to active job ${holder.id}; rerunning job ${job.id} would make two active jobs with one key; nothing changed`,
    {
      remediation: `wait for job ${holder.id} (spoolctl wait ${holder.id}) or cancel it (spoolctl cancel ${holder.id}), then spoolctl rerun ${job.id}`,
      detail: { job_id: job.id, holder_id: holder.id, key: job.idempotency_key },
    },
  );
}
