/**
 * The SQLite implementation of {@link StoreReader}: the statements that read
 * one snapshot of the queue (jobs, attempts, the ledger, settings, workers,
 * batches, needs, lanes). The base of the connection's statements; the writes
 * build on it in worker-queries.ts and queries.ts.
 */
import type { Database } from "bun:sqlite";
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
} from "../../model/job.ts";
import type { DeadGroupCount, DeadGroupSpan, DeadJobKind, MetricCount } from "../../model/metrics.ts";
import type {
  DrainState,
  EventQuery,
  NeedEdge,
  ShippedOutput,
  StoreReader,
  TimelineCount,
  WaitingOnNeeds,
} from "../reader.ts";
import * as batches from "./batch-queries.ts";
import { HOT_SQL } from "./hot-path.ts";
import { jobWhere } from "./job-filter.ts";
import * as lanes from "./lane-queries.ts";
import { unmetNeeds, waitingOnNeeds } from "./needs.ts";
import * as op from "./operator-queries.ts";
import { toJob, toWorker } from "./rows.ts";
import { deadGroupCounts, deadGroupSpans, failureGroups } from "./triage-queries.ts";

type Row = Record<string, unknown>;

const ACTIVE = "state IN ('queued','running')";

/** The reads bound to one connection (schedules and hooks are read through {@link SqliteQueries.recurring}). */
export abstract class SqliteReads implements Omit<StoreReader, "recurring"> {
  constructor(protected readonly db: Database) {}

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

  async findLatestJobByName(name: string): Promise<Job | null> {
    const row = this.db.query("SELECT * FROM jobs WHERE name = ? ORDER BY id DESC LIMIT 1").get(name) as Row | null;
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

  async countMatchingByState(filter: Omit<JobFilter, "limit">): Promise<{ state: JobState; n: number }[]> {
    const where = jobWhere(filter);
    return this.db
      .query(`SELECT state, count(*) AS n FROM jobs WHERE ${where.sql} GROUP BY state`)
      .all(...where.params) as { state: JobState; n: number }[];
  }

  async metricCounts(): Promise<MetricCount[]> {
    // One row per key (schema v16's upserts).
    return this.db
      .query("SELECT metric, scope, label, bucket, n, s AS sum FROM metric_counts WHERE n <> 0")
      .all() as MetricCount[];
  }

  async deadJobKinds(): Promise<DeadJobKind[]> {
    // From the kept counts (schema v18), not a GROUP BY over the dead jobs.
    return this.db
      .query(
        "SELECT queue, failure_reason, exit_code, signal, sum(n) AS n FROM dead_counts WHERE n > 0 GROUP BY 1, 2, 3, 4",
      )
      .all() as DeadJobKind[];
  }

  async deadGroupCounts(): Promise<DeadGroupCount[]> {
    return deadGroupCounts(this.db);
  }

  async deadGroupSpans(keys: string[]): Promise<DeadGroupSpan[]> {
    return deadGroupSpans(this.db, keys);
  }

  async finishedTimeline(since: number, bucketSeconds: number): Promise<TimelineCount[]> {
    return this.db
      .query(
        `SELECT state, CAST((finished_at - ?1) / ?2 AS INTEGER) AS bucket, count(*) AS n
         FROM jobs INDEXED BY idx_jobs_finished
         WHERE state IN ('done', 'dead', 'canceled') AND finished_at >= ?1 GROUP BY 1, 2`,
      )
      .all(since, bucketSeconds) as TimelineCount[];
  }

  async lastEventId(): Promise<number> {
    return (this.db.query("SELECT coalesce(max(id), 0) AS id FROM job_events").get() as { id: number }).id;
  }

  async needEdges(jobIds: number[]): Promise<NeedEdge[]> {
    const ids = JSON.stringify(jobIds);
    return this.db
      .query(
        `SELECT job_id, need_id FROM job_needs WHERE job_id IN (SELECT value FROM json_each(?1))
         UNION SELECT job_id, need_id FROM job_needs INDEXED BY idx_job_needs_need
         WHERE need_id IN (SELECT value FROM json_each(?1))`,
      )
      .all(ids) as NeedEdge[];
  }

  async countScheduledByLane(now: number): Promise<{ queue: string; n: number }[]> {
    return this.db
      .query("SELECT queue, count(*) AS n FROM jobs WHERE state = 'queued' AND next_run_at > ? GROUP BY queue")
      .all(now) as { queue: string; n: number }[];
  }

  async countHeldByLane(): Promise<{ queue: string; n: number }[]> {
    return this.db
      .query("SELECT queue, count(*) AS n FROM jobs WHERE state = 'queued' AND held = 1 GROUP BY queue")
      .all() as { queue: string; n: number }[];
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

  async blockedWaiting(queue: string, now: number, limit: number): Promise<Job[]> {
    // idx_jobs_claimable's range needs_left > 0 of the lane: what the claim skips.
    const rows = this.db
      .query(
        `SELECT * FROM jobs INDEXED BY idx_jobs_claimable
         WHERE state = 'queued' AND queue = ?1 AND needs_left > 0 AND (next_run_at <= ?2 OR last_attempt_no > 0)
         ORDER BY id LIMIT ?3`,
      )
      .all(queue, now, limit) as Row[];
    return rows.map(toJob);
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

  async getBatch(name: string): Promise<BatchView | null> {
    return batches.getBatch(this.db, name);
  }

  async listBatches(limit: number): Promise<BatchView[]> {
    return batches.listBatches(this.db, limit);
  }

  async unmetNeeds(jobIds: number[]): Promise<Map<number, number[]>> {
    return unmetNeeds(this.db, jobIds);
  }

  async waitingOnNeeds(limit: number): Promise<WaitingOnNeeds> {
    return waitingOnNeeds(this.db, limit);
  }

  async listEvents(query: EventQuery): Promise<JobEvent[]> {
    return op.listEvents(this.db, query);
  }

  async pruneCandidates(states: JobState[], finishedBefore: number): Promise<Job[]> {
    return op.pruneCandidates(this.db, states, finishedBefore);
  }

  async historyCounts(jobIds: number[]): Promise<{ attempts: number; events: number }> {
    return op.historyCounts(this.db, jobIds);
  }

  async listLanes(): Promise<LaneSetting[]> {
    return lanes.listLanes(this.db);
  }
}
