/**
 * The PostgreSQL implementation of {@link StoreReader}: the statements that
 * read the queue (jobs, attempts, the ledger, settings, workers, batches,
 * needs, lanes) in one transaction. In a read transaction they see one
 * REPEATABLE READ snapshot; in a write transaction getJob() locks the row
 * (see queries.ts). The base of the transaction's statements; the writes
 * build on it in worker-queries.ts and queries.ts.
 */
import type { SQL } from "bun";
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
  OutputStream,
  ShippedOutput,
  StoreReader,
  TimelineCount,
  WaitingOnNeeds,
} from "../reader.ts";
import * as batches from "./batch-queries.ts";
import type { TxEffects } from "./events.ts";
import { HOT_SQL } from "./hot-path.ts";
import { jobWhere } from "./job-filter.ts";
import type { KeptUse } from "./kept-rows.ts";
import * as lanes from "./lane-queries.ts";
import { unmetNeeds, waitingOnNeeds } from "./needs.ts";
import * as op from "./operator-queries.ts";
import { readOutput } from "./output.ts";
import { num, toAttempt, toEvent, toJob, toWorker } from "./rows.ts";
import { deadGroupCounts, deadGroupSpans, failureGroups } from "./triage-queries.ts";

type Row = Record<string, unknown>;

/** The reads of one transaction (schedules and hooks are read through {@link PgQueries.recurring}). */
export abstract class PgReads implements Omit<StoreReader, "recurring"> {
  constructor(
    protected readonly tx: SQL,
    protected readonly effects: TxEffects,
    /** Whether this is a write transaction (getJob locks the row). */
    protected readonly writing: boolean,
    /** A worker's kept claimed rows: a result's getJob answers from them (kept-rows.ts); null: always read. */
    protected readonly kept: KeptUse | null = null,
  ) {}

  /** Jobs whose getJob this transaction answered from a kept row: the version their result must find. */
  protected readonly keptVersions = new Map<number, string>();

  /**
   * The settings read by a write's getJob (one statement for both), for a
   * listSettings() asked in the same tick: what a result reads to decide
   * (src/store/verbs/record.ts), at one statement per job. Later ticks read
   * afresh, so no write of the transaction can come between.
   */
  private settingsAhead: Promise<Record<string, string>> | null = null;

  async getJob(id: number): Promise<Job | null> {
    if (!this.writing) {
      const [row] = await this.tx`SELECT * FROM jobs WHERE id = ${id}`;
      return row ? toJob(row) : null;
    }
    const keptRows = this.kept?.rows ?? null;
    const kept = this.kept?.decide && keptRows?.settings != null ? keptRows.get(id) : null;
    if (kept) {
      // Decided on the row the claim returned; the outcome statement checks it is still that row (kept-rows.ts).
      this.keptVersions.set(id, kept.version);
      this.aheadFor(Promise.resolve(JSON.parse(keptRows!.settings!)));
      return kept.job;
    }
    const read = this.tx.unsafe(HOT_SQL.getJobForUpdate, [id]) as Promise<Row[]>;
    this.aheadFor(
      read.then((rows) => {
        const text = (rows[0]?.settings as string | undefined) ?? null;
        if (keptRows && text !== null) keptRows.settings = text;
        return JSON.parse(text ?? "{}");
      }),
    );
    const [row] = await read;
    if (!row) return null;
    const { settings: _settings, row_version: _version, ...job } = row;
    return toJob(job);
  }

  /** Offers `ahead` to a listSettings() of this tick (see {@link settingsAhead}). */
  private aheadFor(ahead: Promise<Record<string, string>>): void {
    ahead.catch(() => {}); // the job read's failure is raised by it
    this.settingsAhead = ahead;
    queueMicrotask(() => {
      if (this.settingsAhead === ahead) this.settingsAhead = null;
    });
  }

  async findActiveJobByKey(key: string): Promise<Job | null> {
    const [row] = await this
      .tx`SELECT * FROM jobs WHERE idempotency_key = ${key} AND state IN ('queued','running') ORDER BY id DESC LIMIT 1`;
    return row ? toJob(row) : null;
  }

  async findActiveJobsByKeys(keys: string[]): Promise<Map<string, Job>> {
    const found = new Map<string, Job>();
    if (keys.length === 0) return found;
    const rows = await this.tx`SELECT DISTINCT ON (idempotency_key) * FROM jobs
      WHERE idempotency_key = ANY(${[...new Set(keys)]}::text[]) AND state IN ('queued','running')
      ORDER BY idempotency_key, id DESC`;
    for (const row of rows as Row[]) {
      const job = toJob(row);
      found.set(job.idempotency_key!, job);
    }
    return found;
  }

  async findLatestJobByKey(key: string): Promise<Job | null> {
    const [row] = await this.tx`SELECT * FROM jobs WHERE idempotency_key = ${key} ORDER BY id DESC LIMIT 1`;
    return row ? toJob(row) : null;
  }

  async findLatestJobByName(name: string): Promise<Job | null> {
    const [row] = await this.tx`SELECT * FROM jobs WHERE name = ${name} ORDER BY id DESC LIMIT 1`;
    return row ? toJob(row) : null;
  }

  async listJobs(filter: JobFilter): Promise<Job[]> {
    const params: unknown[] = [];
    const p = (v: unknown) => {
      params.push(v);
      return `$${params.length}`;
    };
    const sql = `SELECT * FROM jobs WHERE ${jobWhere(filter, p)} ORDER BY id DESC LIMIT ${p(filter.limit)}`;
    return ((await this.tx.unsafe(sql, params)) as Row[]).map(toJob);
  }

  async failureGroups(filter: Omit<JobFilter, "limit" | "beforeId">, maskVersion: number): Promise<FailureGroupRow[]> {
    return failureGroups(this.tx, filter, maskVersion);
  }

  async countByStateAndLane(): Promise<LaneCount[]> {
    // Signed deltas kept by triggers (schema v2): a few rows, whatever the number of jobs.
    return (await this
      .tx`SELECT state, queue, sum(n)::float8 AS n FROM lane_counts GROUP BY state, queue HAVING sum(n) > 0`) as LaneCount[];
  }

  async finishedTimeline(since: number, bucketSeconds: number): Promise<TimelineCount[]> {
    return (await this.tx`SELECT state, floor((finished_at - ${since}) / ${bucketSeconds})::int AS bucket,
      count(*)::float8 AS n FROM jobs
      WHERE state IN ('done', 'dead', 'canceled') AND finished_at >= ${since} GROUP BY 1, 2`) as TimelineCount[];
  }

  async lastEventId(): Promise<number> {
    const [row] = await this.tx`SELECT coalesce(max(id), 0)::float8 AS id FROM job_events`;
    return Number(row.id);
  }

  async needEdges(jobIds: number[]): Promise<NeedEdge[]> {
    if (jobIds.length === 0) return [];
    return (await this.tx.unsafe(
      `SELECT job_id::float8 AS job_id, need_id::float8 AS need_id FROM job_needs WHERE job_id = ANY($1::bigint[])
       UNION SELECT job_id::float8, need_id::float8 FROM job_needs WHERE need_id = ANY($1::bigint[])`,
      [`{${jobIds.join(",")}}`],
    )) as NeedEdge[];
  }

  async countMatchingByState(filter: Omit<JobFilter, "limit">): Promise<{ state: JobState; n: number }[]> {
    const params: unknown[] = [];
    const p = (v: unknown) => {
      params.push(v);
      return `$${params.length}`;
    };
    const sql = `SELECT state, count(*)::int AS n FROM jobs WHERE ${jobWhere(filter, p)} GROUP BY state`;
    return (await this.tx.unsafe(sql, params)) as { state: JobState; n: number }[];
  }

  async metricCounts(): Promise<MetricCount[]> {
    // Signed deltas kept by triggers (schema v18), summed: a few rows between two folds.
    return (await this.tx`SELECT metric, scope, label, bucket, sum(n)::float8 AS n, sum(s)::float8 AS sum
      FROM metric_counts GROUP BY 1, 2, 3, 4 HAVING sum(n) <> 0`) as MetricCount[];
  }

  async deadJobKinds(): Promise<DeadJobKind[]> {
    // From the kept counts' delta rows (schema v20), not a GROUP BY over the dead jobs.
    return (await this.tx`SELECT queue, failure_reason, exit_code, signal, sum(n)::float8 AS n
      FROM dead_counts GROUP BY 1, 2, 3, 4 HAVING sum(n) > 0`) as DeadJobKind[];
  }

  async deadGroupCounts(): Promise<DeadGroupCount[]> {
    return deadGroupCounts(this.tx);
  }

  async deadGroupSpans(keys: string[]): Promise<DeadGroupSpan[]> {
    return deadGroupSpans(this.tx, keys);
  }

  async countScheduledByLane(now: number): Promise<{ queue: string; n: number }[]> {
    return (await this
      .tx`SELECT queue, count(*)::int AS n FROM jobs WHERE state = 'queued' AND next_run_at > ${now} GROUP BY queue`) as {
      queue: string;
      n: number;
    }[];
  }

  async countHeldByLane(): Promise<{ queue: string; n: number }[]> {
    return (await this
      .tx`SELECT queue, count(*)::int AS n FROM jobs WHERE state = 'queued' AND held GROUP BY queue`) as {
      queue: string;
      n: number;
    }[];
  }

  async recentDead(limit: number): Promise<Job[]> {
    return (
      (await this
        .tx`SELECT * FROM jobs WHERE state = 'dead' ORDER BY finished_at DESC, id DESC LIMIT ${limit}`) as Row[]
    ).map(toJob);
  }

  async recentFailedAttempts(limit: number): Promise<Attempt[]> {
    // Bounded to the newest 10,000 jobs so that a live view stays cheap on a huge queue.
    const rows = await this.tx`SELECT * FROM attempts WHERE job_id > (SELECT coalesce(max(id), 0) - 10000 FROM jobs)
        AND state IN ('failed','timed_out','abandoned')
      ORDER BY finished_at DESC, job_id DESC, attempt_no DESC LIMIT ${limit}`;
    return (rows as Row[]).map(toAttempt);
  }

  async attemptsOf(jobId: number): Promise<Attempt[]> {
    return ((await this.tx`SELECT * FROM attempts WHERE job_id = ${jobId} ORDER BY attempt_no`) as Row[]).map(
      toAttempt,
    );
  }

  async getAttempt(jobId: number, attemptNo: number): Promise<Attempt | null> {
    const [row] = await this.tx`SELECT * FROM attempts WHERE job_id = ${jobId} AND attempt_no = ${attemptNo}`;
    return row ? toAttempt(row) : null;
  }

  async eventsOf(jobId: number): Promise<JobEvent[]> {
    await this.effects.settle(this.tx); // this transaction's own events first
    return ((await this.tx`SELECT * FROM job_events WHERE job_id = ${jobId} ORDER BY id`) as Row[]).map(toEvent);
  }

  async readAttemptOutput(
    jobId: number,
    attemptNo: number,
    stream: OutputStream,
    offset: number,
    maxBytes: number,
  ): Promise<ShippedOutput | null> {
    return readOutput(this.tx, jobId, attemptNo, stream, offset, maxBytes);
  }

  async listSettings(): Promise<Record<string, string>> {
    const ahead = this.settingsAhead;
    this.settingsAhead = null;
    if (ahead !== null) return ahead;
    const rows = (await this.tx`SELECT key, value FROM settings`) as { key: string; value: string }[];
    return Object.fromEntries(rows.map((r) => [r.key, r.value]));
  }

  async getSetting(key: string): Promise<string | null> {
    const [row] = await this.tx`SELECT value FROM settings WHERE key = ${key}`;
    return row?.value ?? null;
  }

  async drainState(queue: string, now: number): Promise<DrainState> {
    const [row] = await this.tx.unsafe(HOT_SQL.drainState, [queue, now]);
    return { running: row.running, waiting: row.waiting };
  }

  async blockedWaiting(queue: string, now: number, limit: number): Promise<Job[]> {
    const rows = await this.tx.unsafe(
      `SELECT * FROM jobs
       WHERE state = 'queued' AND queue = $1 AND needs_left > 0 AND (next_run_at <= $2::float8 OR last_attempt_no > 0)
       ORDER BY id LIMIT $3::int`,
      [queue, now, limit],
    );
    return (rows as Row[]).map(toJob);
  }

  async nextDueAt(queue: string): Promise<number | null> {
    const [row] = await this.tx.unsafe(HOT_SQL.nextDueAt, [queue]);
    return row?.t ?? null;
  }

  async staleRunningJobs(leaseSeconds: number): Promise<Job[]> {
    // The database's clock: heartbeats are written with it (heartbeatJobs, claim).
    const rows = await this.tx.unsafe(HOT_SQL.staleRunningJobs, [leaseSeconds]);
    return (rows as Row[]).map(toJob);
  }

  async getWorker(workerId: string): Promise<WorkerRecord | null> {
    const [row] = await this.tx`SELECT * FROM workers WHERE worker_id = ${workerId}`;
    return row ? toWorker(row) : null;
  }

  async runningJobsByWorker(): Promise<{ worker_id: string; job_id: number }[]> {
    const rows = await this.tx.unsafe(HOT_SQL.runningJobsByWorker, []);
    return (rows as Row[]).map((r) => ({ worker_id: r.worker_id as string, job_id: num(r.job_id) }));
  }

  async listWorkers(limit: number): Promise<WorkerRecord[]> {
    return ((await this.tx`SELECT * FROM workers ORDER BY heartbeat_at DESC LIMIT ${limit}`) as Row[]).map(toWorker);
  }

  async unmetNeeds(jobIds: number[]): Promise<Map<number, number[]>> {
    return unmetNeeds(this.tx, jobIds);
  }

  async waitingOnNeeds(limit: number): Promise<WaitingOnNeeds> {
    return waitingOnNeeds(this.tx, limit);
  }

  async getBatch(name: string): Promise<BatchView | null> {
    return batches.getBatch(this.tx, name);
  }

  async listBatches(limit: number): Promise<BatchView[]> {
    return batches.listBatches(this.tx, limit);
  }

  async listEvents(query: EventQuery): Promise<JobEvent[]> {
    await this.effects.settle(this.tx);
    return op.listEvents(this.tx, query);
  }

  async pruneCandidates(states: JobState[], finishedBefore: number): Promise<Job[]> {
    return op.pruneCandidates(this.tx, states, finishedBefore);
  }

  async historyCounts(jobIds: number[]): Promise<{ attempts: number; events: number }> {
    await this.effects.settle(this.tx);
    return op.historyCounts(this.tx, jobIds);
  }

  async listLanes(): Promise<LaneSetting[]> {
    return lanes.listLanes(this.tx);
  }
}
