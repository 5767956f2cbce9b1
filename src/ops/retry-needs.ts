/**
 * What `retry` does about dependencies (docs/architecture.md "Dependencies"):
 * it refuses or skips a job whose need is still dead or canceled, and revives
 * the dependents a retried job's failure had closed (`--no-cascade` skips it).
 */
import { SpoolError } from "../contract/errors.ts";
import type { Job, JobState } from "../store/model.ts";
import type { StoreWriter } from "../store/store.ts";
/** A job a retry cannot requeue yet: it needs job `need_id`, which is dead or canceled. */
export interface BlockedRetry {
  job_id: number;
  need_id: number;
  need_state: JobState;
}

/**
 * The jobs of `jobs` that wait for a need that is dead or canceled and not
 * among `jobs` itself: requeued, they would wait for ever (docs/architecture.md
 * "Dependencies"). One read of their unmet needs, then one per such need.
 */
export async function blockedByNeeds(tx: StoreWriter, jobs: Job[]): Promise<BlockedRetry[]> {
  const retried = new Set(jobs.map((j) => j.id));
  const unmet = await tx.unmetNeeds(jobs.map((j) => j.id));
  const out: BlockedRetry[] = [];
  const states = new Map<number, JobState | undefined>();
  for (const [jobId, needs] of unmet) {
    for (const needId of needs) {
      if (retried.has(needId)) continue;
      if (!states.has(needId)) states.set(needId, (await tx.getJob(needId))?.state);
      const state = states.get(needId);
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

/**
 * Revives, in the retry's transaction, the dependents the failure of each
 * retried dead or canceled job had closed (`retry`'s cascade; `--no-cascade`
 * skips it): named jobs one by one, so each reports its own; `--all` at once.
 */
export async function reviveIn(
  tx: StoreWriter,
  target: { refs: string[] } | { filter: unknown },
  outcome: { jobs: { job_id: number; revived?: number[] }[]; revived?: number[] },
  now: number,
): Promise<void> {
  if ("refs" in target) {
    for (const job of outcome.jobs) {
      const revived = await tx.reviveDependents([job.job_id], now);
      if (revived.length > 0) job.revived = revived;
    }
    return;
  }
  if (outcome.jobs.length === 0) return;
  const revived = await tx.reviveDependents(
    outcome.jobs.map((j) => j.job_id),
    now,
  );
  if (revived.length > 0) outcome.revived = revived.sort((a, b) => a - b);
}
