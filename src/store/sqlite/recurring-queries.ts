/**
 * The SQLite statements of schedules and hooks (docs/architecture.md "Recurring jobs", "Hooks"),
 * run inside the connection's open transaction (`BEGIN IMMEDIATE` for writes: one writer at a
 * time, the guards below still written into each statement).
 */
import type { Database } from "bun:sqlite";
import type { Job, JobState, NewJob } from "../../model/job.ts";
import type { Hook, Schedule, ScheduleView } from "../../model/recurring.ts";
import { type BatchHookStatements, enqueueBatchHooks, type FinishedBatch } from "../batch-hooks.ts";
import {
  enqueueOutcomeHooks,
  fireDueSlots,
  type HookStatements,
  type RecurringWriter,
  SLOT_ROWS_KEPT,
  type SlotOutcome,
  type SlotPlanner,
  type SlotRow,
  type SlotStatements,
  slotKey,
} from "../recurring.ts";
import { getBatch } from "./batch-queries.ts";
import { HOT_SQL } from "./hot-path.ts";

type Row = Record<string, unknown>;

/** What these statements need of the connection's job statements (they signal workers). */
export interface JobWrites {
  insertJob(job: NewJob, now: number): Promise<Job>;
  insertEvent(jobId: number, event: "added", workerId: null, detail: null, now: number): void;
  getJob(id: number): Promise<Job | null>;
  findActiveJobByKey(key: string): Promise<Job | null>;
  findLatestJobByKey(key: string): Promise<Job | null>;
}

/** A `schedules` row as a {@link Schedule}. */
function toSchedule(row: Row): Schedule {
  return { ...(row as unknown as Schedule), job: JSON.parse(row.job as string), paused: row.paused === 1 };
}

/** A `hooks` row as a {@link Hook}. */
function toHook(row: Row): Hook {
  return { ...(row as unknown as Hook), job: JSON.parse(row.job as string) };
}

/** Schedules and hooks on one SQLite connection. */
export class SqliteRecurring implements RecurringWriter, SlotStatements, HookStatements, BatchHookStatements {
  constructor(
    private readonly db: Database,
    private readonly jobs: JobWrites,
  ) {}

  async earliestSlot(): Promise<number | null> {
    const row = this.db.query(HOT_SQL.earliestSlot).get() as { next_slot: number } | null;
    return row?.next_slot ?? null;
  }

  async listSchedules(): Promise<ScheduleView[]> {
    const rows = this.db
      .query(
        "SELECT s.*, j.state AS last_job_state FROM schedules s LEFT JOIN jobs j ON j.id = s.last_job_id ORDER BY s.name",
      )
      .all() as Row[];
    return rows.map((r) => ({ ...toSchedule(r), last_job_state: (r.last_job_state as JobState | null) ?? null }));
  }

  async getSchedule(name: string): Promise<Schedule | null> {
    const row = this.db.query("SELECT * FROM schedules WHERE name = ?").get(name) as Row | null;
    return row ? toSchedule(row) : null;
  }

  async slotsOf(name: string, limit: number): Promise<SlotRow[]> {
    return this.db
      .query("SELECT * FROM schedule_slots WHERE schedule = ? ORDER BY slot DESC LIMIT ?")
      .all(name, limit) as SlotRow[];
  }

  async listHooks(): Promise<Hook[]> {
    return (this.db.query("SELECT * FROM hooks ORDER BY name").all() as Row[]).map(toHook);
  }

  async addSchedule(s: Schedule): Promise<boolean> {
    return (
      this.db
        .query(
          `INSERT INTO schedules (name, cron, every_seconds, tz, job, queue, catch_up, overlap, paused, next_slot, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
        )
        .run(
          s.name,
          s.cron,
          s.every_seconds,
          s.tz,
          JSON.stringify(s.job),
          s.queue,
          s.catch_up,
          s.overlap,
          s.paused ? 1 : 0,
          s.next_slot,
          s.created_at,
        ).changes > 0
    );
  }

  async removeSchedule(name: string): Promise<boolean> {
    this.db.query("DELETE FROM schedule_slots WHERE schedule = ?").run(name);
    return this.db.query("DELETE FROM schedules WHERE name = ?").run(name).changes > 0;
  }

  async setPaused(name: string, paused: boolean, nextSlot: number): Promise<boolean> {
    const sql = paused
      ? "UPDATE schedules SET paused = 1 WHERE name = ?1 AND paused = 0"
      : "UPDATE schedules SET paused = 0, next_slot = ?2 WHERE name = ?1 AND paused = 1";
    return (paused ? this.db.query(sql).run(name) : this.db.query(sql).run(name, nextSlot)).changes > 0;
  }

  fireDue(now: number, plan: SlotPlanner, limit: number): Promise<SlotOutcome[]> {
    return fireDueSlots(this, now, plan, limit);
  }

  async fireNow(name: string, now: number): Promise<{ job: Job; slot: number } | null> {
    const s = await this.getSchedule(name);
    if (s === null) return null;
    // Whole seconds, so that the key names the slot row's time exactly; two in one second share it.
    let slot = Math.floor(now);
    while (!(await this.insertSlot({ schedule: name, slot, outcome: "manual", job_id: null, at: now, detail: null })))
      slot += 0.001;
    const job = await this.addJob({ ...s.job, next_run_at: now, idempotency_key: slotKey(name, slot, true) }, now);
    await this.setFired(name, slot, job.id);
    return { job, slot };
  }

  async addHook(h: Hook): Promise<boolean> {
    return (
      this.db
        .query(
          `INSERT INTO hooks (name, on_outcome, match_queue, match_tag_key, match_tag_value, job, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
        )
        .run(
          h.name,
          h.on_outcome,
          h.match_queue,
          h.match_tag_key,
          h.match_tag_value,
          JSON.stringify(h.job),
          h.created_at,
        ).changes > 0
    );
  }

  async removeHook(name: string): Promise<boolean> {
    return this.db.query("DELETE FROM hooks WHERE name = ?").run(name).changes > 0;
  }

  /**
   * "Job ended → enqueue hooks" for this connection's transaction (see {@link enqueueOutcomeHooks}),
   * then, when `batch-done` hooks exist and the job's batch is finished now, theirs ({@link enqueueBatchHooks}).
   * `batchCheck` false skips the latter (the caller checks the batch once for many of its jobs).
   */
  async enqueueHooks(jobId: number, state: JobState, now: number, batchCheck = true): Promise<number[]> {
    const hooks = await this.hooksOn(state);
    const added = await enqueueOutcomeHooks(this, jobId, state, now, hooks);
    if (!batchCheck || !hooks.some((h) => h.on_outcome === "batch-done")) return added;
    const batch = (await this.getJob(jobId))?.batch ?? null;
    return batch === null ? added : [...added, ...(await enqueueBatchHooks(this, batch, now, hooks))];
  }

  /** "Batch sealed → enqueue its `batch-done` hooks" when it was finished already (see {@link enqueueBatchHooks}). */
  async batchSealed(name: string, now: number): Promise<number[]> {
    const hooks = (this.db.query("SELECT * FROM hooks WHERE on_outcome = 'batch-done'").all() as Row[]).map(toHook);
    return enqueueBatchHooks(this, name, now, hooks);
  }

  // BatchHookStatements

  async finishedBatch(name: string): Promise<FinishedBatch | null> {
    // A job of it still active (one seek of idx_jobs_batch): not finished, and no count.
    if (this.db.query("SELECT 1 FROM jobs WHERE batch = ? AND state IN ('queued','running') LIMIT 1").get(name))
      return null;
    const batch = getBatch(this.db, name);
    if (batch === null || batch.sealed_at === null || batch.counts.queued + batch.counts.running > 0) return null;
    const last = this.db.query("SELECT max(finished_at) AS t FROM jobs WHERE batch = ?").get(name) as {
      t: number | null;
    };
    return { batch, finished_at: Math.max(batch.sealed_at, last.t ?? 0) };
  }

  findLatestJobByKey(key: string): Promise<Job | null> {
    return this.jobs.findLatestJobByKey(key);
  }

  // SlotStatements

  async dueSchedules(now: number, limit: number): Promise<Schedule[]> {
    return (
      this.db
        .query("SELECT * FROM schedules WHERE paused = 0 AND next_slot <= ? ORDER BY next_slot LIMIT ?")
        .all(now, limit) as Row[]
    ).map(toSchedule);
  }

  async jobActive(id: number): Promise<boolean> {
    return this.db.query("SELECT 1 FROM jobs WHERE id = ? AND state IN ('queued','running')").get(id) !== null;
  }

  async advance(name: string, from: number, to: number): Promise<boolean> {
    return (
      this.db
        .query("UPDATE schedules SET next_slot = ? WHERE name = ? AND next_slot = ? AND paused = 0")
        .run(to, name, from).changes > 0
    );
  }

  async insertSlot(r: SlotRow): Promise<boolean> {
    return (
      this.db
        .query(
          `INSERT INTO schedule_slots (schedule, slot, outcome, job_id, at, detail) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (schedule, slot) DO NOTHING`,
        )
        .run(r.schedule, r.slot, r.outcome, r.job_id, r.at, r.detail).changes > 0
    );
  }

  async addJob(job: NewJob, now: number): Promise<Job> {
    const stored = await this.jobs.insertJob(job, now);
    this.jobs.insertEvent(stored.id, "added", null, null, now);
    return stored;
  }

  async setFired(name: string, slot: number, jobId: number): Promise<void> {
    this.db.query("UPDATE schedule_slots SET job_id = ? WHERE schedule = ? AND slot = ?").run(jobId, name, slot);
    this.db
      .query(
        "UPDATE schedules SET last_slot = ?, last_job_id = ? WHERE name = ? AND (last_slot IS NULL OR last_slot <= ?)",
      )
      .run(slot, jobId, name, slot);
  }

  async trimSlots(name: string): Promise<void> {
    this.db
      .query(
        `DELETE FROM schedule_slots WHERE schedule = ?1
           AND slot < (SELECT slot FROM schedule_slots WHERE schedule = ?1 ORDER BY slot DESC LIMIT 1 OFFSET ?2)`,
      )
      .run(name, SLOT_ROWS_KEPT - 1);
  }

  // HookStatements

  async hooksOn(state: JobState): Promise<Hook[]> {
    return (this.db.query(HOT_SQL.hooksOn).all(state) as Row[]).map(toHook);
  }

  getJob(id: number): Promise<Job | null> {
    return this.jobs.getJob(id);
  }

  async attemptFiles(jobId: number, attemptNo: number): Promise<{ stdout: string; stderr: string } | null> {
    const row = this.db
      .query("SELECT stdout_path, stderr_path FROM attempts WHERE job_id = ? AND attempt_no = ?")
      .get(jobId, attemptNo) as { stdout_path: string; stderr_path: string } | null;
    return row ? { stdout: row.stdout_path, stderr: row.stderr_path } : null;
  }

  findActiveJobByKey(key: string): Promise<Job | null> {
    return this.jobs.findActiveJobByKey(key);
  }
}
