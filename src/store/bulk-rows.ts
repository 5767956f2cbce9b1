/**
 * The rows the batch statements of both drivers answer with
 * (`src/store/<driver>/bulk.ts`, docs/architecture.md "Retry").
 */
import type { JobState } from "../model/job.ts";

/** One unmet need, dead or canceled, of a job `retry --all` matches (docs/architecture.md "Dependencies"). */
export interface RetryNeedRow {
  job_id: number;
  need_id: number;
  need_state: JobState;
  /** Whether the need itself matches the filter (and so may be retried with its dependent). */
  need_matches: boolean;
}
