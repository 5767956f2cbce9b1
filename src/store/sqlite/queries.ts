/**
 * The SQLite implementation of {@link StoreWriter}: every SQL statement of the
 * queue lives here. Statements are prepared once per connection (`db.query`
 * caches them).
 */
import type { Database } from "bun:sqlite";
import type { RetryNeedRow } from "../bulk-rows.ts";
import type {
  Attempt,
  BatchAdd,
  BatchView,
  EventName,
  FailFastMode,
  FailureGroupRow,
  Job,
  JobEvent,
  JobFilter,
  JobNeeds,
  JobState,
  LaneCount,
  LaneSetting,
  NewJob,
  WorkerRecord,
} from "../model.ts";
import { attemptOutputPaths } from "../spool.ts";
import type {
  AttemptClosing,
  AttemptKey,
  AttemptLease,
  AttemptRecord,
  ClaimedJob,
  DatedClaim,
  DrainState,
  EventQuery,
  JobSettingsChange,
  ShippedOutput,
  StoreWriter,
  WaitingOnNeeds,
} from "../store.ts";
import { WorkSignals } from "../wake-signal.ts";
import * as batches from "./batch-queries.ts";
import * as bulk from "./bulk.ts";
import { HOT_SQL } from "./hot-path.ts";
import { jobWhere } from "./job-filter.ts";
import * as lanes from "./lane-queries.ts";
import { insertNeeds, jobsEnded, reviveDependents, unmeetNeeds, unmetNeeds, waitingOnNeeds } from "./needs.ts";
import * as op from "./operator-queries.ts";
import { SqliteRecurring } from "./recurring-queries.ts";
import { toJob, toWorker } from "./rows.ts";
import { failureGroups } from "./triage-queries.ts";

type Row = Record<string, unknown>;

const ACTIVE = "state IN ('queued','running')";

/** Statements bound to one connection. */
export class SqliteQueries implements StoreWriter {
  /** What the open transaction made available to workers; signalled by the store after COMMIT (wake.ts). */
  readonly work = new WorkSignals();

  /** Schedules and hooks (docs/architecture.md "Recurring jobs", "Hooks"). */
  readonly recurring: SqliteRecurring;

  constructor(private readonly db: Database) {
    this.recurring = new SqliteRecurring(db, this);
  }

  /**
   * Everything that happens in the transaction that ends a job (done, dead, canceled), from
   * every path that ends one: a worker's result, a reap, a cancel. Today: its outcome hooks,
   * and its batch's `batch-done` hooks when that end finished the batch.
   */
  private async jobEnded(jobId: number, state: JobState, now: number, batchCheck = true): Promise<void> {
    await this.recurring.enqueueHooks(jobId, state, now, batchCheck);
  }

  /**
   * What ending jobs outside their own outcome sets off (a batch's fail-fast
   * canceling its queued jobs): their hooks, and their dependents closed
   * (docs/architecture.md "Hooks", "Dependencies"), in the same transaction.
   */
  private async canceledByBatch(jobIds: number[], now: number): Promise<void> {
    // One batch: its batch-done check once, after the last cancel (not a count per canceled job).
    for (const [i, id] of jobIds.entries()) await this.jobEnded(id, "canceled", now, i === jobIds.length - 1);
    await this.closedByNeeds(jobsEnded(this.db, this.work, jobIds, now, this.ledger(now)), now);
  }

  /** The hooks of dependents a failed need closed (need_failed): ends like any other (docs/architecture.md "Hooks"). */
  private async closedByNeeds(jobIds: number[], now: number): Promise<void> {
    for (const id of jobIds) await this.jobEnded(id, "canceled", now);
  }

  async getJob(id: number): Promise<Job | null> {
    const row = this.db.query(HOT_SQL.getJob).get(id) as Row | null;
    return row ? toJob(row) : null;
  }

  async findActiveJobByKey(key: string): Promise<Job | null> {
    const row = this.db
      .query(`SELECT * FROM jobs WHERE idempotency_key = ? AND ${ACTIVE} ORDER BY id DESC LIMIT 1`)
      .get(key) as Row | null;
    return row ? toJob(row) : null;
  }

  async findActiveJobsByKeys(keys: string[]): Promise<Map<string, Job>> {
    const found = new Map<string, Job>();
    for (const key of new Set(keys)) {
      const job = await this.findActiveJobByKey(key);
      if (job) found.set(key, job);
    }
    return found;
  }

  async findLatestJobByKey(key: string): Promise<Job | null> {
    const row = this.db
      .query("SELECT * FROM jobs WHERE idempotency_key = ? ORDER BY id DESC LIMIT 1")
      .get(key) as Row | null;
    return row ? toJob(row) : null;
  }

  async listJobs(filter: JobFilter): Promise<Job[]> {
    const where = jobWhere(filter);
    const sql = `SELECT * FROM jobs WHERE ${where.sql} ORDER BY id DESC LIMIT ?`;
    return (this.db.query(sql).all(...where.params, filter.limit) as Row[]).map(toJob);
  }

  async failureGroups(filter: Omit<JobFilter, "limit" | "beforeId">, maskVersion: number): Promise<FailureGroupRow[]> {
    return failureGroups(this.db, filter, maskVersion);
  }

  async countByStateAndLane(): Promise<LaneCount[]> {
    // Kept by triggers (schema v2): a few rows, whatever the number of jobs.
    return this.db.query("SELECT state, queue, n FROM lane_counts WHERE n > 0").all() as LaneCount[];
  }

  async countScheduledByLane(now: number): Promise<{ queue: string; n: number }[]> {
    return this.db
      .query("SELECT queue, count(*) AS n FROM jobs WHERE state = 'queued' AND next_run_at > ? GROUP BY queue")
      .all(now) as { queue: string; n: number }[];
  }

  async recentDead(limit: number): Promise<Job[]> {
    return (
      this.db
        .query("SELECT * FROM jobs WHERE state = 'dead' ORDER BY finished_at DESC, id DESC LIMIT ?")
        .all(limit) as Row[]
    ).map(toJob);
  }

  async recentFailedAttempts(limit: number): Promise<Attempt[]> {
    return this.db
      .query(
        // Bounded to the newest 10,000 jobs so that a live view stays cheap on a huge queue.
        `SELECT * FROM attempts WHERE job_id > (SELECT coalesce(max(id), 0) - 10000 FROM jobs)
           AND state IN ('failed','timed_out','abandoned')
         ORDER BY finished_at DESC, job_id DESC, attempt_no DESC LIMIT ?`,
      )
      .all(limit) as Attempt[];
  }

  async attemptsOf(jobId: number): Promise<Attempt[]> {
    return this.db.query("SELECT * FROM attempts WHERE job_id = ? ORDER BY attempt_no").all(jobId) as Attempt[];
  }

  async getAttempt(jobId: number, attemptNo: number): Promise<Attempt | null> {
    return this.db
      .query("SELECT * FROM attempts WHERE job_id = ? AND attempt_no = ?")
      .get(jobId, attemptNo) as Attempt | null;
  }

  async eventsOf(jobId: number): Promise<JobEvent[]> {
    return this.db.query("SELECT * FROM job_events WHERE job_id = ? ORDER BY id").all(jobId) as JobEvent[];
  }

  async readAttemptOutput(): Promise<ShippedOutput | null> {
    return null; // output stays in the files (shipsOutput is false)
  }

  async appendAttemptOutput(): Promise<boolean> {
    return false; // never called: shipsOutput is false
  }

  async listSettings(): Promise<Record<string, string>> {
    const rows = this.db.query("SELECT key, value FROM settings").all() as { key: string; value: string }[];
    return Object.fromEntries(rows.map((r) => [r.key, r.value]));
  }

  async getSetting(key: string): Promise<string | null> {
    const row = this.db.query("SELECT value FROM settings WHERE key = ?").get(key) as { value: string } | null;
    return row?.value ?? null;
  }

  async drainState(queue: string, now: number): Promise<DrainState> {
    return this.db.query(HOT_SQL.drainState).get(queue, now) as DrainState;
  }

  async nextDueAt(queue: string): Promise<number | null> {
    const row = this.db.query(HOT_SQL.nextDueAt).get(queue) as { t: number } | null;
    return row?.t ?? null;
  }

  async staleRunningJobs(leaseSeconds: number): Promise<Job[]> {
    const cutoff = Date.now() / 1000 - leaseSeconds;
    return (this.db.query(HOT_SQL.staleRunningJobs).all(cutoff) as Row[]).map(toJob);
  }

  async getWorker(workerId: string): Promise<WorkerRecord | null> {
    const row = this.db.query("SELECT * FROM workers WHERE worker_id = ?").get(workerId) as Row | null;
    return row ? toWorker(row) : null;
  }

  async runningJobsByWorker(): Promise<{ worker_id: string; job_id: number }[]> {
    return this.db.query(HOT_SQL.runningJobsByWorker).all() as {
      worker_id: string;
      job_id: number;
    }[];
  }

  async listWorkers(limit: number): Promise<WorkerRecord[]> {
    return (this.db.query("SELECT * FROM workers ORDER BY heartbeat_at DESC LIMIT ?").all(limit) as Row[]).map(
      toWorker,
    );
  }

  async insertJob(job: NewJob, now: number): Promise<Job> {
    const row = this.db
      .query(
        `INSERT INTO jobs (argv, state, priority, queue, next_run_at, timeout_seconds, max_retries, max_crashes,
           idempotency_key, tags, note, cwd, env, created_at, batch)
         VALUES (?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      )
      .get(
        JSON.stringify(job.argv),
        job.priority,
        job.queue,
        job.next_run_at,
        job.timeout_seconds,
        job.max_retries,
        job.max_crashes,
        job.idempotency_key,
        JSON.stringify(job.tags),
        job.note,
        job.cwd,
        JSON.stringify(job.env),
        now,
        job.batch ?? null,
      ) as Row;
    this.work.ready.add(job.queue);
    return toJob(row);
  }

  async addJobs(
    jobs: NewJob[],
    now: number,
    needs: (JobNeeds | undefined)[] = [],
    batch: BatchAdd | null = null,
  ): Promise<Job[]> {
    if (batch) batches.joinBatch(this.db, batch, now);
    const out: Job[] = [];
    for (const job of jobs) {
      const stored = await this.insertJob(batch ? { ...job, batch: batch.name } : job, now);
      this.insertEvent(stored.id, "added", null, null, now);
      out.push(stored);
    }
    if (batch?.seal) batches.sealBatch(this.db, batch.name, now);
    if (needs.some((n) => n !== undefined)) {
      insertNeeds(
        this.db,
        out.map((j) => j.id),
        needs,
      );
      // Re-read: needs_left was set after the insert.
      return Promise.all(out.map(async (j) => (await this.getJob(j.id)) ?? j));
    }
    return out;
  }

  async getBatch(name: string): Promise<BatchView | null> {
    return batches.getBatch(this.db, name);
  }

  async listBatches(limit: number): Promise<BatchView[]> {
    return batches.listBatches(this.db, limit);
  }

  async sealBatch(name: string, now: number): Promise<BatchView> {
    const sealed = batches.sealBatch(this.db, name, now);
    // Sealed with every job ended (or none): finished now (docs/architecture.md "Hooks").
    await this.recurring.batchSealed(name, now);
    return sealed;
  }

  async setBatchFailFast(name: string, mode: FailFastMode, now: number): Promise<BatchView | null> {
    const { batch, canceled } = batches.setBatchFailFast(this.db, this.eventsAt(now), name, mode, now);
    if (canceled.length > 0) {
      this.work.all = true;
      await this.canceledByBatch(canceled, now);
    }
    return batch;
  }

  /** A ledger sink for the batch statements, dated `now`, operator-written (worker null). */
  private eventsAt(now: number): batches.EventSink {
    return (jobId, event, workerId, detail) => this.insertEvent(jobId, event, workerId, detail, now);
  }

  async unmetNeeds(jobIds: number[]): Promise<Map<number, number[]>> {
    return unmetNeeds(this.db, jobIds);
  }

  async waitingOnNeeds(limit: number): Promise<WaitingOnNeeds> {
    return waitingOnNeeds(this.db, limit);
  }

  async reviveDependents(needIds: number[], now: number): Promise<number[]> {
    return this.wakeAllIf(reviveDependents(this.db, this.work, needIds, now, this.ledger(now)));
  }

  /** The ledger writer the dependency rules use (needs.ts): operator rows, no worker. */
  private ledger(now: number) {
    return (jobId: number, event: EventName, detail: string) => this.insertEvent(jobId, event, null, detail, now);
  }

  async appendEvent(
    jobId: number,
    event: EventName,
    workerId: string | null,
    detail: string | null,
    now: number,
  ): Promise<void> {
    this.insertEvent(jobId, event, workerId, detail, now);
  }

  /** Appends a ledger row (synchronously: for the driver's own multi-row writes). */
  insertEvent(jobId: number, event: EventName, workerId: string | null, detail: string | null, now: number): void {
    this.db
      .query("INSERT INTO job_events (job_id, at, event, worker_id, detail) VALUES (?, ?, ?, ?, ?)")
      .run(jobId, now, event, workerId, detail);
  }

  /**
   * The claim (docs/architecture.md "The claim"): moves the next eligible jobs
   * of the lane to `running` for the worker, one statement per job, with the
   * attempt row and the `claimed` event. Runs inside `BEGIN IMMEDIATE`: SQLite
   * admits one writer at a time, so the slot count read in the same statement
   * cannot be raced.
   */
  claim(req: DatedClaim, spoolDir: string): ClaimedJob[] {
    const claimed: ClaimedJob[] = [];
    const statement = this.db.query(HOT_SQL.claimNext);
    const insertAttempt = this.db.query(
      `INSERT INTO attempts (job_id, attempt_no, state, worker_id, worker_pid, started_at, stdout_path, stderr_path, worker_start_time)
       VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?) RETURNING *`,
    );
    while (claimed.length < req.limit) {
      const row = statement.get(req.workerId, req.workerPid, req.now, req.queue, req.slots) as Row | null;
      if (!row) break;
      const job = toJob(row);
      const paths = attemptOutputPaths(spoolDir, job.id, job.last_attempt_no);
      const attempt = insertAttempt.get(
        job.id,
        job.last_attempt_no,
        req.workerId,
        req.workerPid,
        req.now,
        paths.stdout,
        paths.stderr,
        req.workerStartTime ?? null,
      ) as Attempt;
      this.insertEvent(job.id, "claimed", req.workerId, `attempt ${job.last_attempt_no}`, req.now);
      claimed.push({ job, attempt });
    }
    return claimed;
  }

  async recordAttempt(r: AttemptRecord): Promise<boolean> {
    const job = this.db
      .query(HOT_SQL.recordJob)
      .get(
        r.jobState,
        r.attempts,
        r.crashes,
        r.nextRunAt,
        r.exitCode,
        r.error,
        r.jobState === "queued" ? null : r.now,
        r.jobId,
        r.workerId,
        r.attemptNo,
      ) as { queue: string } | null;
    if (job === null) return false;
    // A job that ended frees a slot of its lane; one requeued by a retry backoff is work again.
    this.work.freed.add(job.queue);
    if (r.jobState === "queued") this.work.ready.add(job.queue);
    this.db
      .query(HOT_SQL.recordAttempt)
      .run(
        r.attemptState,
        r.now,
        r.exitCode,
        r.signal,
        r.error,
        r.failureReason,
        r.stderrLastLine ?? null,
        r.stderrSignature ?? null,
        r.process?.pgid ?? null,
        r.process?.startTime ?? null,
        r.jobId,
        r.attemptNo,
      );
    for (const e of r.events) this.insertEvent(r.jobId, e.event, e.workerId, e.detail, r.now);
    if (r.jobState !== "queued") {
      await this.jobEnded(r.jobId, r.jobState, r.now);
      await this.closedByNeeds(jobsEnded(this.db, this.work, [r.jobId], r.now, this.ledger(r.now)), r.now);
    }
    // The batch effects of this outcome, in its transaction (docs/architecture.md "Batches").
    if (r.jobState === "dead") {
      const failed = this.wakeAllIf(batches.failFastOnDead(this.db, this.eventsAt(r.now), r.jobId, r.now));
      if (failed) await this.canceledByBatch(failed.canceled, r.now);
    } else if (
      r.jobState === "queued" &&
      batches.cancelRequeuedInFailedBatch(this.db, this.eventsAt(r.now), r.jobId, r.now)
    )
      await this.canceledByBatch([r.jobId], r.now);
    return true;
  }

  async setSetting(key: string, value: string): Promise<void> {
    this.db
      .query("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
      .run(key, value);
  }

  async upsertWorker(w: WorkerRecord): Promise<void> {
    this.db
      .query(
        `INSERT INTO workers (worker_id, pid, host, boot_id, start_time, queue, started_at, heartbeat_at, stop_requested, stopped_at, pid_ns)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(worker_id) DO UPDATE SET pid = excluded.pid, host = excluded.host, boot_id = excluded.boot_id, pid_ns = excluded.pid_ns,
           start_time = excluded.start_time, queue = excluded.queue, started_at = excluded.started_at,
           heartbeat_at = excluded.heartbeat_at, stop_requested = excluded.stop_requested, stopped_at = excluded.stopped_at`,
      )
      .run(
        w.worker_id,
        w.pid,
        w.host,
        w.boot_id,
        w.start_time,
        w.queue,
        w.started_at,
        w.heartbeat_at,
        w.stop_requested ? 1 : 0,
        w.stopped_at,
        w.pid_ns ?? null,
      );
  }

  async markWorkerStopped(workerId: string, now: number): Promise<void> {
    this.db.query("UPDATE workers SET stopped_at = ?, heartbeat_at = ? WHERE worker_id = ?").run(now, now, workerId);
  }

  async heartbeatJobs(workerId: string, attempts: AttemptKey[]): Promise<AttemptLease[]> {
    if (attempts.length === 0) return [];
    const now = Date.now() / 1000; // the SQLite store's clock (docs/architecture.md "Clocks")
    // One statement for all of the worker's attempts: a pair it no longer owns is simply not updated.
    const rows = this.db
      .query(HOT_SQL.heartbeatJobs)
      .all(now, workerId, JSON.stringify(attempts.map((a) => [a.jobId, a.attemptNo]))) as {
      id: number;
      last_attempt_no: number;
      cancel_requested: number;
    }[];
    const seen = new Map(rows.map((r) => [`${r.id}:${r.last_attempt_no}`, r.cancel_requested === 1]));
    for (const a of attempts) {
      if (a.process && seen.has(`${a.jobId}:${a.attemptNo}`))
        this.db.query(HOT_SQL.attemptProcess).run(a.process.pgid, a.process.startTime, a.jobId, a.attemptNo);
    }
    return attempts.map((a) => {
      const cancel = seen.get(`${a.jobId}:${a.attemptNo}`);
      return { jobId: a.jobId, attemptNo: a.attemptNo, owned: cancel !== undefined, cancelRequested: cancel === true };
    });
  }

  async requestWorkerStop(workerId: string | null): Promise<string[]> {
    const rows = this.db
      .query(
        "UPDATE workers SET stop_requested = 1 WHERE stopped_at IS NULL AND (?1 IS NULL OR worker_id = ?1) RETURNING worker_id",
      )
      .all(workerId) as { worker_id: string }[];
    this.wakeAllIf(rows.length > 0);
    return rows.map((r) => r.worker_id);
  }

  async heartbeatWorker(workerId: string, now: number): Promise<{ stopRequested: boolean }> {
    const row = this.db
      .query("UPDATE workers SET heartbeat_at = ? WHERE worker_id = ? RETURNING stop_requested")
      .get(now, workerId) as { stop_requested: number } | null;
    return { stopRequested: row?.stop_requested === 1 };
  }

  // Operator verbs (retry, cancel, prune, events, config): SQL in operator-queries.ts.
  async listEvents(query: EventQuery): Promise<JobEvent[]> {
    return op.listEvents(this.db, query);
  }

  async pruneCandidates(states: JobState[], finishedBefore: number): Promise<Job[]> {
    return op.pruneCandidates(this.db, states, finishedBefore);
  }

  async historyCounts(jobIds: number[]): Promise<{ attempts: number; events: number }> {
    return op.historyCounts(this.db, jobIds);
  }

  async deleteSetting(key: string): Promise<boolean> {
    return op.deleteSetting(this.db, key);
  }

  async requeueJob(jobId: number, from: JobState, dueAt: number): Promise<boolean> {
    const done = this.wakeAllIf(await op.requeueJob(this.db, jobId, from, dueAt));
    if (done) batches.reopenFailedBatches(this.db, [jobId]);
    if (done) unmeetNeeds(this.db, [jobId]);
    return done;
  }

  async rerunJob(jobId: number, dueAt: number, now: number): Promise<JobState | null> {
    const from = op.rerunJob(this.db, jobId, dueAt);
    if (from === null) return null;
    batches.reopenFailedBatches(this.db, [jobId]);
    unmeetNeeds(this.db, [jobId]);
    this.insertEvent(jobId, "retried", null, JSON.stringify({ from, rerun: true }), now);
    return this.wakeAllIf(from);
  }

  async requeueJobs(jobIds: number[], from: JobState[], dueAt: number): Promise<number[]> {
    const ids = op.requeueJobs(this.db, jobIds, from, dueAt);
    this.wakeAllIf(ids.length > 0);
    batches.reopenFailedBatches(this.db, ids);
    unmeetNeeds(this.db, ids);
    return ids;
  }

  async closeAttempt(closing: AttemptClosing): Promise<boolean> {
    return this.wakeAllIf(await op.closeAttempt(this.db, closing));
  }

  async cancelQueuedJob(jobId: number, now: number): Promise<boolean> {
    if (!this.wakeAllIf(await op.cancelQueuedJob(this.db, jobId, now))) return false;
    await this.jobEnded(jobId, "canceled", now);
    await this.closedByNeeds(jobsEnded(this.db, this.work, [jobId], now, this.ledger(now)), now);
    return true;
  }

  async listLanes(): Promise<LaneSetting[]> {
    return lanes.listLanes(this.db);
  }

  async pauseLane(queue: string, now: number, until: number | null, reason: string | null): Promise<LaneSetting> {
    return this.wakeAllIf(lanes.pauseLane(this.db, queue, now, until, reason));
  }

  async resumeLane(queue: string, now: number): Promise<LaneSetting | null> {
    this.work.all = true;
    return lanes.resumeLane(this.db, queue, now);
  }

  async setLaneSlots(queue: string, slots: number | null): Promise<LaneSetting> {
    return this.wakeAllIf(lanes.setLaneSlots(this.db, queue, slots));
  }

  /** An operator's write that changed something wakes every worker (rare: retry, cancel, stop). */
  private wakeAllIf<T>(changed: T): T {
    if (changed) this.work.all = true;
    return changed;
  }

  async requestCancel(jobId: number): Promise<boolean> {
    return op.requestCancel(this.db, jobId);
  }

  async keyedRetryMatches(filter: Omit<JobFilter, "limit">): Promise<Job[]> {
    return bulk.keyedRetryMatches(this.db, filter);
  }

  async retryNeedRows(filter: Omit<JobFilter, "limit">): Promise<RetryNeedRow[]> {
    return bulk.retryNeedRows(this.db, filter);
  }

  async requeueMatching(filter: Omit<JobFilter, "limit">, exclude: number[], now: number): Promise<number[]> {
    const jobs = bulk.requeueMatching(this.db, filter, exclude, now);
    const ids = jobs.map((j) => j.id);
    if (!this.wakeAllIf(ids.length > 0)) return ids;
    batches.reopenFailedBatches(this.db, ids);
    unmeetNeeds(this.db, ids);
    bulk.insertRetried(this.db, jobs, now);
    return ids;
  }

  async cancelMany(
    queuedIds: number[],
    runningIds: number[],
    now: number,
  ): Promise<{ canceled: number[]; requested: number[] }> {
    const out = bulk.cancelMany(this.db, queuedIds, runningIds, now);
    if (!this.wakeAllIf(out.canceled.length > 0)) return out;
    for (const id of out.canceled) await this.jobEnded(id, "canceled", now);
    await this.closedByNeeds(jobsEnded(this.db, this.work, out.canceled, now, this.ledger(now)), now);
    return out;
  }

  async deleteJobs(
    jobIds: number[],
    opts: { queued?: boolean } = {},
  ): Promise<{ jobs: number; attempts: number; events: number }> {
    if (opts.queued) {
      // A queued job deleted is a need that will never succeed: its dependents are closed first.
      const now = Date.now() / 1000;
      await this.closedByNeeds(
        jobsEnded(this.db, this.work, op.cancelQueued(this.db, jobIds, now), now, this.ledger(now)),
        now,
      );
    }
    const batchesOf = this.db
      .query("SELECT DISTINCT batch FROM jobs WHERE batch IS NOT NULL AND id IN (SELECT value FROM json_each(?))")
      .all(JSON.stringify(jobIds)) as { batch: string }[];
    const out = op.deleteJobs(this.db, jobIds, opts.queued === true);
    // A sealed batch whose last unfinished jobs were deleted is finished now (docs/architecture.md "Hooks").
    if (out.jobs > 0) for (const { batch } of batchesOf) await this.recurring.batchSealed(batch, Date.now() / 1000);
    return out;
  }

  async updateJobSettings(jobId: number, from: JobState, changes: JobSettingsChange): Promise<boolean> {
    return op.updateJobSettings(this.db, jobId, from, changes);
  }
}
