/**
 * What `retry` does about dependencies (docs/architecture.md "Dependencies"):
 * it refuses or skips a job whose need is still dead or canceled (the
 * decision here; the retry verb revives the dependents in its transaction).
 */
import { SpoolError } from "../contract/errors.ts";
import type { JobState } from "../model/job.ts";

/** A job a retry cannot requeue yet: it needs job `need_id`, which is dead or canceled. */
export interface BlockedRetry {
  job_id: number;
  need_id: number;
  need_state: JobState;
}

/**
 * The jobs of `jobIds` that wait for a need that is dead or canceled and not
 * among `jobIds` itself: requeued, they would wait for ever (docs/architecture.md
 * "Dependencies"). `unmet`: each job's unmet needs, ascending; `stateOf`: the
 * needs' states (absent: gone). Each job names its first such need; sorted by job id.
 */
export function blockedRetries(
  jobIds: number[],
  unmet: Map<number, number[]>,
  stateOf: Map<number, JobState>,
): BlockedRetry[] {
  const retried = new Set(jobIds);
  const out: BlockedRetry[] = [];
  for (const [jobId, needs] of unmet) {
    for (const needId of needs) {
      if (retried.has(needId)) continue;
      const state = stateOf.get(needId);
      if (state === "dead" || state === "canceled") {
        out.push({ job_id: jobId, need_id: needId, need_state: state });
        break;
      }
    }
  }
  return out.sort((a, b) => a.job_id - b.job_id);
}

/** `CONFLICT` for a named job whose need failed: retrying the need is what revives it. */
export function blockedError(b: BlockedRetry): SpoolError {
  return new SpoolError(
    "CONFLICT",
    `job ${b.job_id} needs job ${b.need_id}, which is ${b.need_state}: requeued now it would wait for ever; nothing was retried`,
    {
      remediation: `retry job ${b.need_id}: that revives job ${b.job_id} with it (spoolctl retry ${b.need_id})`,
      detail: { job_id: b.job_id, need_id: b.need_id, need_state: b.need_state },
    },
  );
}
