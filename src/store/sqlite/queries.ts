/**
 * The SQLite implementation of {@link StoreWriter}: adding jobs, batches,
 * settings and the operator's writes (retry, cancel, delete, lanes), built on
 * the worker's writes (worker-queries.ts) and the reads (read-queries.ts).
 * Statements are prepared once per connection (`db.query` caches them).
 */
import type { Database } from "bun:sqlite";
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
import * as lanes from "./lane-queries.ts";
import { insertNeeds, jobsEnded, reviveDependents, unmeetNeeds } from "./needs.ts";
import * as op from "./operator-queries.ts";
import { SqliteRecurring } from "./recurring-queries.ts";
import { toJob } from "./rows.ts";
import { SqliteWorkerWrites } from "./worker-queries.ts";

type Row = Record<string, unknown>;

/** Statements bound to one connection. */
export class SqliteQueries extends SqliteWorkerWrites implements StoreWriter {
  /** Schedules and hooks (docs/architecture.md "Recurring jobs", "Hooks"). */
  readonly recurring: SqliteRecurring;

  constructor(db: Database) {
    super(db);
    this.recurring = new SqliteRecurring(db, this);
  }

  async insertJob(job: NewJob, now: number): Promise<Job> {
    const row = this.db
      .query(
        `INSERT INTO jobs (argv, state, priority, queue, next_run_at, timeout_seconds, max_retries, max_crashes,
           idempotency_key, tags, note, cwd, env, created_at, batch, trace, name)
         VALUES (?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
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
        job.trace ? JSON.stringify(job.trace) : null,
        job.name ?? null,
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

  async reviveDependents(needIds: number[], now: number): Promise<number[]> {
    const revived = reviveDependents(this.db, this.work, needIds, now, this.ledger(now));
    // A revived job is a need that runs again: its queued dependents (a done-policy cleanup) wait for it anew.
    unmeetNeeds(this.db, revived);
    return this.wakeAllIf(revived);
  }

  async setSetting(key: string, value: string): Promise<void> {
    this.db
      .query("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
      .run(key, value);
  }

  // Operator verbs (retry, cancel, prune, events, config): SQL in operator-queries.ts.
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
  ): Promise<{ canceled: number[]; requested: number[]; closed: number[] }> {
    const out = bulk.cancelMany(this.db, queuedIds, runningIds, now);
    // A running job asked to stop: its worker, busy or not, reads the request when woken (docs/architecture.md "Cancel").
    this.wakeAllIf(out.requested.length > 0);
    if (!this.wakeAllIf(out.canceled.length > 0)) return { ...out, closed: [] };
    for (const id of out.canceled) await this.jobEnded(id, "canceled", now);
    const closed = jobsEnded(this.db, this.work, out.canceled, now, this.ledger(now));
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
      const ended = op.cancelQueued(this.db, jobIds, now);
      closed.push(...jobsEnded(this.db, this.work, ended, now, this.ledger(now), new Set(ended)));
      await this.closedByNeeds(closed, now);
    }
    const batchesOf = this.db
      .query("SELECT DISTINCT batch FROM jobs WHERE batch IS NOT NULL AND id IN (SELECT value FROM json_each(?))")
      .all(JSON.stringify(jobIds)) as { batch: string }[];
    const out = op.deleteJobs(this.db, jobIds, opts.queued === true);
    // A sealed batch whose last unfinished jobs were deleted is finished now (docs/architecture.md "Hooks").
    if (out.jobs > 0) for (const { batch } of batchesOf) await this.recurring.batchSealed(batch, Date.now() / 1000);
    return { ...out, closed: closed.sort((a, b) => a - b) };
  }

  async updateJobSettings(jobId: number, from: JobState, changes: JobSettingsChange): Promise<boolean> {
    return op.updateJobSettings(this.db, jobId, from, changes);
  }

  async setHeld(jobIds: number[], held: boolean): Promise<number[]> {
    const ids = edits.setHeld(this.db, jobIds, held);
    if (!held) this.wakeAllIf(ids.length > 0);
    return ids;
  }

  async editQueuedJob(jobId: number, edit: JobEdit): Promise<Job | null> {
    return this.wakeAllIf(edits.editQueuedJob(this.db, jobId, edit));
  }
}
