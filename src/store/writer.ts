/**
 * The write half of the driver interface: {@link StoreWriter}, whose every
 * method runs inside the one transaction {@link Store.write} opens, with its
 * guard in its own statement (docs/architecture.md "The driver contract",
 * "Rules that rest on isolation"); and the error both drivers raise when a
 * requeue meets an idempotency key another active job holds. Split from
 * store.ts, which keeps the {@link Store} itself. Times are epoch seconds (float).
 */

import { SpoolError } from "../contract/errors.ts";
import type {
  BatchAdd,
  BatchView,
  EventName,
  FailFastMode,
  Job,
  JobEdit,
  JobFilter,
  JobNeeds,
  JobSettingsChange,
  JobState,
  LaneSetting,
  NewJob,
  WorkerRecord,
} from "../model/job.ts";
import type { AttemptClosing, AttemptKey, AttemptLease, AttemptRecord, OutputChunk } from "./attempt-types.ts";
import type { RetryNeedRow } from "./bulk-rows.ts";
import type { StoreReader } from "./reader.ts";
import type { RecurringWriter } from "./recurring.ts";

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
   * those changed, ascending; a job no longer in its state is absent; and
   * `closed`, the dependents their end closed (`need_failed`, down the chain),
   * ascending. No events but the closed dependents' own.
   */
  cancelMany(
    queuedIds: number[],
    runningIds: number[],
    now: number,
  ): Promise<{ canceled: number[]; requested: number[]; closed: number[] }>;
  /**
   * Deletes jobs with their attempts, ledger rows and (PostgreSQL) shipped
   * output rows, one statement per table. Guard, in the SQL: only terminal
   * jobs (`state IN ('done','dead','canceled')`), and with `opts.queued` (the
   * `delete` verb) queued ones too; never a running job, whatever the ids
   * (`prune` and triage leave `opts` out). PostgreSQL locks the rows first, so
   * a job a claim takes meanwhile is running by then and is skipped.
   * A queued job deleted is a need that will never succeed: its dependents are
   * closed first, as a cancel closes them (docs/architecture.md
   * "Dependencies"). Returns the row counts deleted and `closed`, the
   * dependents closed, ascending; signals no worker (nothing became work).
   */
  deleteJobs(
    jobIds: number[],
    opts?: { queued?: boolean },
  ): Promise<{ jobs: number; attempts: number; events: number; closed: number[] }>;
  /**
   * Changes how a job will run next (triage's "retry with a new timeout, retry
   * budget or env"), guarded by its state like {@link requeueJob}: returns
   * false, changing nothing, when the job is no longer in `from`. Fields left
   * out keep their value; `env` replaces the whole map.
   */
  updateJobSettings(jobId: number, from: JobState, changes: JobSettingsChange): Promise<boolean>;
  /**
   * `hold` / `release` (docs/architecture.md "Holding a job"): sets `held`
   * on each of `jobIds` that is queued and not already so, one statement;
   * guard `state = 'queued'` in the SQL, so a job a claim took meanwhile is
   * left alone. Returns the ids changed, ascending. A release wakes every
   * worker (the job may be due); a hold wakes none. No ledger rows (the verb
   * writes them).
   */
  setHeld(jobIds: number[], held: boolean): Promise<number[]>;
  /**
   * `edit` (docs/architecture.md "Editing a job"): applies `edit` to job
   * `jobId` while it is still queued, one statement guarded by
   * `state = 'queued'`; returns the row as written, or null when the job is
   * no longer queued (a claim took it: nothing changed). Wakes every worker
   * (its lane, priority or due time may have changed). No ledger row.
   */
  editQueuedJob(jobId: number, edit: JobEdit): Promise<Job | null>;
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
