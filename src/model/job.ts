/**
 * The persisted shapes (docs/architecture.md "Job states", "Attempt states",
 * "Migrations"). Times are epoch seconds (float, UTC) everywhere
 * in this module; renderers turn them into ISO-8601.
 */

/** States a job can be stored in. `failed` is reserved and never stored (docs/architecture.md "Job states"). */
export const JOB_STATES = ["queued", "running", "done", "dead", "canceled"] as const;
/** A stored job state. */
export type JobState = (typeof JOB_STATES)[number];
/** States reported in counts, `failed` included as 0 for compatibility. */
export const REPORTED_STATES = ["canceled", "dead", "done", "failed", "queued", "running"] as const;
/** Terminal states: the job will not run again unless retried. */
export const TERMINAL_STATES: readonly JobState[] = ["done", "dead", "canceled"];

/** States of an attempt (docs/architecture.md "Attempt states"). */
export const ATTEMPT_STATES = ["running", "succeeded", "failed", "timed_out", "abandoned", "canceled"] as const;
/** A stored attempt state. */
export type AttemptState = (typeof ATTEMPT_STATES)[number];

/** Why an attempt did not succeed (docs/architecture.md "Attempt states"). */
export const FAILURE_REASONS = ["process_exit", "timeout", "spawn_failed", "worker_crash", "canceled"] as const;
/** A failure reason. */
export type FailureReason = (typeof FAILURE_REASONS)[number];

/** Ledger event names (docs/architecture.md "Job states"). */
export const EVENTS = [
  "added",
  "claimed",
  "succeeded",
  "failed",
  "timed_out",
  "reaped",
  "dead",
  "retried",
  "canceled",
  "cancel_requested",
  "interrupted",
  "left_running",
  "held",
  "released",
  "edited",
] as const;
/** A ledger event name. */
export type EventName = (typeof EVENTS)[number];

/**
 * The job variable `add --kill-leftovers` sets to `1`: its worker then ends
 * what the job leaves running once its own process exits (docs/architecture.md
 * "Leftover processes"). A variable, so `--env`, a `--from` line and an
 * `enqueue` spec can say it too, and a retry or rerun keeps it.
 */
export const KILL_LEFTOVERS_VAR = "SPOOLCTL_KILL_LEFTOVERS";

/** What `add` stores for a new job. */
export interface NewJob {
  argv: string[];
  priority: number;
  queue: string;
  next_run_at: number;
  timeout_seconds: number;
  max_retries: number;
  /** null = unbounded. */
  max_crashes: number | null;
  idempotency_key: string | null;
  tags: Record<string, string>;
  note: string | null;
  cwd: string | null;
  env: Record<string, string>;
  /** The batch it belongs to (SQLite schema v12; docs/architecture.md "Batches"); absent or null: none. */
  batch?: string | null;
  /**
   * The trace context `add` found in its environment (SQLite schema v17,
   * PostgreSQL v19; docs/architecture.md "Traces"); absent or null: none.
   */
  trace?: JobTrace | null;
  /**
   * The job's name (`add --name`, a `--from` line's `ref`; SQLite schema v18,
   * PostgreSQL v20; docs/architecture.md "Job names"): a reference like a key,
   * shown in views and reports, never unique. Absent or null: none.
   */
  name?: string | null;
}

/** W3C trace context kept with a job: `TRACEPARENT` (valid, or null) with `TRACESTATE` and `BAGGAGE` as `add` found them. */
export interface JobTrace {
  traceparent: string | null;
  tracestate: string | null;
  baggage: string | null;
}

/** When a job's need counts as met: `success`, the need ended done; `done`, it ended however it ended. */
export const NEEDS_POLICIES = ["success", "done"] as const;
/** A needs policy (`add --needs-policy`). */
export type NeedsPolicy = (typeof NEEDS_POLICIES)[number];

/**
 * What a new job waits for (`add --needs`, docs/architecture.md "Dependencies"):
 * existing jobs by id, and jobs of the same add by their index in it.
 */
export interface JobNeeds {
  ids: number[];
  /** Indexes into the same `addJobs` call's jobs. */
  earlier: number[];
  policy: NeedsPolicy;
}

/** A job row: what `add` stored ({@link NewJob}) and what its life has written since. */
export interface Job extends NewJob {
  id: number;
  /** The batch it belongs to; null: none. */
  batch: string | null;
  /** Its name (`add --name`); null: none. */
  name: string | null;
  state: JobState;
  /** Job-owned failures charged so far (non-zero exit, timeout, spawn failure). */
  attempts: number;
  /** Worker crashes charged so far. */
  crashes: number;
  /** Number of the latest attempt (0 before the first claim); guards worker writes. */
  last_attempt_no: number;
  locked_by: string | null;
  locked_pid: number | null;
  locked_at: number | null;
  heartbeat_at: number | null;
  last_exit_code: number | null;
  last_error: string | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  cancel_requested: boolean;
  /** How many of its needs are not met yet (SQLite schema v14); the claim takes only jobs at 0. */
  needs_left: number;
  /**
   * Held by `hold` (SQLite schema v18, PostgreSQL v20; docs/architecture.md
   * "Holding a job"): a queued job no claim takes until `release`. Shown as
   * `held` in every view; its state stays `queued`.
   */
  held: boolean;
}

/** An attempt row. */
export interface Attempt {
  job_id: number;
  attempt_no: number;
  state: AttemptState;
  worker_id: string;
  worker_pid: number;
  /** Process group id of the job's child (= its pid, as it leads its own group). */
  pgid: number | null;
  /** Start time of that process (kernel clock ticks since boot on Linux), to recognise it later. */
  pgid_start_time: string | null;
  started_at: number;
  finished_at: number | null;
  exit_code: number | null;
  /** Signal number when the process died by a signal. */
  signal: number | null;
  error: string | null;
  failure_reason: FailureReason | null;
  stdout_path: string;
  stderr_path: string;
  /** The last non-empty stderr line its worker read at the end (schema v5); null when not recorded. */
  stderr_last_line: string | null;
  /** That line masked, as `<mask version>|<masked line>` (schema v8); null when not recorded. */
  stderr_signature: string | null;
  /**
   * The start time of the worker process that claimed it (as `workers.start_time`;
   * schema v7), telling that process apart from a later one with the same id
   * and PID; null for older rows.
   */
  worker_start_time: string | null;
}

/** Longest stderr line an attempt row keeps (characters; longer lines are cut). */
export const STDERR_LINE_MAX = 500;

/** A ledger row; `id` is the cursor. */
export interface JobEvent {
  id: number;
  job_id: number;
  at: number;
  event: EventName;
  worker_id: string | null;
  detail: string | null;
}

/** A registered `work` process (docs/architecture.md "Heartbeat and lease"). */
export interface WorkerRecord {
  worker_id: string;
  pid: number;
  host: string;
  boot_id: string | null;
  /** Process start time as recorded at registration (see worker/liveness). */
  start_time: string | null;
  /** The PID namespace (inode of `/proc/self/ns/pid`) it ran in; null: not recorded (schema < v10, or not Linux). */
  pid_ns?: string | null;
  queue: string;
  started_at: number;
  heartbeat_at: number;
  stop_requested: boolean;
  stopped_at: number | null;
}

/** New run settings of a job; absent fields stay as they are. */
export interface JobSettingsChange {
  timeout_seconds?: number;
  max_retries?: number;
  env?: Record<string, string>;
}

/** The fields `edit` can change, in the order `changed` lists them (docs/architecture.md "Editing a job"). */
export const EDITABLE_FIELDS = [
  "argv",
  "env",
  "cwd",
  "queue",
  "priority",
  "timeout_seconds",
  "max_retries",
  "next_run_at",
] as const;

/**
 * What `edit` changes of a queued job (docs/architecture.md "Editing a job");
 * absent fields stay as they are. `env` replaces the whole map; `cwd` null
 * clears it; `next_run_at` (epoch seconds) is `--delay` read against now.
 */
export interface JobEdit {
  argv?: string[];
  env?: Record<string, string>;
  cwd?: string | null;
  queue?: string;
  priority?: number;
  timeout_seconds?: number;
  max_retries?: number;
  next_run_at?: number;
}

/** Filters of `list`. */
export interface JobFilter {
  states?: JobState[];
  queue?: string;
  tags?: Record<string, string>;
  priorityMin?: number;
  /** Only jobs with id < beforeId (newest-first paging). */
  beforeId?: number;
  /** Only these job ids. */
  ids?: number[];
  /** Only jobs created at or after this time (epoch seconds). */
  createdSince?: number;
  /** Only jobs whose next_run_at is after this time (epoch seconds): with state queued, the scheduled ones. */
  runAfter?: number;
  /** Only jobs that finished at or after this time (epoch seconds; `--since`). */
  finishedSince?: number;
  /**
   * Only jobs whose last attempt failed for one of these reasons; a job
   * canceled before it ran counts as `canceled` (`--failure-reason`).
   */
  failureReasons?: FailureReason[];
  /**
   * Only jobs whose command line, argv joined by single spaces, matches this
   * shell glob as a whole (`*`, `?`, `[…]`, `[!…]`; case-sensitive; `--match`).
   */
  commandGlob?: string;
  /** Only jobs of this batch (`--batch`, docs/architecture.md "Batches"). */
  batch?: string;
  /**
   * Only jobs whose command line (argv joined by single spaces), idempotency
   * key or last error (`last_error` and the latest attempt's last stderr
   * line) contains this text, ASCII letters in either case
   * (`--search`, docs/architecture.md "Job filters"). A scan, newest first.
   */
  text?: string;
  /**
   * Only the dead jobs of this kept failure group, by its key (`--failure-group`;
   * docs/architecture.md "Kept dead counts"): a lookup in `dead_jobs`.
   */
  failureGroup?: string;
  /** Only jobs with id > afterId (a waiter's jobs added after it began). */
  afterId?: number;
  /** true: only held jobs; false: only jobs not held (docs/architecture.md "Holding a job"). */
  held?: boolean;
  limit: number;
}

/**
 * One group of terminal jobs by exact failure (see StoreReader.failureGroups):
 * the last attempt's reason, exit code or signal, and recorded stderr line.
 */
export interface FailureGroupRow {
  state: JobState;
  /** The last attempt's failure reason; `canceled` for a job canceled before it ran; null when unknown. */
  failure_reason: FailureReason | null;
  exit_code: number | null;
  signal: number | null;
  /**
   * The last attempt's stderr line masked, when its signature was recorded with
   * the mask version asked for ("" for a job that never ran); else null.
   */
  stderr_signature: string | null;
  /**
   * Without such a signature: the last attempt's recorded raw stderr line; null
   * when that was not recorded either, and then the group is one job.
   */
  stderr_last_line: string | null;
  count: number;
  /** Earliest and latest `finished_at` (`created_at` when unset), epoch seconds. */
  first_seen: number;
  last_seen: number;
  /** Lanes of its jobs, sorted. */
  lanes: string[];
  /** Its jobs' ids, newest (highest) first. */
  job_ids: number[];
}

/** Per-state, per-lane count row. */
export interface LaneCount {
  state: JobState;
  queue: string;
  n: number;
}

/**
 * What fail-fast does when a job of its batch ends dead (docs/architecture.md
 * "Batches"): `queued` cancels the batch's queued jobs; `now` also asks its
 * running jobs to stop, as `cancel --running` does.
 */
export const FAIL_FAST_MODES = ["queued", "now"] as const;
/** A fail-fast mode. */
export type FailFastMode = (typeof FAIL_FAST_MODES)[number];

/** A `batches` row (SQLite schema v12). Times are epoch seconds. */
export interface BatchRow {
  name: string;
  created_at: number;
  /** When it was sealed (no job can join it any more); null: still open. */
  sealed_at: number | null;
  /** Its fail-fast property; null: none. */
  fail_fast: FailFastMode | null;
  /** When fail-fast failed it (a job of it ended dead); null: not failed. */
  failed_at: number | null;
  /** The job whose dead outcome failed it. */
  failed_job_id: number | null;
}

/** A batch with its jobs counted by state (one statement). */
export interface BatchView extends BatchRow {
  counts: Record<JobState, number>;
  total: number;
}

/** How an add puts its jobs in a batch (see StoreWriter.addJobs). */
export interface BatchAdd {
  name: string;
  /** Sets the batch's fail-fast property (null: leaves it as it is). */
  failFast: FailFastMode | null;
  /** Seals the batch in the same transaction, after its jobs are added. */
  seal: boolean;
}

/**
 * A lane's steering row (docs/architecture.md "Lanes and slots"), as the
 * `lanes` table keeps it. Times are epoch seconds on the queue's clock.
 * A lane is paused while `paused_at` is set and `paused_until` is null or
 * later than the time of the claim that reads it.
 */
export interface LaneSetting {
  queue: string;
  /** Fleet-wide ceiling of the lane's running jobs; null: none set (a worker's --slots applies). */
  slots: number | null;
  /** When the pause was written; null: not paused. */
  paused_at: number | null;
  /** When the pause ends by itself (`pause --for`); null: until `resume`. */
  paused_until: number | null;
  pause_reason: string | null;
}
