/**
 * The SQLite writes a worker makes, on its hot path: the claim, an attempt's
 * result, shipped output, lease and registry heartbeats, stop requests; and
 * the machinery every write path shares (the ledger, the job-ended hooks and
 * dependents, the wake-every-worker rule). queries.ts builds the operator's
 * writes on it.
 */

import type { Attempt, EventName, JobState, WorkerRecord } from "../../model/job.ts";
import type { AttemptKey, AttemptLease, AttemptRecord, ClaimedJob, DatedClaim } from "../attempt-types.ts";
import { attemptOutputPaths } from "../spool.ts";
import { WorkSignals } from "../wake-signal.ts";
import * as batches from "./batch-queries.ts";
import { HOT_SQL } from "./hot-path.ts";
import { jobsEnded } from "./needs.ts";
import { SqliteReads } from "./read-queries.ts";
import type { SqliteRecurring } from "./recurring-queries.ts";
import { toJob } from "./rows.ts";

type Row = Record<string, unknown>;

/** The worker's writes and the shared write machinery, bound to one connection. */
export abstract class SqliteWorkerWrites extends SqliteReads {
  /** Schedules and hooks; set by {@link SqliteQueries}, which can insert their jobs. */
  abstract readonly recurring: SqliteRecurring;

  /** What the open transaction made available to workers; signalled by the store after COMMIT (wake.ts). */
  readonly work = new WorkSignals();

  /**
   * Everything that happens in the transaction that ends a job (done, dead, canceled), from
   * every path that ends one: a worker's result, a reap, a cancel. Today: its outcome hooks,
   * and its batch's `batch-done` hooks when that end finished the batch.
   */
  protected async jobEnded(jobId: number, state: JobState, now: number, batchCheck = true): Promise<void> {
    await this.recurring.enqueueHooks(jobId, state, now, batchCheck);
  }

  /**
   * What ending jobs outside their own outcome sets off (a batch's fail-fast
   * canceling its queued jobs): their hooks, and their dependents closed
   * (docs/architecture.md "Hooks", "Dependencies"), in the same transaction.
   */
  protected async canceledByBatch(jobIds: number[], now: number): Promise<void> {
    // One batch: its batch-done check once, after the last cancel (not a count per canceled job).
    for (const [i, id] of jobIds.entries()) await this.jobEnded(id, "canceled", now, i === jobIds.length - 1);
    await this.closedByNeeds(jobsEnded(this.db, this.work, jobIds, now, this.ledger(now)), now);
  }

  /** The hooks of dependents a failed need closed (need_failed): ends like any other (docs/architecture.md "Hooks"). */
  protected async closedByNeeds(jobIds: number[], now: number): Promise<void> {
    for (const id of jobIds) await this.jobEnded(id, "canceled", now);
  }

  async appendAttemptOutput(): Promise<boolean> {
    return false; // never called: shipsOutput is false
  }

  /** A ledger sink for the batch statements, dated `now`, operator-written (worker null). */
  protected eventsAt(now: number): batches.EventSink {
    return (jobId, event, workerId, detail) => this.insertEvent(jobId, event, workerId, detail, now);
  }

  /** The ledger writer the dependency rules use (needs.ts): operator rows, no worker. */
  protected ledger(now: number) {
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
   * of the lane to `running` for the worker, a pick and a take per job, with the
   * attempt row and the `claimed` event. Runs inside `BEGIN IMMEDIATE`: SQLite
   * admits one writer at a time, so the slot count read by the pick cannot be
   * raced before the take.
   */
  claim(req: DatedClaim, spoolDir: string): ClaimedJob[] {
    const claimed: ClaimedJob[] = [];
    const pick = this.db.query(HOT_SQL.claimNext);
    const take = this.db.query(HOT_SQL.claimTake);
    const insertAttempt = this.db.query(
      `INSERT INTO attempts (job_id, attempt_no, state, worker_id, worker_pid, started_at, stdout_path, stderr_path, worker_start_time)
       VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?) RETURNING *`,
    );
    while (claimed.length < req.limit) {
      const next = pick.get(req.queue, req.now, req.slots) as { id: number } | null;
      if (!next) break;
      const row = take.get(req.workerId, req.workerPid, req.now, next.id) as Row | null;
      if (!row) break; // cannot be: picked queued in this transaction, which no other writer enters
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

  /** An operator's write that changed something wakes every worker (rare: retry, cancel, stop). */
  protected wakeAllIf<T>(changed: T): T {
    if (changed) this.work.all = true;
    return changed;
  }
}
