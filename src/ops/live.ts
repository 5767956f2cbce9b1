/**
 * Live views: the shape of the snapshot `status --watch` redraws (counts,
 * running jobs with their elapsed time and worker, recent failures), read by
 * `liveSnapshot` (src/store/verbs/status.ts). Times are epoch seconds.
 */

import type { AttemptState, FailureReason, JobState } from "../model/job.ts";
import type { StatusData } from "./status.ts";

/** A running job as the live view shows it. */
interface RunningView {
  id: number;
  queue: string;
  attempt_no: number;
  worker_id: string | null;
  started_at: number | null;
  elapsed_seconds: number;
  argv: string[];
}

/** A recent failed, timed-out or abandoned attempt. */
interface FailureView {
  job_id: number;
  attempt_no: number;
  attempt_state: AttemptState;
  failure_reason: FailureReason | null;
  error: string | null;
  finished_at: number | null;
  /** The job's state now (queued again for a retry, or dead). */
  job_state: JobState | null;
  queue: string | null;
  argv: string[];
}

/** `status --watch` frame data. */
export interface LiveStatus {
  at: number;
  status: StatusData;
  running: RunningView[];
  failures: FailureView[];
}
