/**
 * The narrow driver interface between the queue operations (`src/ops/`) and a
 * database. SQLite (`src/store/sqlite/`) is the one driver today; a PostgreSQL
 * driver (SPEC §10) implements the same interface and must pass the same shared
 * test suite (`test/store.test.ts`).
 *
 * Every method of {@link StoreWriter} runs inside the transaction opened by
 * {@link Store.write} (SQLite: `BEGIN IMMEDIATE`, SPEC §2), so an operation that
 * reads, decides and writes does so atomically. Times are epoch seconds (float).
 */
import type {
  Attempt,
  EventName,
  FailureReason,
  AttemptState,
  Job,
  JobEvent,
  JobFilter,
  JobState,
  LaneCount,
  NewJob,
  WorkerRecord,
} from "./model.ts";

/** Reads; inside {@link Store.read} they see one consistent snapshot. */
export interface StoreReader {
  /** The job with this id, or null. */
  getJob(id: number): Job | null;
  /** The queued or running job holding this idempotency key, or null (SPEC §4). */
  findActiveJobByKey(key: string): Job | null;
  /** The most recent job (any state) holding this idempotency key, or null. */
  findLatestJobByKey(key: string): Job | null;
  /** Jobs matching `filter`, newest first. */
  listJobs(filter: JobFilter): Job[];
  /** Job counts by state and lane. */
  countByStateAndLane(): LaneCount[];
  /** Queued jobs whose `next_run_at` is after `now`, per lane. */
  countScheduledByLane(now: number): { queue: string; n: number }[];
  /** The newest dead jobs. */
  recentDead(limit: number): Job[];
  /** The most recently finished failed, timed-out or abandoned attempts of the newest 10,000 jobs, newest first. */
  recentFailedAttempts(limit: number): Attempt[];
  /**
   * Jobs of a lane that hold `work --drain` open (SPEC §4): `running`, and
   * `waiting` = queued jobs that are due at `now` or wait out a retry/reap backoff.
   */
  laneBacklog(queue: string, now: number): { running: number; waiting: number };
  /** Attempts of a job, oldest first. */
  attemptsOf(jobId: number): Attempt[];
  /** One attempt, or null. */
  getAttempt(jobId: number, attemptNo: number): Attempt | null;
  /** Ledger rows of a job, oldest first. */
  eventsOf(jobId: number): JobEvent[];
  /** A queue-wide setting's raw JSON text, or null when unset. */
  getSetting(key: string): string | null;
  /**
   * Whether a lane is settled for `work --drain` (SPEC §4): nothing running,
   * nothing due at `now`, no retry/reap backoff pending.
   */
  laneSettled(queue: string, now: number): boolean;
  /** Earliest `next_run_at` of a queued job in the lane, or null. */
  nextDueAt(queue: string): number | null;
  /** Number of running jobs in a lane. */
  runningInLane(queue: string): number;
  /** Whether a queued job of the lane is due at `now` (a cheap check before claiming). */
  hasDueJob(queue: string, now: number): boolean;
  /** Running jobs whose heartbeat is older than `cutoff` (reap candidates, SPEC §4). */
  staleRunningJobs(cutoff: number): Job[];
  /** A worker's registry row, or null. */
  getWorker(workerId: string): WorkerRecord | null;
  /** Registry rows, most recently seen first. */
  listWorkers(limit: number): WorkerRecord[];
  /** Running jobs per owning worker id. */
  runningJobsByWorker(): { worker_id: string; job_id: number }[];
  /** Ledger rows with `id > afterId` (optionally of one job), oldest first, at most `limit`. */
  listEvents(query: EventQuery): JobEvent[];
  /**
   * Terminal jobs in `states` (only done, dead, canceled are ever returned) that
   * finished before `finishedBefore` (epoch seconds), oldest first: prune candidates.
   */
  pruneCandidates(states: JobState[], finishedBefore: number): Job[];
  /** How many attempt and ledger rows these jobs have. */
  historyCounts(jobIds: number[]): { attempts: number; events: number };
}

/** A page of the ledger (SPEC §5 `events`). */
export interface EventQuery {
  /** Only rows with a larger id (the cursor). */
  afterId: number;
  /** Only this job's rows. */
  jobId?: number;
  limit: number;
}

/** How an attempt was closed by someone other than its worker (e.g. `retry --force`). */
export interface AttemptClosing {
  jobId: number;
  attemptNo: number;
  state: AttemptState;
  failureReason: FailureReason | null;
  error: string;
  now: number;
}

/** The claim request (SPEC §4 "Claim order", "Lanes and slots"). */
export interface ClaimRequest {
  queue: string;
  workerId: string;
  workerPid: number;
  /** Fleet-wide ceiling of running jobs in the lane; null = none. */
  slots: number | null;
  now: number;
}

/** The outcome of an attempt as written back by its worker. */
export interface AttemptRecord {
  jobId: number;
  attemptNo: number;
  workerId: string;
  now: number;
  attemptState: AttemptState;
  exitCode: number | null;
  signal: number | null;
  error: string | null;
  failureReason: FailureReason | null;
  jobState: JobState;
  attempts: number;
  crashes: number;
  nextRunAt: number;
}

/** Writes; only valid inside {@link Store.write}. */
export interface StoreWriter extends StoreReader {
  /** Inserts a job in state `queued`; returns the stored row. */
  insertJob(job: NewJob, now: number): Job;
  /** Appends a ledger row. */
  appendEvent(jobId: number, event: EventName, workerId: string | null, detail: string | null, now: number): void;
  /**
   * The claim: one statement that moves the next eligible job of the lane to
   * `running`, owned by the worker, and bumps its attempt number; null when none
   * is eligible or the lane is at its slot ceiling.
   */
  claimNext(req: ClaimRequest): Job | null;
  /** Inserts the attempt row of a fresh claim. */
  insertAttempt(attempt: Omit<Attempt, "finished_at" | "exit_code" | "signal" | "error" | "failure_reason" | "pgid" | "pgid_start_time">): void;
  /** Records the child's process group and its start time on the running attempt. */
  setAttemptProcess(jobId: number, attemptNo: number, pgid: number, startTime: string | null): void;
  /**
   * Writes an attempt's outcome and the job's next state, guarded by owner and
   * attempt number (SPEC §4): returns false, changing nothing, when the worker
   * no longer owns that attempt.
   */
  recordAttempt(rec: AttemptRecord): boolean;
  /** Sets a queue-wide setting (raw JSON text). */
  setSetting(key: string, value: string): void;
  /** Registers or refreshes a worker's registry row. */
  upsertWorker(worker: WorkerRecord): void;
  /** Marks a worker as stopped (it exited cleanly). */
  markWorkerStopped(workerId: string, now: number): void;
  /**
   * Advances a running job's heartbeat if the worker still owns the attempt.
   * Returns null when it does not, else whether a cancel was requested.
   */
  heartbeatJob(jobId: number, attemptNo: number, workerId: string, now: number): { cancelRequested: boolean } | null;
  /** Advances a worker's registry heartbeat; returns whether a stop was requested. */
  heartbeatWorker(workerId: string, now: number): { stopRequested: boolean };
  /** Sets `stop_requested` on registered, not yet stopped workers (one, or all when null); returns their ids. */
  requestWorkerStop(workerId: string | null): string[];
  /** Removes a queue-wide setting, so its default applies again. Returns whether it was set. */
  deleteSetting(key: string): boolean;
  /**
   * Requeues a job that is in state `from` (dead, canceled, or running for
   * `retry --force`) with fresh budgets: `attempts` and `crashes` reset, due at
   * `now`, ownership and `cancel_requested` cleared, history kept. Clearing
   * `locked_by` is what makes the old worker's late writes change nothing.
   * Returns false, changing nothing, when the job is no longer in `from`.
   */
  requeueJob(jobId: number, from: JobState, now: number): boolean;
  /**
   * Closes a still-running attempt row on behalf of its worker (`retry --force`).
   * Returns false when the attempt is not running.
   */
  closeAttempt(closing: AttemptClosing): boolean;
  /** Cancels a queued job at once (SPEC §4 "Cancel"). Returns false when it is not queued. */
  cancelQueuedJob(jobId: number, now: number): boolean;
  /**
   * Sets `cancel_requested` on a running job; its worker sees it on the next
   * heartbeat. Returns false when the job is not running.
   */
  requestCancel(jobId: number): boolean;
  /**
   * Deletes terminal jobs with their attempts and ledger rows (never queued or
   * running ones, whatever the ids). Returns the row counts deleted.
   */
  deleteJobs(jobIds: number[]): { jobs: number; attempts: number; events: number };
  /**
   * Changes how a job will run next (triage's "retry with a new timeout, retry
   * budget or env"), guarded by its state like {@link requeueJob}: returns
   * false, changing nothing, when the job is no longer in `from`. Fields left
   * out keep their value; `env` replaces the whole map.
   */
  updateJobSettings(jobId: number, from: JobState, changes: JobSettingsChange): boolean;
}

/** New run settings of a job; absent fields stay as they are. */
export interface JobSettingsChange {
  timeout_seconds?: number;
  max_retries?: number;
  env?: Record<string, string>;
}

/** An open queue. */
export interface Store {
  /** Absolute path of the database (":memory:" for an absent queue opened read-only). */
  readonly path: string;
  /** Absolute path of the spool folder holding attempt output. */
  readonly spoolDir: string;
  /** Runs `fn` in a read snapshot. */
  read<T>(fn: (tx: StoreReader) => T): T;
  /**
   * Runs `fn` in one write transaction; commits when it returns, rolls back when
   * it throws. Raises `LOCKED` (exit 4) when the write lock cannot be had within
   * the busy timeout.
   */
  write<T>(fn: (tx: StoreWriter) => T): T;
  /** Closes the connection. */
  close(): void;
}
