/**
 * `rerun` (docs/architecture.md "Rerun"): a finished job (done, dead or
 * canceled) runs again as a new attempt of the same job. Its attempts and
 * ledger are kept, its budgets start fresh as on a retry, and the ledger gets
 * a `retried` row whose detail says `"rerun": true`. One job per call, in one
 * write transaction; the one-active-job-per-key rule holds as for `retry`.
 */
import { SpoolError } from "../contract/errors.ts";
import type { Job, JobState } from "../store/model.ts";
import type { Store } from "../store/store.ts";
import { queuedJobHint, resolveJob } from "./jobs.ts";
import { keyHolder } from "./retry.ts";
import { isTerminal } from "./states.ts";

/** `rerun --json` data: the job, queued again, the state it left and the number its next attempt will have. */
export interface RerunJob {
  job_id: number;
  state: "queued";
  from: JobState;
  next_attempt_no: number;
}

/** Raises `CONFLICT` unless `job` is finished (queued or running jobs are not rerun). */
function checkRerun(job: Job): void {
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
 * Reruns the job `ref` names (an id, an idempotency key or `last`) in one
 * write transaction: reads it, refuses a queued or running one (`CONFLICT`),
 * refuses when another active job holds its idempotency key
 * (`IDEMPOTENCY_CONFLICT`, docs/architecture.md "Idempotency"), then
 * {@link StoreWriter.rerunJob} (whose SQL guard also raises
 * `IDEMPOTENCY_CONFLICT` should a holder commit meanwhile). The job is due
 * at `now` (epoch seconds). Raises `NOT_FOUND` for an unknown reference and
 * `CONFLICT` when the job changed state meanwhile; then nothing changed.
 */
export async function rerunJob(store: Store, ref: string, now = store.now()): Promise<RerunJob> {
  return await store.write(async (tx) => {
    const job = await resolveJob(tx, ref);
    checkRerun(job);
    const holder = await keyHolder(tx, job);
    if (holder) {
      const key = JSON.stringify(job.idempotency_key);
      throw new SpoolError(
        "IDEMPOTENCY_CONFLICT",
        `job ${job.id}'s key ${key} belongs to active job ${holder.id}; rerunning job ${job.id} would make two active jobs with one key; nothing changed`,
        {
          remediation: `wait for job ${holder.id} (spoolctl wait ${holder.id}) or cancel it (spoolctl cancel ${holder.id}), then spoolctl rerun ${job.id}`,
          detail: { job_id: job.id, holder_id: holder.id, key: job.idempotency_key },
        },
      );
    }
    const from = await tx.rerunJob(job.id, now, now);
    if (from === null) {
      throw new SpoolError("CONFLICT", `job ${job.id} changed state while being rerun; nothing changed`, {
        remediation: `spoolctl show ${job.id}`,
        detail: { job_id: job.id },
      });
    }
    return { job_id: job.id, state: "queued", from, next_attempt_no: job.last_attempt_no + 1 };
  });
}
