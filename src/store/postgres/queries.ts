/**
 * The PostgreSQL implementation of {@link StoreWriter}, bound to one
 * transaction. Reads run in a REPEATABLE READ READ ONLY snapshot, writes in
 * READ COMMITTED (see open.ts), so every write that decides on what it read
 * is guarded in its own statement (state, owner, attempt number), and a write
 * transaction's getJob() locks the row (FOR UPDATE): the read-decide-write of
 * recording, reaping, retrying or canceling one job is atomic, as it is
 * under SQLite's single writer.
 */
import type { SQL } from "bun";
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
import type { Hook } from "../recurring.ts";
import type {
  AttemptClosing,
  AttemptKey,
  AttemptLease,
  AttemptRecord,
  DrainState,
  EventQuery,
  JobSettingsChange,
  OutputChunk,
  OutputStream,
  ShippedOutput,
  StoreWriter,
  WaitingOnNeeds,
} from "../store.ts";
import * as batches from "./batch-queries.ts";
import * as bulk from "./bulk.ts";
import type { TxEffects } from "./events.ts";
import { HOT_SQL } from "./hot-path.ts";
import { jobWhere } from "./job-filter.ts";
import * as lanes from "./lane-queries.ts";
import {
  insertNeeds,
  jobsEnded,
  reviveDependents,
  settleRound,
  unmeetNeeds,
  unmetNeeds,
  waitingOnNeeds,
} from "./needs.ts";
import * as op from "./operator-queries.ts";
import { appendOutput, readOutput } from "./output.ts";
import { PgRecurring } from "./recurring-queries.ts";
import { num, toAttempt, toEvent, toJob, toWorker } from "./rows.ts";
import { failureGroups } from "./triage-queries.ts";

type Row = Record<string, unknown>;

/** Statements of one transaction. */
export class PgQueries implements StoreWriter {
  constructor(
    private readonly tx: SQL,
    private readonly effects: TxEffects,
    /** Whether this is a write transaction (getJob locks the row). */
    private readonly writing: boolean,
  ) {
    this.recurring = new PgRecurring(tx, this);
  }

  /** Schedules and hooks (docs/architecture.md "Recurring jobs", "Hooks"). */
  readonly recurring: PgRecurring;

  /**
   * Everything that happens in the transaction that ends a job (done, dead, canceled), from
   * every path that ends one: a worker's result, a reap, a cancel. Today: its outcome hooks,
   * and its batch's `batch-done` hooks when that end finished the batch.
   */
  private async jobEnded(
    jobId: number,
    state: JobState,
    now: number,
    hooks?: Hook[],
    batchCheck = true,
  ): Promise<void> {
    await this.recurring.enqueueHooks(jobId, state, now, hooks, batchCheck);
  }

  /**
   * What ending jobs outside their own outcome sets off (a batch's fail-fast
   * canceling its queued jobs): their hooks, and their dependents closed
   * (docs/architecture.md "Hooks", "Dependencies"), in the same transaction.
   */
  private async canceledByBatch(jobIds: number[], now: number): Promise<void> {
    // One batch: its batch-done check once, after the last cancel (not a count per canceled job).
    for (const [i, id] of jobIds.entries())
      await this.jobEnded(id, "canceled", now, undefined, i === jobIds.length - 1);
    await this.closedByNeeds(await jobsEnded(this.tx, this.effects, jobIds, now), now);
  }

  /** The hooks of dependents a failed need closed (need_failed): ends like any other (docs/architecture.md "Hooks"). */
  private async closedByNeeds(jobIds: number[], now: number): Promise<void> {
    for (const id of jobIds) await this.jobEnded(id, "canceled", now);
  }

  async getJob(id: number): Promise<Job | null> {
    const [row] = this.writing
      ? await this.tx.unsafe(HOT_SQL.getJobForUpdate, [id])
      : await this.tx`SELECT * FROM jobs WHERE id = ${id}`;
    return row ? toJob(row) : null;
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

  async countScheduledByLane(now: number): Promise<{ queue: string; n: number }[]> {
    return (await this
      .tx`SELECT queue, count(*)::int AS n FROM jobs WHERE state = 'queued' AND next_run_at > ${now} GROUP BY queue`) as {
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

  async appendAttemptOutput(chunk: OutputChunk): Promise<boolean> {
    return appendOutput(this.tx, chunk);
  }

  async listSettings(): Promise<Record<string, string>> {
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

  async insertJob(job: NewJob, now: number): Promise<Job> {
    const [row] = await this
      .tx`INSERT INTO jobs (argv, state, priority, queue, next_run_at, timeout_seconds, max_retries, max_crashes,
        idempotency_key, tags, note, cwd, env, created_at, batch)
      VALUES (${JSON.stringify(job.argv)}, 'queued', ${job.priority}, ${job.queue}, ${job.next_run_at}::float8, ${job.timeout_seconds}::float8,
        ${job.max_retries}, ${job.max_crashes}::int, ${job.idempotency_key}::text, ${JSON.stringify(job.tags)}, ${job.note}::text, ${job.cwd}::text,
        ${JSON.stringify(job.env)}, ${now}::float8, ${job.batch ?? null}::text)
      RETURNING *`;
    this.effects.notify = true;
    this.effects.work.ready.add(job.queue);
    return toJob(row);
  }

  async unmetNeeds(jobIds: number[]): Promise<Map<number, number[]>> {
    return unmetNeeds(this.tx, jobIds);
  }

  async waitingOnNeeds(limit: number): Promise<WaitingOnNeeds> {
    return waitingOnNeeds(this.tx, limit);
  }

  async reviveDependents(needIds: number[], now: number): Promise<number[]> {
    return reviveDependents(this.tx, this.effects, needIds, now);
  }

  async addJobs(
    jobs: NewJob[],
    now: number,
    needs: (JobNeeds | undefined)[] = [],
    batch: BatchAdd | null = null,
  ): Promise<Job[]> {
    if (batch) await batches.joinBatch(this.tx, batch, now);
    const stored = await this.insertJobs(jobs, now, batch?.name ?? null, needs);
    if (batch?.seal) await batches.sealBatch(this.tx, batch.name, now);
    if (batch) this.effects.notify = true;
    return stored;
  }

  /** The multi-row INSERT of {@link addJobs}, every row in `batch`, with the edges of `needs`. */
  private async insertJobs(
    jobs: NewJob[],
    now: number,
    batch: string | null,
    needs: (JobNeeds | undefined)[],
  ): Promise<Job[]> {
    if (jobs.length === 0) return [];
    const col = <K extends keyof NewJob>(k: K) => jobs.map((j) => j[k]);
    const json = (k: "argv" | "tags" | "env") => jobs.map((j) => JSON.stringify(j[k]));
    // Rows are inserted in ordinality order, so ids ascend with it; sorted by id, row i is jobs[i].
    const rows = (await this.tx`INSERT INTO jobs (argv, state, priority, queue, next_run_at, timeout_seconds,
        max_retries, max_crashes, idempotency_key, tags, note, cwd, env, created_at, batch)
      SELECT argv, 'queued', priority, queue, next_run_at, timeout_seconds, max_retries, max_crashes,
        idempotency_key, tags, note, cwd, env, ${now}::float8, ${batch}::text
      FROM unnest(${json("argv")}::text[], ${col("priority")}::int[], ${col("queue")}::text[],
        ${col("next_run_at")}::float8[], ${col("timeout_seconds")}::float8[], ${col("max_retries")}::int[],
        ${col("max_crashes")}::int[], ${col("idempotency_key")}::text[], ${json("tags")}::text[],
        ${col("note")}::text[], ${col("cwd")}::text[], ${json("env")}::text[])
        WITH ORDINALITY AS j(argv, priority, queue, next_run_at, timeout_seconds, max_retries, max_crashes,
          idempotency_key, tags, note, cwd, env, ord)
      ORDER BY ord
      RETURNING *`) as Row[];
    let stored = rows.map(toJob).sort((a, b) => a.id - b.id);
    if (needs.some((n) => n !== undefined)) {
      await insertNeeds(
        this.tx,
        stored.map((j) => j.id),
        needs,
      );
      const left = new Map<number, number>();
      for (const r of (await this
        .tx`SELECT id, needs_left FROM jobs WHERE id = ANY(${stored.map((j) => j.id)}::bigint[])`) as Row[])
        left.set(Number(r.id), Number(r.needs_left));
      stored = stored.map((j) => ({ ...j, needs_left: left.get(j.id) ?? j.needs_left }));
    }
    this.effects.notify = true;
    for (const job of stored) {
      this.effects.work.ready.add(job.queue);
      this.effects.append({ jobId: job.id, event: "added", workerId: null, detail: null, at: now });
    }
    return stored;
  }

  async appendEvent(
    jobId: number,
    event: EventName,
    workerId: string | null,
    detail: string | null,
    now: number,
  ): Promise<void> {
    this.effects.append({ jobId, event, workerId, detail, at: now });
  }

  async recordAttempt(r: AttemptRecord): Promise<boolean> {
    // Fenced by (job, attempt, worker) in the UPDATE itself; the attempt row is closed only if the job row was.
    // An ending job's hooks are read in the same round trip (pipelined): no hooks costs no extra trip.
    const hooks = r.jobState === "queued" ? null : this.recurring.hooksOn(r.jobState);
    hooks?.catch(() => {}); // its failure is the UPDATE's too: the transaction is aborted either way
    // then() sends a query now (a bare query is sent when awaited): the record goes first, the settle behind it.
    const record = this.tx
      .unsafe(HOT_SQL.recordAttempt, [
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
        r.attemptState,
        r.now,
        r.signal,
        r.failureReason,
        r.stderrLastLine ?? null,
        r.process?.pgid ?? null,
        r.process?.startTime ?? null,
        r.stderrSignature ?? null,
      ])
      .then((rows) => (rows as { n: number; queue: string }[])[0]!);
    // A job that ended settles its dependents: the first statement goes pipelined behind the record (one round
    // trip), and runs after it with its own snapshot. Harmless if the record changed nothing: it only flips edges
    // of needs that already ended, which their own end settled.
    const settle = r.jobState === "queued" ? null : settleRound(this.tx, [r.jobId]);
    settle?.catch(() => {}); // awaited below, or its rejection is the record's
    const row = await record;
    if (row.n === 0) {
      await settle;
      return false;
    }
    // A job that ended frees a slot of its lane; one requeued by a retry backoff is work again.
    this.effects.work.freed.add(row.queue);
    if (r.jobState === "queued") this.effects.work.ready.add(row.queue);
    for (const e of r.events)
      this.effects.append({ jobId: r.jobId, event: e.event, workerId: e.workerId, detail: e.detail, at: r.now });
    this.effects.notify = true;
    if (hooks !== null) await this.jobEnded(r.jobId, r.jobState, r.now, await hooks);
    if (settle) await this.closedByNeeds(await jobsEnded(this.tx, this.effects, [r.jobId], r.now, settle), r.now);
    // The batch effects of this outcome, in its transaction (docs/architecture.md "Batches").
    if (r.jobState === "dead") {
      const failed = await batches.failFastOnDead(this.tx, this.effects, r.jobId, r.now);
      if (failed) await this.canceledByBatch(failed.canceled, r.now);
    } else if (
      r.jobState === "queued" &&
      (await batches.cancelRequeuedInFailedBatch(this.tx, this.effects, r.jobId, r.now))
    )
      await this.canceledByBatch([r.jobId], r.now);
    return true;
  }

  async getBatch(name: string): Promise<BatchView | null> {
    return batches.getBatch(this.tx, name);
  }

  async listBatches(limit: number): Promise<BatchView[]> {
    return batches.listBatches(this.tx, limit);
  }

  async sealBatch(name: string, now: number): Promise<BatchView> {
    const sealed = await batches.sealBatch(this.tx, name, now);
    this.effects.notify = true;
    // Sealed with every job ended (or none): finished now (docs/architecture.md "Hooks").
    await this.recurring.batchSealed(name, now);
    return sealed;
  }

  async setBatchFailFast(name: string, mode: FailFastMode, now: number): Promise<BatchView | null> {
    const { batch, canceled } = await batches.setBatchFailFast(this.tx, this.effects, name, mode, now);
    this.effects.notify = true;
    await this.canceledByBatch(canceled, now);
    return batch;
  }

  async setSetting(key: string, value: string): Promise<void> {
    await this
      .tx`INSERT INTO settings (key, value) VALUES (${key}, ${value}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
  }

  async upsertWorker(w: WorkerRecord): Promise<void> {
    await this
      .tx`INSERT INTO workers (worker_id, pid, host, boot_id, start_time, queue, started_at, heartbeat_at, stop_requested, stopped_at, pid_ns)
      VALUES (${w.worker_id}, ${w.pid}, ${w.host}, ${w.boot_id}::text, ${w.start_time}::text, ${w.queue}, ${w.started_at}::float8,
        ${w.heartbeat_at}::float8, ${w.stop_requested}, ${w.stopped_at}::float8, ${w.pid_ns ?? null}::text)
      ON CONFLICT (worker_id) DO UPDATE SET pid = excluded.pid, host = excluded.host, boot_id = excluded.boot_id, pid_ns = excluded.pid_ns,
        start_time = excluded.start_time, queue = excluded.queue, started_at = excluded.started_at,
        heartbeat_at = excluded.heartbeat_at, stop_requested = excluded.stop_requested, stopped_at = excluded.stopped_at`;
  }

  async markWorkerStopped(workerId: string, now: number): Promise<void> {
    await this
      .tx`UPDATE workers SET stopped_at = ${now}::float8, heartbeat_at = ${now}::float8 WHERE worker_id = ${workerId}`;
  }

  async heartbeatJobs(workerId: string, attempts: AttemptKey[]): Promise<AttemptLease[]> {
    if (attempts.length === 0) return [];
    // One statement for all of the worker's attempts, on the database's clock; a pair it no longer owns is not updated.
    const rows = (await this.tx.unsafe(HOT_SQL.heartbeatJobs, [
      workerId,
      attempts.map((a) => a.jobId),
      attempts.map((a) => a.attemptNo),
    ])) as Row[];
    const seen = new Map(rows.map((r) => [`${num(r.id)}:${r.last_attempt_no}`, r.cancel_requested === true]));
    const groups = attempts.filter((a) => a.process && seen.has(`${a.jobId}:${a.attemptNo}`));
    if (groups.length > 0) {
      await this.tx.unsafe(HOT_SQL.attemptProcess, [
        groups.map((a) => a.jobId),
        groups.map((a) => a.attemptNo),
        groups.map((a) => a.process!.pgid),
        groups.map((a) => a.process!.startTime),
      ]);
    }
    return attempts.map((a) => {
      const cancel = seen.get(`${a.jobId}:${a.attemptNo}`);
      return { jobId: a.jobId, attemptNo: a.attemptNo, owned: cancel !== undefined, cancelRequested: cancel === true };
    });
  }

  async heartbeatWorker(workerId: string, now: number): Promise<{ stopRequested: boolean }> {
    const [row] = await this
      .tx`UPDATE workers SET heartbeat_at = ${now}::float8 WHERE worker_id = ${workerId} RETURNING stop_requested`;
    return { stopRequested: row?.stop_requested === true };
  }

  async requestWorkerStop(workerId: string | null): Promise<string[]> {
    const rows = (await this.tx`UPDATE workers SET stop_requested = true
      WHERE stopped_at IS NULL AND (${workerId}::text IS NULL OR worker_id = ${workerId}::text) RETURNING worker_id`) as {
      worker_id: string;
    }[];
    if (rows.length > 0) this.effects.notify = this.effects.work.all = true; // idle workers look at their flag when woken
    return rows.map((r) => r.worker_id);
  }

  // Operator verbs (retry, cancel, prune, events, config): SQL in operator-queries.ts.
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

  async deleteSetting(key: string): Promise<boolean> {
    return op.deleteSetting(this.tx, key);
  }

  async requeueJob(jobId: number, from: JobState, dueAt: number): Promise<boolean> {
    const done = await op.requeueJob(this.tx, jobId, from, dueAt);
    if (done) this.effects.notify = this.effects.work.all = true;
    if (done) await batches.reopenFailedBatches(this.tx, [jobId]);
    if (done) await unmeetNeeds(this.tx, [jobId]);
    return done;
  }

  async rerunJob(jobId: number, dueAt: number, now: number): Promise<JobState | null> {
    const from = await op.rerunJob(this.tx, jobId, dueAt);
    if (from === null) return null;
    await batches.reopenFailedBatches(this.tx, [jobId]);
    await unmeetNeeds(this.tx, [jobId]);
    this.effects.append({
      jobId,
      event: "retried",
      workerId: null,
      detail: JSON.stringify({ from, rerun: true }),
      at: now,
    });
    this.effects.notify = this.effects.work.all = true;
    return from;
  }

  async requeueJobs(jobIds: number[], from: JobState[], dueAt: number): Promise<number[]> {
    const ids = await op.requeueJobs(this.tx, jobIds, from, dueAt);
    if (ids.length > 0) this.effects.notify = this.effects.work.all = true;
    await batches.reopenFailedBatches(this.tx, ids);
    await unmeetNeeds(this.tx, ids);
    return ids;
  }

  async closeAttempt(closing: AttemptClosing): Promise<boolean> {
    const done = await op.closeAttempt(this.tx, closing);
    if (done) this.effects.work.all = true;
    return done;
  }

  async cancelQueuedJob(jobId: number, now: number): Promise<boolean> {
    const done = await op.cancelQueuedJob(this.tx, jobId, now);
    if (!done) return false;
    this.effects.notify = this.effects.work.all = true;
    await this.jobEnded(jobId, "canceled", now);
    await this.closedByNeeds(await jobsEnded(this.tx, this.effects, [jobId], now), now);
    return true;
  }

  async requestCancel(jobId: number): Promise<boolean> {
    return op.requestCancel(this.tx, jobId);
  }

  async keyedRetryMatches(filter: Omit<JobFilter, "limit">): Promise<Job[]> {
    return bulk.keyedRetryMatches(this.tx, filter);
  }

  async retryNeedRows(filter: Omit<JobFilter, "limit">): Promise<RetryNeedRow[]> {
    return bulk.retryNeedRows(this.tx, filter);
  }

  async requeueMatching(filter: Omit<JobFilter, "limit">, exclude: number[], now: number): Promise<number[]> {
    const jobs = await bulk.requeueMatching(this.tx, filter, exclude, now);
    const ids = jobs.map((j) => j.id);
    if (ids.length === 0) return ids;
    this.effects.notify = this.effects.work.all = true;
    await batches.reopenFailedBatches(this.tx, ids);
    await unmeetNeeds(this.tx, ids);
    for (const j of jobs)
      this.effects.append({ jobId: j.id, event: "retried", workerId: null, detail: `{"from":"${j.from}"}`, at: now });
    return ids;
  }

  async cancelMany(
    queuedIds: number[],
    runningIds: number[],
    now: number,
  ): Promise<{ canceled: number[]; requested: number[] }> {
    const out = await bulk.cancelMany(this.tx, queuedIds, runningIds, now);
    if (out.canceled.length === 0) return out;
    this.effects.notify = this.effects.work.all = true;
    for (const id of out.canceled) await this.jobEnded(id, "canceled", now);
    await this.closedByNeeds(await jobsEnded(this.tx, this.effects, out.canceled, now), now);
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
        await jobsEnded(this.tx, this.effects, await op.cancelQueued(this.tx, jobIds, now), now),
        now,
      );
    }
    await this.effects.settle(this.tx);
    const batchesOf = (await this.tx`SELECT DISTINCT batch FROM jobs
      WHERE batch IS NOT NULL AND id = ANY(${jobIds}::bigint[])`) as { batch: string }[];
    const out = await op.deleteJobs(this.tx, jobIds, opts.queued === true);
    if (out.jobs > 0) this.effects.notify = true;
    // A sealed batch whose last unfinished jobs were deleted is finished now (docs/architecture.md "Hooks").
    if (out.jobs > 0) for (const { batch } of batchesOf) await this.recurring.batchSealed(batch, Date.now() / 1000);
    return out;
  }

  async updateJobSettings(jobId: number, from: JobState, changes: JobSettingsChange): Promise<boolean> {
    return op.updateJobSettings(this.tx, jobId, from, changes);
  }

  async listLanes(): Promise<LaneSetting[]> {
    return lanes.listLanes(this.tx);
  }

  async pauseLane(queue: string, now: number, until: number | null, reason: string | null): Promise<LaneSetting> {
    this.effects.notify = this.effects.work.all = true;
    return lanes.pauseLane(this.tx, queue, now, until, reason);
  }

  async resumeLane(queue: string, now: number): Promise<LaneSetting | null> {
    this.effects.notify = this.effects.work.all = true;
    return lanes.resumeLane(this.tx, queue, now);
  }

  async setLaneSlots(queue: string, slots: number | null): Promise<LaneSetting> {
    this.effects.notify = this.effects.work.all = true;
    return lanes.setLaneSlots(this.tx, queue, slots);
  }
}
