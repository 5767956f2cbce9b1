/**
 * The PostgreSQL implementation of {@link StoreWriter}, bound to one
 * transaction. Reads run in a REPEATABLE READ READ ONLY snapshot, writes in
 * READ COMMITTED (see open.ts), so every write that decides on what it read
 * is guarded in its own statement (state, owner, attempt number), and a write
 * transaction's getJob() locks the row (FOR UPDATE): the read-decide-write of
 * recording, reaping, retrying or canceling one job is atomic, as it is
 * under SQLite's single writer. Here: adding jobs, batches, settings and the
 * operator's writes (retry, cancel, delete, lanes), built on the worker's
 * writes (worker-queries.ts) and the reads (read-queries.ts).
 */
import type { SQL } from "bun";
import type {
  BatchAdd,
  BatchView,
  FailFastMode,
  Job,
  JobEdit,
  JobFilter,
  JobNeeds,
  JobSettingsChange,
  JobState,
  LaneSetting,
  NewJob,
} from "../../model/job.ts";
import type { AttemptClosing } from "../attempt-types.ts";
import type { RetryNeedRow } from "../bulk-rows.ts";
import type { StoreWriter } from "../writer.ts";
import * as batches from "./batch-queries.ts";
import * as bulk from "./bulk.ts";
import * as edits from "./edit-queries.ts";
import type { TxEffects } from "./events.ts";
import type { KeptUse } from "./kept-rows.ts";
import * as lanes from "./lane-queries.ts";
import { insertNeeds, jobsEnded, reviveDependents, unmeetNeeds } from "./needs.ts";
import * as op from "./operator-queries.ts";
import { PgRecurring } from "./recurring-queries.ts";
import { toJob } from "./rows.ts";
import { PgWorkerWrites } from "./worker-queries.ts";

type Row = Record<string, unknown>;

/** Statements of one transaction. */
export class PgQueries extends PgWorkerWrites implements StoreWriter {
  constructor(tx: SQL, effects: TxEffects, writing: boolean, kept: KeptUse | null = null) {
    super(tx, effects, writing, kept);
    this.recurring = new PgRecurring(tx, this);
  }

  /** Schedules and hooks (docs/architecture.md "Recurring jobs", "Hooks"). */
  readonly recurring: PgRecurring;

  async insertJob(job: NewJob, now: number): Promise<Job> {
    const [row] = await this
      .tx`INSERT INTO jobs (argv, state, priority, queue, next_run_at, timeout_seconds, max_retries, max_crashes,
        idempotency_key, tags, note, cwd, env, created_at, batch, trace, name)
      VALUES (${JSON.stringify(job.argv)}, 'queued', ${job.priority}, ${job.queue}, ${job.next_run_at}::float8, ${job.timeout_seconds}::float8,
        ${job.max_retries}, ${job.max_crashes}::int, ${job.idempotency_key}::text, ${JSON.stringify(job.tags)}, ${job.note}::text, ${job.cwd}::text,
        ${JSON.stringify(job.env)}, ${now}::float8, ${job.batch ?? null}::text, ${job.trace ? JSON.stringify(job.trace) : null}::text, ${job.name ?? null}::text)
      RETURNING *`;
    this.effects.notify = true;
    this.effects.work.ready.add(job.queue);
    return toJob(row);
  }

  async reviveDependents(needIds: number[], now: number): Promise<number[]> {
    const revived = await reviveDependents(this.tx, this.effects, needIds, now);
    // A revived job is a need that runs again: its queued dependents (a done-policy cleanup) wait for it anew.
    await unmeetNeeds(this.tx, revived);
    return revived;
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
        max_retries, max_crashes, idempotency_key, tags, note, cwd, env, created_at, batch, trace, name)
      SELECT argv, 'queued', priority, queue, next_run_at, timeout_seconds, max_retries, max_crashes,
        idempotency_key, tags, note, cwd, env, ${now}::float8, ${batch}::text, trace, name
      FROM unnest(${json("argv")}::text[], ${col("priority")}::int[], ${col("queue")}::text[],
        ${col("next_run_at")}::float8[], ${col("timeout_seconds")}::float8[], ${col("max_retries")}::int[],
        ${col("max_crashes")}::int[], ${col("idempotency_key")}::text[], ${json("tags")}::text[],
        ${col("note")}::text[], ${col("cwd")}::text[], ${json("env")}::text[],
        ${jobs.map((j) => (j.trace ? JSON.stringify(j.trace) : null))}::text[], ${jobs.map((j) => j.name ?? null)}::text[])
        WITH ORDINALITY AS j(argv, priority, queue, next_run_at, timeout_seconds, max_retries, max_crashes,
          idempotency_key, tags, note, cwd, env, trace, name, ord)
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

  // Operator verbs (retry, cancel, prune, events, config): SQL in operator-queries.ts.
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
  ): Promise<{ canceled: number[]; requested: number[]; closed: number[] }> {
    const out = await bulk.cancelMany(this.tx, queuedIds, runningIds, now);
    // A running job asked to stop: its worker reads the request when woken (docs/architecture.md "Cancel").
    if (out.requested.length > 0) this.effects.notify = this.effects.work.all = true;
    if (out.canceled.length === 0) return { ...out, closed: [] };
    this.effects.notify = this.effects.work.all = true;
    for (const id of out.canceled) await this.jobEnded(id, "canceled", now);
    const closed = await jobsEnded(this.tx, this.effects, out.canceled, now);
    await this.closedByNeeds(closed, now);
    return { ...out, closed: closed.sort((a, b) => a - b) };
  }

  async deleteJobs(
    jobIds: number[],
    opts: { queued?: boolean } = {},
  ): Promise<{ jobs: number; attempts: number; events: number; closed: number[] }> {
    const closed: number[] = [];
    if (opts.queued) {
      // A queued job deleted is a need that will never succeed: its dependents are closed first.
      const now = Date.now() / 1000;
      const ended = await op.cancelQueued(this.tx, jobIds, now);
      closed.push(...(await jobsEnded(this.tx, this.effects, ended, now, undefined, new Set(ended))));
      await this.closedByNeeds(closed, now);
    }
    await this.effects.settle(this.tx);
    const batchesOf = (await this.tx`SELECT DISTINCT batch FROM jobs
      WHERE batch IS NOT NULL AND id = ANY(${jobIds}::bigint[])`) as { batch: string }[];
    const out = await op.deleteJobs(this.tx, jobIds, opts.queued === true);
    if (out.jobs > 0) this.effects.notify = true;
    // A sealed batch whose last unfinished jobs were deleted is finished now (docs/architecture.md "Hooks").
    if (out.jobs > 0) for (const { batch } of batchesOf) await this.recurring.batchSealed(batch, Date.now() / 1000);
    return { ...out, closed: closed.sort((a, b) => a - b) };
  }

  async updateJobSettings(jobId: number, from: JobState, changes: JobSettingsChange): Promise<boolean> {
    return op.updateJobSettings(this.tx, jobId, from, changes);
  }

  async setHeld(jobIds: number[], held: boolean): Promise<number[]> {
    const ids = await edits.setHeld(this.tx, jobIds, held);
    if (!held && ids.length > 0) this.effects.notify = this.effects.work.all = true;
    return ids;
  }

  async editQueuedJob(jobId: number, edit: JobEdit): Promise<Job | null> {
    const job = await edits.editQueuedJob(this.tx, jobId, edit);
    if (job) this.effects.notify = this.effects.work.all = true;
    return job;
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
