/**
 * The read half of the driver interface: {@link StoreReader}, what one
 * snapshot of the queue answers, with the parameter and result types of those
 * reads and the one definition of a settled drain ({@link drainSettled}).
 * Split from store.ts, which keeps the {@link Store} a queue is opened as; the
 * contract is in docs/architecture.md ("The driver contract"). Times are epoch
 * seconds (float).
 */
import type {
  Attempt,
  BatchView,
  FailureGroupRow,
  Job,
  JobEvent,
  JobFilter,
  JobState,
  LaneCount,
  LaneSetting,
  WorkerRecord,
} from "../model/job.ts";
import type { DeadGroupCount, DeadGroupSpan, DeadJobKind, MetricCount } from "../model/metrics.ts";
import type { RecurringReader } from "./recurring.ts";

/** Reads; inside {@link Store.read} they see one consistent snapshot. */
/** One edge of the dependency graph: job `job_id` needs job `need_id`. */
export interface NeedEdge {
  job_id: number;
  need_id: number;
}

/** One cell of {@link StoreReader.finishedTimeline}: jobs that ended `state` in bucket `bucket`. */
export interface TimelineCount {
  state: "done" | "dead" | "canceled";
  bucket: number;
  n: number;
}

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
  /** The most recent job (any state) with this name (`add --name`), or null; names are not unique. */
  findLatestJobByName(name: string): Promise<Job | null>;
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
  /**
   * Jobs matching `filter` (its `limit` does not apply) counted by state, one
   * statement; states without a job are absent. What a selection `wait` judges
   * (docs/architecture.md "Batches": "A selection's verdict").
   */
  countMatchingByState(filter: Omit<JobFilter, "limit">): Promise<{ state: JobState; n: number }[]>;
  /**
   * The counters kept by schema v16's triggers, summed by key (docs/architecture.md
   * "Metrics"): a few dozen rows whatever the number of jobs. One statement.
   */
  metricCounts(): Promise<MetricCount[]>;
  /**
   * Dead jobs counted by lane and by how their last attempt failed (its failure
   * reason, exit code and signal; all null for a job that never ran). One statement.
   */
  deadJobKinds(): Promise<DeadJobKind[]>;
  /**
   * Dead jobs counted by kept failure group and lane (docs/architecture.md
   * "Kept dead counts"): the rows the schema's triggers keep, a few whatever
   * the number of dead jobs. One statement.
   */
  deadGroupCounts(): Promise<DeadGroupCount[]>;
  /** For each of `keys` with a dead job: when its jobs ended, first and last, and its newest job (by end, then id). */
  deadGroupSpans(keys: string[]): Promise<DeadGroupSpan[]>;
  /**
   * Jobs that ended (done, dead, canceled) at or after `since` (epoch seconds),
   * counted by outcome and by bucket of `bucketSeconds` from `since` (bucket 0
   * holds `[since, since + bucketSeconds)`). One statement on idx_jobs_finished.
   */
  finishedTimeline(since: number, bucketSeconds: number): Promise<TimelineCount[]>;
  /** The newest ledger row's id (0 for an empty ledger): the cursor a live view starts from. One statement. */
  lastEventId(): Promise<number>;
  /** The need edges touching any of `jobIds` (as dependent or as need), each once. One statement. */
  needEdges(jobIds: number[]): Promise<NeedEdge[]>;
  /** Queued jobs whose `next_run_at` is after `now`, per lane. */
  countScheduledByLane(now: number): Promise<{ queue: string; n: number }[]>;
  /** Held jobs (queued, `held`; docs/architecture.md "Holding a job"), per lane. One statement. */
  countHeldByLane(): Promise<{ queue: string; n: number }[]>;
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
  /**
   * The queued jobs of lane `queue` that wait for needs (`needs_left > 0`) and
   * count in {@link drainState}'s `waiting` at `now` (epoch seconds: due, or
   * run before), oldest first, at most `limit`. One statement. What a drain
   * judges when only dependents hold it (docs/architecture.md "Drain").
   */
  blockedWaiting(queue: string, now: number, limit: number): Promise<Job[]>;
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
