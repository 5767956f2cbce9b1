/**
 * The rows the batch statements of both drivers answer with
 * (`src/store/<driver>/bulk.ts`, docs/architecture.md "Retry").
 */
import type { JobState } from "../model/job.ts";

/**
 * One unmet need, dead or canceled, of a job `retry --all` matches; or, with
 * `need_id` null and state `deleted`, a need the job lost (deleted before it
 * was met: the job's `needs_left` exceeds its unmet edges; docs/architecture.md
 * "Dependencies").
 */
export interface RetryNeedRow {
  job_id: number;
  need_id: number | null;
  need_state: JobState | "deleted";
  /** Whether the need itself matches the filter (and so may be retried with its dependent). */
  need_matches: boolean;
}

/**
 * SQL (both drivers) true for the job row aliased `job` (default `jobs`) that lost a need: its count of
 * unmet needs exceeds its unmet edges, because a need was deleted (`delete`,
 * `prune`) before it was met and its edge went with it (docs/architecture.md
 * "Dependencies"). Requeued, such a job would wait for ever: retry, rerun and
 * the revive of dependents leave it alone.
 */
export function lostNeed(job = "jobs"): string {
  return `${job}.needs_left > (SELECT count(*) FROM job_needs lost WHERE lost.job_id = ${job}.id AND NOT lost.met)`;
}
