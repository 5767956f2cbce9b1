/**
 * The row shapes the verbs' data shares (a job, an attempt, a ledger event, a
 * batch, a failure group, a worker and its health, a captured stream), each
 * written once as a JSON Schema (docs/contract.md "JSON Schema export") with
 * its TypeScript type derived from it. Times are epoch seconds.
 */

import {
  arrayOf,
  bool,
  countsOf,
  enumOf,
  int,
  mapOf,
  nullable,
  num,
  object,
  optional,
  type Static,
  str,
} from "../contract/schema-kit.ts";
import { ATTEMPT_STATES, EVENTS, FAIL_FAST_MODES, FAILURE_REASONS, JOB_STATES, REPORTED_STATES } from "../model/job.ts";

/** A job state. */
export const jobState = enumOf(JOB_STATES);
/** A string-to-string map (tags, env). */
export const stringMap = mapOf(str);
/** Counts keyed by every reported state (`failed` always 0). */
export const stateCounts = countsOf(REPORTED_STATES);
/** Counts keyed by every reported state (`failed` always 0). */
export type StateCounts = Static<typeof stateCounts>;

/** A ledger row; `id` is the cursor. */
export const jobEvent = object({
  id: int,
  job_id: int,
  at: num,
  event: enumOf(EVENTS),
  worker_id: nullable(str),
  detail: nullable(str),
});

/** A job as `list` reports it: the row without env values (docs/architecture.md "Adding a job": env values only in `show`). */
export const jobSummaryProps = {
  id: int,
  state: jobState,
  queue: str,
  priority: int,
  argv: arrayOf(str),
  /** Failures charged to the retry budget. */
  attempts: int,
  /** Worker crashes charged to the crash budget. */
  crashes: int,
  /** Attempts started so far (all kinds). */
  attempts_total: int,
  max_retries: int,
  max_crashes: nullable(int),
  timeout_seconds: num,
  created_at: num,
  next_run_at: num,
  started_at: nullable(num),
  finished_at: nullable(num),
  last_exit_code: nullable(int),
  last_error: nullable(str),
  idempotency_key: nullable(str),
  /** Its name (`add --name`, docs/architecture.md "Job names"); null: none. */
  name: nullable(str),
  tags: stringMap,
  note: nullable(str),
  cwd: nullable(str),
  env_keys: arrayOf(str),
  locked_by: nullable(str),
  scheduled: bool,
  /** Held by `hold`: queued, but no claim takes it until `release` (docs/architecture.md "Holding a job"). */
  held: bool,
  /** The batch it belongs to (docs/architecture.md "Batches"); null: none. */
  batch: nullable(str),
  /** Ids of the jobs it still waits for (docs/architecture.md "Dependencies"); empty when none. */
  waiting_on: arrayOf(int),
};
/** A job summary (see {@link jobSummaryProps}). */
export const jobSummary = object(jobSummaryProps);
/** A job as `list --json` reports it (see {@link jobSummaryProps}). */
export type JobSummary = Static<typeof jobSummary>;

/** A batch as `batch show`, `batch list` and `wait --batch --json` report it. */
export const batchSummary = object({
  name: str,
  created_at: num,
  sealed: bool,
  sealed_at: nullable(num),
  fail_fast: nullable(enumOf(FAIL_FAST_MODES)),
  /**
   * Whether its verdict is known and is a failure (settled, not every job done;
   * fail-fast failing it included): what the text calls "failed". Always
   * `all_succeeded === false`.
   */
  failed: bool,
  /** When fail-fast failed it; null: fail-fast did not (it may still have failed: see `failed`). */
  failed_at: nullable(num),
  /** The job whose dead outcome made fail-fast fail it; null with `failed_at`. */
  failed_job_id: nullable(int),
  total: int,
  counts: countsOf(JOB_STATES),
  /** Sealed with nothing queued or running, or failed by fail-fast (docs/architecture.md "Batches"). */
  settled: bool,
  /** The verdict once settled: all its jobs done (an empty batch succeeded); null while it is not settled. */
  all_succeeded: nullable(bool),
});
/** A batch with its counts and verdict (see {@link batchSummary}). */
export type BatchSummary = Static<typeof batchSummary>;

/** An attempt row and the host its worker ran on (null when unknown). */
export const attempt = object({
  job_id: int,
  attempt_no: int,
  state: enumOf(ATTEMPT_STATES),
  worker_id: str,
  worker_pid: int,
  pgid: nullable(int),
  pgid_start_time: nullable(str),
  started_at: num,
  finished_at: nullable(num),
  exit_code: nullable(int),
  signal: nullable(int),
  error: nullable(str),
  failure_reason: nullable(enumOf(FAILURE_REASONS)),
  stdout_path: str,
  stderr_path: str,
  stderr_last_line: nullable(str),
  worker_start_time: nullable(str),
  stderr_signature: nullable(str),
  host: optional(nullable(str)),
});
/** An attempt as `show` reports it (see {@link attempt}). */
export type AttemptWithHost = Static<typeof attempt>;

/** What failed alike (docs/architecture.md "Triage"). */
const failureSignature = object({
  /** dead or canceled. */
  state: enumOf(["dead", "canceled"]),
  /** The last attempt's failure reason; "canceled" for a job canceled before it ran; null when unknown. */
  failure_reason: nullable(enumOf(FAILURE_REASONS)),
  exit_code: nullable(int),
  signal: nullable(int),
  /** The last non-empty stderr line, masked ("" when there was none). */
  stderr: str,
});
/** A failure signature (see {@link failureSignature}). */
export type FailureSignature = Static<typeof failureSignature>;

/** One group of failed jobs, as triage shows it and `list --group --json` reports it. */
export const failureGroup = object({
  signature: failureSignature,
  /** The signature as one line (see signatureText). */
  text: str,
  count: int,
  /** Its jobs, newest (highest id) first. */
  job_ids: arrayOf(int),
  lanes: arrayOf(str),
  /** Earliest and latest end of its jobs. */
  first_seen: num,
  last_seen: num,
  /** The newest job of the group: its command and unmasked stderr line. */
  example: object({ job_id: int, argv: arrayOf(str), stderr_line: str }),
  /** Jobs canceled because a job of this group failed (need_failed, down the chain); absent when none. */
  closed_dependents: optional(arrayOf(int)),
});
/** A failure group (see {@link failureGroup}). */
export type FailureGroup = Static<typeof failureGroup>;

/** The result of adding one job, as `add --json` reports it. */
export const addedJob = object({
  job_id: int,
  state: jobState,
  queue: str,
  priority: int,
  next_run_at: num,
  cwd: nullable(str),
  env_keys: arrayOf(str),
  deduplicated: bool,
});
/** One added job (see {@link addedJob}). */
export type AddedJob = Static<typeof addedJob>;

/** One stream of one attempt. `size_bytes` is the file's size; `text` its tail when `truncated`. */
export const streamView = object({
  path: nullable(str),
  missing: bool,
  size_bytes: int,
  /** The shown bytes as UTF-8: from a line's start when earlier bytes are left out; "" when `binary`. */
  text: str,
  /** Earlier bytes are left out (or a shared queue's `output_cap` cut the stream). */
  truncated: bool,
  /** Bytes of the stream before `text`, counted at the stream's offsets. */
  omitted_bytes: int,
  /** `text` starts mid-line: the tail held no line break to cut at. */
  partial_first_line: bool,
  /** The tail is not text (a NUL byte, or mostly bytes that are not UTF-8): use `output --raw`. */
  binary: bool,
});
/** One captured stream (see {@link streamView}). */
export type StreamView = Static<typeof streamView>;

/** A running job's worker as the views judge it (`worker_health`; docs/architecture.md "Dead workers in the views"). */
export const workerHealth = object({
  job_id: int,
  worker_id: nullable(str),
  worker_pid: nullable(int),
  worker_host: str,
  worker_state: enumOf(["live", "stale", "dead", "lease_expired"]),
  /** Seconds since the job's last heartbeat (its lease). */
  heartbeat_age_seconds: num,
  /** What will happen, in one sentence (empty for `live`). */
  fate: str,
});
/** A running job's worker's health (see {@link workerHealth}). */
export type WorkerHealth = Static<typeof workerHealth>;

/** One worker as `workers --json` reports it (docs/architecture.md "Heartbeat and lease"). */
export const workerView = object({
  worker_id: str,
  pid: int,
  host: str,
  queue: str,
  status: enumOf(["live", "stale", "lease_expired", "stopped", "dead"]),
  started_at: num,
  heartbeat_at: num,
  stopped_at: nullable(num),
  stop_requested: bool,
  running_jobs: arrayOf(int),
});
/** One worker (see {@link workerView}). */
export type WorkerView = Static<typeof workerView>;
