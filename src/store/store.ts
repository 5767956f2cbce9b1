/**
 * The driver interface between the queue operations (`src/ops/`) and a
 * database: every method is async and does a whole operation, so that a driver
 * reached over a network pays one round trip per call. Each driver (SQLite in
 * `src/store/sqlite/`, PostgreSQL in `src/store/postgres/`) passes the one
 * conformance suite in `test/store/`. The driver contract, and which rules rest
 * on isolation, are in docs/architecture.md ("The driver contract", "Rules that
 * rest on isolation").
 *
 * Every method of {@link StoreWriter} runs inside the transaction opened by
 * {@link Store.write}, so an operation that reads, decides and writes does so
 * atomically. A callback given to `read`/`write` awaits nothing but the
 * transaction's own methods. Times are epoch seconds (float).
 */
import { SpoolError } from "../contract/errors.ts";
import type { RetryNeedRow } from "./bulk-rows.ts";
import type {
  Attempt,
  AttemptState,
  BatchAdd,
  BatchView,
  EventName,
  FailFastMode,
  FailureGroupRow,
  FailureReason,
  Job,
  JobEvent,
  JobFilter,
  JobNeeds,
  JobState,
  LaneCount,
  LaneSetting,
  NewJob,
  WorkerRecord,
} from "./model.ts";
import type { RecurringReader, RecurringWriter } from "./recurring.ts";

/** Reads; inside {@link Store.read} they see one consistent snapshot. */
export interface StoreReader {
  /** Schedules and hooks (docs/architecture.md "Recurring jobs", "Hooks"). */
  readonly recurring: RecurringReader;
  /** The job with this id, or null. */
  getJob(id: number): Promise<Job | null>;
  /** The queued or running job holding this idempotency key, or null (docs/architecture.md "Idempotency"). */
  findActiveJobByKey(key: string): Promise<Job | null>;
  /**
   * The queued or running job holding each of `keys`, by key (keys without one are absent); one
   * statement on PostgreSQL. The batch form of {@link findActiveJobByKey} for `add --from` and `retry --all`.
   */
  findActiveJobsByKeys(keys: string[]): Promise<Map<string, Job>>;
  /** The most recent job (any state) holding this idempotency key, or null. */
  findLatestJobByKey(key: string): Promise<Job | null>;
  /** Jobs matching `filter`, newest first. */
  listJobs(filter: JobFilter): Promise<Job[]>;
  /**
   * Dead and/or canceled jobs matching `filter` (its states default to both;
   * other states are ignored; `limit`, `beforeId` do not apply), grouped by
   * failure: state, the last attempt's reason, exit code, signal and its
   * recorded signature line when that was masked by `maskVersion` (else its
   * raw stderr line; else, unrecorded, one group per job)
   * (docs/architecture.md "Triage"). One statement.
   */
  failureGroups(filter: Omit<JobFilter, "limit" | "beforeId">, maskVersion: number): Promise<FailureGroupRow[]>;
  /**
   * The unmet needs of each of `jobIds` that waits for any (docs/architecture.md
   * "Dependencies"): need ids ascending, by job id; jobs without are absent. One statement.
   */
  unmetNeeds(jobIds: number[]): Promise<Map<number, number[]>>;
  /**
   * How many queued jobs wait for needs, and the oldest `limit` of them with
   * the needs each still waits on (`status`; docs/architecture.md "Dependencies").
   */
  waitingOnNeeds(limit: number): Promise<WaitingOnNeeds>;
  /** Job counts by state and lane. */
  countByStateAndLane(): Promise<LaneCount[]>;
  /** Queued jobs whose `next_run_at` is after `now`, per lane. */
  countScheduledByLane(now: number): Promise<{ queue: string; n: number }[]>;
  /** The newest dead jobs. */
  recentDead(limit: number): Promise<Job[]>;
  /** The most recently finished failed, timed-out or abandoned attempts of the newest 10,000 jobs, newest first. */
  recentFailedAttempts(limit: number): Promise<Attempt[]>;
  /**
   * What holds `work --drain` open in lane `queue` at `now` (epoch seconds), one
   * statement (docs/architecture.md "Drain"): its running jobs, and its queued
   * jobs that are due or have run before (a retry or reap backoff, a forced
   * retry's hold-off). A job delayed by its adder that never ran does not count.
   * The lane is settled when both are 0 ({@link drainSettled}); the worker's
   * exit and its progress line read this one answer.
   */
  drainState(queue: string, now: number): Promise<DrainState>;
  /** Attempts of a job, oldest first. */
  attemptsOf(jobId: number): Promise<Attempt[]>;
  /** One attempt, or null. */
  getAttempt(jobId: number, attemptNo: number): Promise<Attempt | null>;
  /** Ledger rows of a job, oldest first. */
  eventsOf(jobId: number): Promise<JobEvent[]>;
  /**
   * Output an attempt shipped to the database (see {@link Store.shipsOutput}):
   * up to `maxBytes` from byte `offset` of one stream, and the stream's shipped
   * size; null when nothing was shipped for it.
   */
  readAttemptOutput(
    jobId: number,
    attemptNo: number,
    stream: OutputStream,
    offset: number,
    maxBytes: number,
  ): Promise<ShippedOutput | null>;
  /** Every queue-wide setting that is set, as raw JSON text by key (one round trip). */
  listSettings(): Promise<Record<string, string>>;
  /** A queue-wide setting's raw JSON text, or null when unset. */
  getSetting(key: string): Promise<string | null>;
  /** Earliest `next_run_at` of a queued job in the lane, or null. */
  nextDueAt(queue: string): Promise<number | null>;
  /**
   * Running jobs whose heartbeat (their lease) is older than `leaseSeconds`,
   * judged by the database's clock (reap candidates, docs/architecture.md "Reaping").
   */
  staleRunningJobs(leaseSeconds: number): Promise<Job[]>;
  /** A worker's registry row, or null. */
  getWorker(workerId: string): Promise<WorkerRecord | null>;
  /** Registry rows, most recently seen first. */
  listWorkers(limit: number): Promise<WorkerRecord[]>;
  /** Running jobs per owning worker id. */
  runningJobsByWorker(): Promise<{ worker_id: string; job_id: number }[]>;
  /** Ledger rows with `id > afterId` (optionally of one job), oldest first, at most `limit`. */
  listEvents(query: EventQuery): Promise<JobEvent[]>;
  /**
   * Terminal jobs in `states` (only done, dead, canceled are ever returned) that
   * finished before `finishedBefore` (epoch seconds), oldest first: prune candidates.
   */
  pruneCandidates(states: JobState[], finishedBefore: number): Promise<Job[]>;
  /** How many attempt and ledger rows these jobs have. */
  historyCounts(jobIds: number[]): Promise<{ attempts: number; events: number }>;
  /**
   * A batch with its jobs counted by state, one statement (docs/architecture.md
   * "Batches"); null when no job was ever added to it.
   */
  getBatch(name: string): Promise<BatchView | null>;
  /** Batches with their counts, newest first, at most `limit` (one statement). */
  listBatches(limit: number): Promise<BatchView[]>;
  /**
   * Every lane's steering row (docs/architecture.md "Lanes and slots"), by
   * lane name; lanes never paused nor given slots may have none. One statement.
   */
  listLanes(): Promise<LaneSetting[]>;
}

/** Queued jobs that wait for other jobs (see {@link StoreReader.waitingOnNeeds}). */
export interface WaitingOnNeeds {
  count: number;
  /** Oldest first; `waiting_on`: the ids of its unmet needs, ascending. */
  jobs: { job_id: number; waiting_on: number[] }[];
}

/** What holds a drain open (see {@link StoreReader.drainState}). */
export interface DrainState {
  /** Running jobs of the lane. */
  running: number;
  /** Queued jobs of the lane that are due, or have run before and wait out a backoff or hold-off. */
  waiting: number;
}

/**
 * What still holds a drain in a lane in `state` (docs/architecture.md "Drain"):
 * its running jobs and, unless the lane is `paused` (its queued jobs cannot
 * start until it is resumed), its waiting ones. The one count the worker's
 * exit ({@link drainSettled}) and the drain's progress line both use.
 */
export function drainLeft(state: DrainState, paused = false): number {
  return paused ? state.running : state.running + state.waiting;
}

/** Whether a lane in `state` is settled: {@link drainLeft} is 0 (docs/architecture.md "Drain"). */
export function drainSettled(state: DrainState, paused = false): boolean {
  return drainLeft(state, paused) === 0;
}

/** An attempt's output stream. */
export type OutputStream = "stdout" | "stderr";

/** Shipped output of one stream (see {@link StoreReader.readAttemptOutput}). */
export interface ShippedOutput {
  bytes: Uint8Array;
  /** Bytes shipped for the stream so far. */
  size: number;
  /** Whether the per-attempt cap cut the stream. */
  truncated: boolean;
}

/** A piece of output a worker ships (see {@link StoreWriter.appendAttemptOutput}). */
export interface OutputChunk {
  jobId: number;
  attemptNo: number;
  workerId: string;
  stream: OutputStream;
  /** Byte offset of `bytes` in the stream. */
  offset: number;
  bytes: Uint8Array;
  truncated: boolean;
}

/** A page of the ledger (`events`, docs/contract.md "Paging: meta.pagination"). */
export interface EventQuery {
  /** Only rows with a larger id (the cursor). */
  afterId: number;
  /** Only this job's rows. */
  jobId?: number;
  /** Only rows of this batch's jobs (`events --batch`). */
  batch?: string;
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

/** The claim request (docs/architecture.md "Claim order", "Lanes and slots"). */
export interface ClaimRequest {
  queue: string;
  workerId: string;
  workerPid: number;
  /** The claiming process's start time, recorded on each attempt (`Attempt.worker_start_time`); null when unknown. */
  workerStartTime?: string | null;
  /**
   * The claimant's own fleet-wide ceiling of running jobs in the lane (`work
   * --slots`); null = none. A ceiling set on the lane (`lane set --slots`)
   * wins over it, and a paused lane claims nothing (docs/architecture.md
   * "Lanes and slots"): both are read by the claim statement itself.
   */
  slots: number | null;
  /** At most this many jobs (≥ 1). */
  limit: number;
  /**
   * When the claim is dated, epoch seconds on the queue's clock: jobs due by
   * then are eligible, and the leases it starts begin then. Absent: the store
   * reads its clock when the claim itself runs, after any wait for a lock, so
   * a claim that waited (a result held up by a locked row) never starts a
   * lease in the past that a reaper elsewhere would take for expired
   * (docs/architecture.md "The claim"). Tests give it to backdate claims.
   */
  now?: number;
}

/** A claim whose time is set (see {@link ClaimRequest.now}). */
export type DatedClaim = ClaimRequest & { now: number };

/** `req` dated by `now()` (the store's clock, epoch seconds) unless the caller gave it a time; drivers call it as the claim runs. */
export function datedClaim(req: ClaimRequest, now: () => number): DatedClaim {
  return req.now === undefined ? { ...req, now: now() } : (req as DatedClaim);
}

/** A job a claim moved to `running`, with the attempt row it opened. */
export interface ClaimedJob {
  job: Job;
  attempt: Attempt;
}

/** One ledger row to append with a write (the worker id and time come from the write). */
export interface EventToAppend {
  event: EventName;
  workerId: string | null;
  detail: string | null;
}

/** One running attempt a worker renews its lease on. */
export interface AttemptKey {
  jobId: number;
  attemptNo: number;
  /**
   * The attempt's process group, sent with the first heartbeat after the spawn
   * (docs/architecture.md "The claim"): recorded on the attempt row when the
   * worker still owns it. Absent once recorded.
   */
  process?: AttemptProcess;
}

/** An attempt's process group and the start time of its leader (as /proc shows it; null: not read). */
export interface AttemptProcess {
  pgid: number;
  startTime: string | null;
}

/** What a heartbeat learned about one attempt. */
export interface AttemptLease {
  jobId: number;
  attemptNo: number;
  /** False when the worker no longer owns the attempt (canceled, force-retried, reaped). */
  owned: boolean;
  cancelRequested: boolean;
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
  /**
   * The last non-empty line of the attempt's stderr as its worker read it at
   * the end (at most {@link STDERR_LINE_MAX} characters), kept for triage's
   * failure signatures; null or absent when not read (docs/architecture.md "Triage").
   */
  stderrLastLine?: string | null;
  /**
   * That line's failure signature as stored: `<mask version>|<masked line>`
   * (see failure-signature.ts); null or absent when not computed.
   */
  stderrSignature?: string | null;
  jobState: JobState;
  /** Ledger rows written with the outcome, only when it was written. */
  events: EventToAppend[];
  /** The attempt's process group, when no heartbeat recorded it yet; kept as is when one did. */
  process?: AttemptProcess | null;
  attempts: number;
  crashes: number;
  nextRunAt: number;
}

/** Largest SQLite file {@link Store.checkIntact} reads whole (`status`'s check), bytes; `doctor` checks any size. */
export const INTACT_CHECK_MAX_BYTES = 256 * 1024 * 1024;

/** Longest stderr line an attempt row keeps (characters; longer lines are cut). */
export const STDERR_LINE_MAX = 500;

/** Writes; only valid inside {@link Store.write}. */
export interface StoreWriter extends StoreReader {
  /** Schedules and hooks, written in this transaction. */
  readonly recurring: RecurringWriter;
  /** Inserts a job in state `queued`; returns the stored row. */
  insertJob(job: NewJob, now: number): Promise<Job>;
  /**
   * Adds jobs in state `queued` with their `added` events (the ledger rows of
   * an add, written here so every driver writes the same), in order: row i of
   * the answer is `jobs[i]`, ids ascending. PostgreSQL: one multi-row INSERT;
   * signals `ready:<lane>` for each lane (docs/architecture.md "Waking").
   *
   * With `batch` (docs/architecture.md "Batches"), the same transaction first
   * creates or joins the batch, guarded in the upsert itself: a batch that is
   * sealed or was failed by fail-fast takes no job (`CONFLICT`, nothing
   * added; PostgreSQL holds the batch row's lock to COMMIT, so a seal or a
   * fail-fast racing the add waits for it and then sees its jobs). Every job
   * gets `batch.name`; `batch.failFast` sets the property; `batch.seal` seals
   * it after the jobs are in. An add of no job with `batch` still creates
   * (and may seal) the batch.
   *
   * `needs[i]` (absent: none) is what `jobs[i]` waits for (docs/architecture.md
   * "Dependencies"): its edges are written and its `needs_left` counted in the
   * same transaction. Guard: PostgreSQL locks the named needs (`FOR SHARE`)
   * before reading their states, so a need cannot end between that read and
   * the commit; each need must exist, and one that must succeed must not be
   * dead or canceled: `INVALID_INPUT` otherwise, nothing added.
   */
  addJobs(jobs: NewJob[], now: number, needs?: (JobNeeds | undefined)[], batch?: BatchAdd | null): Promise<Job[]>;
  /**
   * Seals a batch (`batch seal`, docs/architecture.md "Batches"): no job can
   * join it from this commit on, so a waiter may call it finished once its
   * jobs ended. Guard: an upsert that keeps a set `sealed_at` (sealing twice keeps
   * the first time); a name no add used yet is created sealed and empty (a
   * CI step that generated no job). Writes no ledger row; wakes readers.
   * Returns the batch.
   */
  sealBatch(name: string, now: number): Promise<BatchView>;
  /**
   * Sets a batch's fail-fast property (`wait --batch --fail-fast`; `now`
   * wins over `queued`), and, when a job of it already ended dead, fails it at
   * once in the same transaction, as the dead outcome would have
   * (`failFastOnDead` in each driver: the batch row locked first, so a
   * dead outcome racing this write is seen by one of the two). Returns the
   * batch, or null when there is none of that name.
   */
  setBatchFailFast(name: string, mode: FailFastMode, now: number): Promise<BatchView | null>;
  /** Appends a ledger row. */
  appendEvent(
    jobId: number,
    event: EventName,
    workerId: string | null,
    detail: string | null,
    now: number,
  ): Promise<void>;
  /**
   * Writes an attempt's outcome, the job's next state and `rec.events`, fenced
   * by (job, attempt, worker) (docs/architecture.md "Fencing"): returns false,
   * changing nothing, when the worker no longer owns that attempt.
   * A job of a batch that ends dead fails the batch when it has fail-fast,
   * in the same transaction (`failFastOnDead` in each driver's
   * batch-queries.ts: its queued jobs canceled, with `now` its running ones
   * asked to stop); one requeued for a retry in a batch fail-fast failed is
   * canceled instead (docs/architecture.md "Batches"). A job that
   * ended (done, dead, canceled) settles its dependents in the same
   * transaction (the driver's job-ended hook, docs/architecture.md
   * "Dependencies"): met needs counted down (a dependent at 0 wakes its lane),
   * dependents of a failed need closed as `need_failed`, down the chain.
   */
  recordAttempt(rec: AttemptRecord): Promise<boolean>;
  /**
   * Appends `bytes` at byte `offset` of an attempt's shipped stream, fenced by
   * (job, attempt, worker): returns false, changing nothing, when the worker no
   * longer owns the attempt. A repeated chunk (same offset) is written once.
   * `truncated` marks that the per-attempt cap was reached and later bytes dropped.
   */
  appendAttemptOutput(chunk: OutputChunk): Promise<boolean>;
  /** Sets a queue-wide setting (raw JSON text). */
  setSetting(key: string, value: string): Promise<void>;
  /** Registers or refreshes a worker's registry row. */
  upsertWorker(worker: WorkerRecord): Promise<void>;
  /** Marks a worker as stopped (it exited cleanly). */
  markWorkerStopped(workerId: string, now: number): Promise<void>;
  /**
   * Renews the lease of each attempt the worker still owns (one statement, the
   * lease dated by the store's clock: the database's on PostgreSQL, this
   * host's on SQLite) and reports, per attempt, whether it is still owned and
   * whether a cancel was requested. An attempt sent with its `process` and
   * still owned gets its process group recorded (keyed by job and attempt).
   */
  heartbeatJobs(workerId: string, attempts: AttemptKey[]): Promise<AttemptLease[]>;
  /** Advances a worker's registry heartbeat; returns whether a stop was requested. */
  heartbeatWorker(workerId: string, now: number): Promise<{ stopRequested: boolean }>;
  /** Sets `stop_requested` on registered, not yet stopped workers (one, or all when null); returns their ids. */
  requestWorkerStop(workerId: string | null): Promise<string[]>;
  /** Removes a queue-wide setting, so its default applies again. Returns whether it was set. */
  deleteSetting(key: string): Promise<boolean>;
  /**
   * Requeues a job that is in state `from` (dead, canceled, or running for
   * `retry --force`) with fresh budgets: `attempts` and `crashes` reset, due at
   * `now`, ownership and `cancel_requested` cleared, history kept. Clearing
   * `locked_by` is what makes the old worker's late writes change nothing.
   * Returns false, changing nothing, when the job is no longer in `from`.
   * Raises `IDEMPOTENCY_CONFLICT` ({@link activeKeyTaken}) when another active
   * job holds the job's idempotency key: the schema's one-active-job-per-key
   * rule (docs/architecture.md "Rules that rest on isolation").
   * `dueAt`: when it comes due, epoch seconds. A job of a batch that
   * fail-fast failed reopens that batch's verdict (`reopenFailedBatches`, each
   * driver's batch-queries.ts; so do {@link requeueJobs} and {@link rerunJob}).
   */
  requeueJob(jobId: number, from: JobState, dueAt: number): Promise<boolean>;
  /**
   * {@link requeueJob} for many jobs at once (`retry --all`): each job of
   * `jobIds` still in one of the states `from` is requeued, due at `dueAt`;
   * returns the ids requeued (one statement). Raises `IDEMPOTENCY_CONFLICT`
   * when another active job holds a key of one of them (nothing requeued).
   */
  requeueJobs(jobIds: number[], from: JobState[], dueAt: number): Promise<number[]>;
  /**
   * Runs a finished job again (`rerun`, docs/architecture.md "Rerun"): guarded
   * in the statement by `state IN ('done','dead','canceled')`, the job goes
   * back to `queued` due at `dueAt` (epoch seconds) with fresh budgets and no
   * owner, like {@link requeueJob}; its attempts and ledger are kept and its
   * next attempt is numbered after them. Appends one `retried` ledger row with
   * detail `{"from": <state>, "rerun": true}` at `now`, and wakes every worker
   * (docs/architecture.md "Waking"). Returns the state it was rerun from, or
   * null, changing nothing, when the job is missing or not finished. Raises
   * `IDEMPOTENCY_CONFLICT` ({@link activeKeyTaken}) when another active job
   * holds its idempotency key.
   */
  rerunJob(jobId: number, dueAt: number, now: number): Promise<JobState | null>;
  /**
   * Closes a still-running attempt row on behalf of its worker (`retry --force`).
   * Returns false when the attempt is not running.
   */
  closeAttempt(closing: AttemptClosing): Promise<boolean>;
  /**
   * Revives the dependents the failure of `needIds` closed, once those needs
   * were requeued by `retry` in this transaction (docs/architecture.md
   * "Dependencies"): each canceled job with an edge to one of them marked
   * closed, none of whose other needs that must succeed is dead or canceled
   * and whose idempotency key no active job holds, goes back to `queued` due
   * at `now` (epoch seconds) with fresh budgets and its unmet needs recounted,
   * with a `retried` ledger row `{"from":"canceled","reason":"need_retried","need":N}`;
   * and so on down the chain. Guard: `state = 'canceled'` in the UPDATE; on
   * PostgreSQL the edges are locked before the count. Wakes every worker when
   * anything was revived. Returns the ids revived.
   */
  reviveDependents(needIds: number[], now: number): Promise<number[]>;
  /**
   * Cancels a queued job at once (docs/architecture.md "Cancel"). Returns false when it is not queued.
   * Its dependents are settled in the same transaction (the driver's job-ended hook, "Dependencies").
   */
  cancelQueuedJob(jobId: number, now: number): Promise<boolean>;
  /**
   * Sets `cancel_requested` on a running job; its worker sees it on the next
   * heartbeat. Returns false when the job is not running.
   */
  requestCancel(jobId: number): Promise<boolean>;
  /**
   * `retry --all`'s first read (docs/architecture.md "Retry"): the dead or
   * canceled jobs matching `filter` that carry an idempotency key, newest
   * first, for `planRetryAll` (a job without a key needs no decision).
   */
  keyedRetryMatches(filter: Omit<JobFilter, "limit">): Promise<Job[]>;
  /**
   * `retry --all`'s second read: the unmet needs, dead or canceled, of the
   * dead or canceled jobs matching `filter`, each with whether the need
   * matches too; by job then need, ascending (for `blockedRetries`).
   */
  retryNeedRows(filter: Omit<JobFilter, "limit">): Promise<RetryNeedRow[]>;
  /**
   * `retry --all`'s write, in SQL (docs/architecture.md "Retry"): every job
   * matching `filter`, not in `exclude`, requeued like {@link requeueJob} due
   * at `now` (epoch seconds). Guard in the UPDATE's WHERE: still dead or
   * canceled, and no active job holds its key; a job that changed meanwhile
   * is left out, not an error. Appends a `retried` row `{"from":…}` per job,
   * reopens fail-fast batches, wakes every worker. Returns the jobs requeued,
   * ascending. Raises `IDEMPOTENCY_CONFLICT` like {@link requeueJobs}.
   */
  requeueMatching(filter: Omit<JobFilter, "limit">, exclude: number[], now: number): Promise<number[]>;
  /**
   * `cancel` of checked jobs in one statement (docs/architecture.md "Cancel"):
   * each of `queuedIds` still queued becomes `canceled` (its dependents and
   * hooks settled as {@link cancelQueuedJob} does, every worker woken), each of
   * `runningIds` still running gets `cancel_requested` for its worker. Returns
   * those changed, ascending; a job no longer in its state is absent. No events.
   */
  cancelMany(
    queuedIds: number[],
    runningIds: number[],
    now: number,
  ): Promise<{ canceled: number[]; requested: number[] }>;
  /**
   * Deletes jobs with their attempts, ledger rows and (PostgreSQL) shipped
   * output rows, one statement per table. Guard, in the SQL: only terminal
   * jobs (`state IN ('done','dead','canceled')`), and with `opts.queued` (the
   * `delete` verb) queued ones too; never a running job, whatever the ids
   * (`prune` and triage leave `opts` out). PostgreSQL locks the rows first, so
   * a job a claim takes meanwhile is running by then and is skipped.
   * Returns the row counts deleted; signals no worker (nothing became work).
   */
  deleteJobs(
    jobIds: number[],
    opts?: { queued?: boolean },
  ): Promise<{ jobs: number; attempts: number; events: number }>;
  /**
   * Changes how a job will run next (triage's "retry with a new timeout, retry
   * budget or env"), guarded by its state like {@link requeueJob}: returns
   * false, changing nothing, when the job is no longer in `from`. Fields left
   * out keep their value; `env` replaces the whole map.
   */
  updateJobSettings(jobId: number, from: JobState, changes: JobSettingsChange): Promise<boolean>;
  /**
   * Pauses lane `queue` (`spoolctl pause`, docs/architecture.md "Lanes and
   * slots"): one upsert of its `lanes` row setting `paused_at = now`,
   * `paused_until = until` (epoch seconds; null: until resumed) and the
   * reason. Its guard is the claim's: once this commits, no claim of the lane
   * on any host takes a job until `paused_until` has passed by the claim's own
   * time, or {@link resumeLane} (PostgreSQL: the upsert waits for the claims
   * holding the lane row, which commit first; later ones read the pause).
   * Running jobs go on. Writes no ledger row; wakes every worker (they
   * re-read their lanes). Returns the row as written.
   */
  pauseLane(queue: string, now: number, until: number | null, reason: string | null): Promise<LaneSetting>;
  /**
   * Ends the pause of lane `queue` (`spoolctl resume`), one UPDATE clearing
   * `paused_at`, `paused_until` and the reason. Returns the row as it was when
   * the lane was paused at `now` (epoch seconds), else null (changing nothing
   * that matters: an expired pause is cleared too). Writes no ledger row;
   * wakes every worker, since the lane's jobs may now be claimed.
   */
  resumeLane(queue: string, now: number): Promise<LaneSetting | null>;
  /**
   * Sets lane `queue`'s fleet-wide ceiling of running jobs (`lane set
   * --slots`; null clears it), one upsert. Every later claim of the lane reads
   * it in its own statement and it wins over the claimant's `slots`
   * (docs/architecture.md "Lanes and slots"). Writes no ledger row; wakes
   * every worker (a raised ceiling frees slots). Returns the row as written.
   */
  setLaneSlots(queue: string, slots: number | null): Promise<LaneSetting>;
}

/** New run settings of a job; absent fields stay as they are. */
export interface JobSettingsChange {
  timeout_seconds?: number;
  max_retries?: number;
  env?: Record<string, string>;
}

/** A wake-up source: resolves soon after another process commits to the queue. */
export interface Waker {
  /** Resolves at the next commit seen or after `ms`, whichever is first. */
  wait(ms: number): Promise<void>;
  /** Wakes a pending {@link wait} now (used by the worker's own events). */
  poke(): void;
  close(): void;
}

/** How the database answers one statement: the plan's lines, as the driver's EXPLAIN prints them. */
export interface QueryPlan {
  /** The statement's name (the driver's hot-path table: src/store/<driver>/hot-path.ts). */
  name: string;
  plan: string[];
}

/**
 * A worker's wake-up source (docs/architecture.md "Waking"): resolves when
 * work it may take appears in its lane — a job added or requeued into it, or,
 * when asked for, a job of the lane ending (a freed slot) — or a stop or an
 * operator's retry or cancel is written; not on every commit of every worker.
 */
export interface WorkWaker {
  /**
   * Resolves at the next such signal (`freed`: a lane's job ending counts too), a poke, or after `ms`.
   * `hungry` (default true): the worker has room for another job, so a signal could give it one.
   * A busy worker (false) is woken by its own pokes and the poll; a driver whose wake-ups cost the
   * server something per listener (PostgreSQL: every commit that notifies signals every listening
   * backend) stops listening while the worker is busy (docs/architecture.md "Waking").
   */
  wait(ms: number, freed: boolean, hungry?: boolean): Promise<void>;
  /** Wakes a pending {@link wait} now (the worker's own attempt ended). */
  poke(): void;
  close(): void;
}

/** One readiness check a driver reports to `doctor`. */
export interface StoreCheck {
  id: string;
  status: "pass" | "warn" | "fail" | "skip";
  message: string;
  remediation: string | null;
}

/**
 * How a write commits (docs/architecture.md "Durability"). `durable: false`
 * is for a worker's own writes that acknowledge nothing to anyone (its
 * results, heartbeats, its registry row): the commit need not be on disk
 * before it returns, and a power cut may roll it back (SQLite:
 * `synchronous=NORMAL` for that commit, the next durable commit syncs it too;
 * PostgreSQL: `synchronous_commit = off` for that transaction). Both logs are
 * written in order, so a commit that survives brings every earlier one with
 * it. Default: durable.
 */
export interface WriteOptions {
  durable?: boolean;
}

/** An open queue. */
export interface Store {
  /** Which driver this is. */
  readonly driver: "sqlite" | "postgres";
  /** Where the queue is, fit to print: a file path, or a URL without its password. */
  readonly location: string;
  /** Absolute path of the spool folder holding attempt output on this host. */
  readonly spoolDir: string;
  /**
   * Whether the queue exists yet (false: an absent queue opened for reading,
   * which reads as empty and creates nothing).
   */
  readonly exists: boolean;
  /** The queue's identity (kept in `meta`; "" for an absent queue), used for attempt markers. */
  readonly queueId: string;
  /**
   * The queue's clock, epoch seconds: this host's clock corrected by the skew
   * to the database's measured at connect (SQLite: this host's clock). Every
   * time a worker writes comes from here, so hosts whose clocks disagree still
   * agree on when a job is due (docs/architecture.md "Clocks").
   */
  now(): number;
  /**
   * Whether workers ship attempt output into the database as it is written
   * (a queue shared by several hosts), so that readers on other hosts see it.
   */
  readonly shipsOutput: boolean;
  /** Runs `fn` in a read snapshot. */
  read<T>(fn: (tx: StoreReader) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` in one write transaction; commits when it resolves, rolls back
   * when it throws. Raises `LOCKED` (exit 4) when the write lock cannot be had
   * in time, `INTERNAL` with `detail.storage` when the storage fails.
   * `opts.durable` (default true): see {@link WriteOptions}.
   */
  write<T>(fn: (tx: StoreWriter) => Promise<T>, opts?: WriteOptions): Promise<T>;
  /**
   * The claim, in one short transaction: up to `req.limit` eligible jobs of the
   * lane in claim order, moved to `running` for the worker with their attempt
   * rows and `claimed` events; fewer (or none) when the lane's `slots` are taken.
   * `spoolDir` names where the attempt output will be written.
   */
  claimJobs(req: ClaimRequest): Promise<ClaimedJob[]>;
  /**
   * `write(fn)` followed, in the same transaction when the driver can, by the
   * claim `req` (docs/architecture.md "The claim"): a worker records a result
   * and claims the next job with one commit. `claimed` is null when the driver
   * did not claim (an absent queue); the caller then claims as usual. When
   * anything throws, nothing was written, except when the answer to the
   * COMMIT was lost: then the driver looks up what the claim holds before its
   * next claimJobs (PostgreSQL: docs/architecture.md "The claim"). The commit
   * is not synced on its own (`durable: false`, PostgreSQL
   * `synchronous_commit = off`): a worker's result acknowledges nothing to
   * anyone, and one lost to a power cut re-runs its job (docs/architecture.md
   * "Durability").
   */
  writeAndClaim<T>(
    fn: (tx: StoreWriter) => Promise<T>,
    req: ClaimRequest,
  ): Promise<{ result: T; claimed: ClaimedJob[] | null }>;
  /** A wake-up source for readers (`events --follow`, `status --watch`, `wait`): any commit. */
  watch(): Waker;
  /**
   * A worker's wake-up source for lane `queue`, or for each of several lanes
   * (a worker serving them: `work --queue a,b`; see {@link WorkWaker}).
   * `freed` (default true): whether the worker will ever ask for freed slots
   * (`--slots`, a drain); a driver may then not even deliver them to it.
   */
  watchWork(queue: string | readonly string[], opts?: { freed?: boolean }): WorkWaker;
  /**
   * The plan of every statement on the worker's hot path (the claim, the idle
   * and drain reads, the result, the heartbeat, the reaper's look-ups): SQLite's
   * `EXPLAIN QUERY PLAN`, PostgreSQL's `EXPLAIN` with sequential scans priced
   * out. Nothing is run or written. Each must be answered from an index
   * (docs/architecture.md "The driver contract"); an absent queue has none.
   */
  explainHotPath(): Promise<QueryPlan[]>;
  /**
   * Folds the write-ahead log back into the database and truncates it to
   * nothing, when no reader is in the way (docs/architecture.md "Storage
   * conditions": a worker calls it when idle and after a full-disk episode).
   * SQLite: `wal_checkpoint(TRUNCATE)` waiting at most 100 ms for the lock,
   * nothing at all when the log is empty; PostgreSQL: nothing (the server
   * manages its own WAL). Resolves with whether the log is empty now. Raises
   * `INTERNAL` with `detail.storage` when the storage fails.
   */
  checkpoint(): Promise<boolean>;
  /**
   * Whether the queue is still the one at its location (docs/architecture.md
   * "A vanished or replaced file"): null while it is, else a `QUEUE_REPLACED`
   * error saying what became of it. SQLite: the path's (device, inode) against
   * those of the file opened, one stat(2) and no database I/O; a deleted file
   * (or folder) and a file moved or copied into place both count. PostgreSQL
   * and a queue that did not exist when opened: always null.
   */
  replaced(): SpoolError | null;
  /**
   * Checks that the queue's storage is not damaged (docs/architecture.md "A
   * damaged file"); raises `QUEUE_CORRUPT` when it is. SQLite: `PRAGMA
   * quick_check(1)`, which reads the whole file (about 0.1–0.3 s per 100,000
   * jobs), skipped for a file over {@link INTACT_CHECK_MAX_BYTES}; PostgreSQL
   * and an absent queue: nothing (the server checks its own pages).
   */
  checkIntact(): Promise<void>;
  /**
   * Runs `fn` while none of this store's write transactions (writes, claims;
   * on SQLite any transaction) is open, holding new ones back until it
   * returns: `work` stops itself on Ctrl-Z there, never holding a write lock
   * or row locks while stopped (docs/architecture.md "Contention").
   */
  betweenWrites<T>(fn: () => T | Promise<T>): Promise<T>;
  /** Closes the connection. */
  close(): Promise<void>;
}

/** What a read operation needs of a queue: snapshots and the queue's clock (an opened {@link Store}, or a reader waiting for one to appear). */
export type SnapshotReader = Pick<Store, "read" | "now">;

/**
 * The error both drivers raise when a requeue would make a second active job
 * with one idempotency key (the unique index refused it): `IDEMPOTENCY_CONFLICT`
 * (exit 5), never a raw constraint failure.
 */
export function activeKeyTaken(jobId: number | number[]): SpoolError {
  if (Array.isArray(jobId)) {
    if (jobId.length === 1) return activeKeyTaken(jobId[0]!);
    return new SpoolError(
      "IDEMPOTENCY_CONFLICT",
      `jobs ${jobId.join(", ")} cannot all be requeued: another active job holds the idempotency key of one of them; nothing was requeued`,
      {
        remediation: "retry again: the jobs whose keys are taken are then skipped and named",
        detail: { job_ids: jobId },
      },
    );
  }
  return new SpoolError(
    "IDEMPOTENCY_CONFLICT",
    `job ${jobId} cannot be requeued: another active job holds its idempotency key`,
    {
      remediation: `wait for the job holding the key (spoolctl show ${jobId} names the key; spoolctl wait KEY), then retry job ${jobId}`,
      detail: { job_id: jobId },
    },
  );
}
