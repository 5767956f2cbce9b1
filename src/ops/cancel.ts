/**
 * `cancel` (docs/architecture.md "Cancel"): a queued job becomes `canceled` at once. A
 * running job needs explicit confirmation; then `cancel_requested` is set and
 * the owning worker, which reads it on every heartbeat, kills the job's process
 * group and records the attempt `canceled`. Terminal jobs are a `CONFLICT`.
 * The checks and the warnings, pure; the transaction is the `cancelJobs` verb
 * (src/store/verbs/cancel.ts).
 */

import { SpoolError, type Warning } from "../contract/errors.ts";
import type { CanceledJob } from "../describe/schemas-jobs.ts";
import type { Job } from "../model/job.ts";
import { canTransition, isTerminal } from "./states.ts";
import type { WorkerHealth } from "./worker-health.ts";

// Defined once, as the JSON Schemas `spoolctl schema` prints.
export type { CanceledJob };

/**
 * Raises unless `job` may be canceled: `CONFLICT` when it is terminal,
 * `SAFETY_BLOCK` when it is running and `confirmedRunning` (`--running --yes`) is false.
 */
export function checkCancel(job: Job, confirmedRunning: boolean): void {
  if (isTerminal(job.state)) {
    throw new SpoolError(
      "CONFLICT",
      `job ${job.id} is already ${job.state}; only queued or running jobs can be canceled`,
      {
        remediation:
          job.state === "done"
            ? `nothing to cancel (spoolctl show ${job.id})`
            : `to run it again: spoolctl retry ${job.id}`,
        detail: { job_id: job.id, state: job.state },
      },
    );
  }
  if (job.state === "running" && !confirmedRunning) {
    throw new SpoolError(
      "SAFETY_BLOCK",
      `job ${job.id} is running (worker ${job.locked_by}); canceling a running job kills its process group, so it takes --running --yes`,
      {
        remediation: `confirm with: spoolctl cancel ${job.id} --running --yes`,
        detail: { job_id: job.id, state: job.state },
      },
    );
  }
  if (!canTransition(job.state, "canceled")) {
    throw new SpoolError("CONFLICT", `job ${job.id} is ${job.state} and cannot be canceled`, {
      detail: { job_id: job.id },
    });
  }
}

/** One `KILL_ASYNC` warning per job still `running` after its cancel (see {@link killWarning}). */
export function cancelWarnings(jobs: CanceledJob[], health: Map<number, WorkerHealth>): Warning[] {
  return jobs
    .filter((j) => j.was_running && j.state === "running")
    .map((j) => killWarning(j.job_id, health.get(j.job_id)));
}

/** The `KILL_ASYNC` warning of a running job's cancel: who will stop it, given its worker's health. */
function killWarning(jobId: number, health: WorkerHealth | undefined): Warning {
  if (!health || health.worker_state === "live") {
    return {
      code: "KILL_ASYNC",
      message: `job ${jobId} is still running; its worker, woken now, kills it (spoolctl wait ${jobId})`,
    };
  }
  const then =
    health.worker_state === "stale"
      ? "it is killed when its worker resumes, or canceled when the job is reaped"
      : "the cancel is honoured when the job is reaped";
  return {
    code: "KILL_ASYNC",
    message: `job ${jobId} is still running: ${health.fate}; ${then} (spoolctl wait ${jobId})`,
  };
}
