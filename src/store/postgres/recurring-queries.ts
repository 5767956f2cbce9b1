/**
 * The PostgreSQL statements of schedules and hooks (docs/architecture.md "Recurring jobs",
 * "Hooks"), run in the transaction's connection under READ COMMITTED: each guard is in its
 * statement (the next slot a pass read, the slot row's primary key), and a pass locks the due
 * schedules it takes with SKIP LOCKED, so racing workers split them instead of queueing.
 */
import type { SQL } from "bun";
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
import { num, numOrNull } from "./rows.ts";

type Row = Record<string, unknown>;

/** What these statements need of the transaction's job statements (they record events and wake-ups). */
export interface JobWrites {
  insertJob(job: NewJob, now: number): Promise<Job>;
  appendEvent(jobId: number, event: "added", workerId: null, detail: null, now: number): Promise<void>;
  getJob(id: number): Promise<Job | null>;
  findActiveJobByKey(key: string): Promise<Job | null>;
  findLatestJobByKey(key: string): Promise<Job | null>;
}

/** A `schedules` row as a {@link Schedule}. */
function toSchedule(row: Row): Schedule {
  return {
    ...(row as unknown as Schedule),
    job: JSON.parse(row.job as string),
    paused: num(row.paused) === 1,
    every_seconds: numOrNull(row.every_seconds),
    next_slot: num(row.next_slot),
    last_slot: numOrNull(row.last_slot),
    last_job_id: numOrNull(row.last_job_id),
    created_at: num(row.created_at),
  };
}

/** A `hooks` row as a {@link Hook}. */
function toHook(row: Row): Hook {
  return { ...(row as unknown as Hook), job: JSON.parse(row.job as string), created_at: num(row.created_at) };
}

/** Hooks read as a JSON array of rows (`json_agg` of `hooks`: the outcome statement's, hot-path.ts) as {@link Hook}s. */
export function hooksFromJson(text: string): Hook[] {
  return (JSON.parse(text) as Row[]).map(toHook);
}

/** A `schedule_slots` row as a {@link SlotRow}. */
function toSlot(row: Row): SlotRow {
  return { ...(row as unknown as SlotRow), slot: num(row.slot), job_id: numOrNull(row.job_id), at: num(row.at) };
}

/** Schedules and hooks in one PostgreSQL transaction. */
export class PgRecurring implements RecurringWriter, SlotStatements, HookStatements, BatchHookStatements {
  constructor(
    private readonly tx: SQL,
    private readonly jobs: JobWrites,
  ) {}

  async earliestSlot(): Promise<number | null> {
    const [row] = await this.tx.unsafe(HOT_SQL.earliestSlot, []);
    return row ? num(row.next_slot) : null;
  }

  async listSchedules(): Promise<ScheduleView[]> {
    const rows = (await this.tx`SELECT s.*, j.state AS last_job_state FROM schedules s
      LEFT JOIN jobs j ON j.id = s.last_job_id ORDER BY s.name`) as Row[];
    return rows.map((r) => ({ ...toSchedule(r), last_job_state: (r.last_job_state as JobState | null) ?? null }));
  }

  async getSchedule(name: string): Promise<Schedule | null> {
    const [row] = await this.tx`SELECT * FROM schedules WHERE name = ${name}`;
    return row ? toSchedule(row) : null;
  }

  async slotsOf(name: string, limit: number): Promise<SlotRow[]> {
    const rows = await this.tx`SELECT * FROM schedule_slots WHERE schedule = ${name} ORDER BY slot DESC LIMIT ${limit}`;
    return (rows as Row[]).map(toSlot);
  }

  async listHooks(): Promise<Hook[]> {
    return ((await this.tx`SELECT * FROM hooks ORDER BY name`) as Row[]).map(toHook);
  }

  async addSchedule(s: Schedule): Promise<boolean> {
    const rows = await this.tx`INSERT INTO schedules (name, cron, every_seconds, tz, job, queue, catch_up, overlap,
        paused, next_slot, created_at)
      VALUES (${s.name}, ${s.cron}::text, ${s.every_seconds}::float8, ${s.tz}::text, ${JSON.stringify(s.job)}, ${s.queue},
        ${s.catch_up}, ${s.overlap}, ${s.paused ? 1 : 0}, ${s.next_slot}::float8, ${s.created_at}::float8)
      ON CONFLICT (name) DO NOTHING RETURNING 1`;
    return rows.length > 0;
  }

  async removeSchedule(name: string): Promise<boolean> {
    await this.tx`DELETE FROM schedule_slots WHERE schedule = ${name}`;
    return (await this.tx`DELETE FROM schedules WHERE name = ${name} RETURNING 1`).length > 0;
  }

  async setPaused(name: string, paused: boolean, nextSlot: number): Promise<boolean> {
    const rows = paused
      ? await this.tx`UPDATE schedules SET paused = 1 WHERE name = ${name} AND paused = 0 RETURNING 1`
      : await this
          .tx`UPDATE schedules SET paused = 0, next_slot = ${nextSlot}::float8 WHERE name = ${name} AND paused = 1 RETURNING 1`;
    return rows.length > 0;
  }

  fireDue(now: number, plan: SlotPlanner, limit: number): Promise<SlotOutcome[]> {
    return fireDueSlots(this, now, plan, limit);
  }

  async fireNow(name: string, now: number): Promise<{ job: Job; slot: number } | null> {
    const s = await this.getSchedule(name);
    if (s === null) return null;
    let slot = Math.floor(now);
    while (!(await this.insertSlot({ schedule: name, slot, outcome: "manual", job_id: null, at: now, detail: null })))
      slot += 0.001;
    const job = await this.addJob({ ...s.job, next_run_at: now, idempotency_key: slotKey(name, slot, true) }, now);
    await this.setFired(name, slot, job.id);
    return { job, slot };
  }

  async addHook(h: Hook): Promise<boolean> {
    const rows = await this
      .tx`INSERT INTO hooks (name, on_outcome, match_queue, match_tag_key, match_tag_value, job, created_at)
      VALUES (${h.name}, ${h.on_outcome}, ${h.match_queue}::text, ${h.match_tag_key}::text, ${h.match_tag_value}::text,
        ${JSON.stringify(h.job)}, ${h.created_at}::float8)
      ON CONFLICT (name) DO NOTHING RETURNING 1`;
    return rows.length > 0;
  }

  async removeHook(name: string): Promise<boolean> {
    return (await this.tx`DELETE FROM hooks WHERE name = ${name} RETURNING 1`).length > 0;
  }

  /**
   * "Job ended → enqueue hooks" for this transaction (see {@link enqueueOutcomeHooks}), then, when
   * `batch-done` hooks exist and the job's batch is finished now, theirs ({@link enqueueBatchHooks}).
   * `read`: the hooks of `state` and `batch-done`, when the caller read them already; `batchCheck`
   * false skips the batch's check (the caller checks the batch once for many of its jobs).
   */
  async enqueueHooks(jobId: number, state: JobState, now: number, read?: Hook[], batchCheck = true): Promise<number[]> {
    const hooks = read ?? (await this.hooksOn(state));
    const added = await enqueueOutcomeHooks(this, jobId, state, now, hooks);
    if (!batchCheck || !hooks.some((h) => h.on_outcome === "batch-done")) return added;
    const batch = (await this.getJob(jobId))?.batch ?? null;
    return batch === null ? added : [...added, ...(await enqueueBatchHooks(this, batch, now, hooks))];
  }

  /** "Batch sealed → enqueue its `batch-done` hooks" when it was finished already (see {@link enqueueBatchHooks}). */
  async batchSealed(name: string, now: number): Promise<number[]> {
    const hooks = ((await this.tx`SELECT * FROM hooks WHERE on_outcome = 'batch-done'`) as Row[]).map(toHook);
    return enqueueBatchHooks(this, name, now, hooks);
  }

  // BatchHookStatements

  async finishedBatch(name: string): Promise<FinishedBatch | null> {
    // The lock orders this look after any other transaction's that ended a job of the batch or sealed it;
    // the counts below are a new statement, so under READ COMMITTED they see that transaction's commit.
    if ((await this.tx`SELECT 1 FROM batches WHERE name = ${name} FOR UPDATE`).length === 0) return null;
    const active = await this.tx`SELECT 1 FROM jobs WHERE batch = ${name} AND state IN ('queued','running') LIMIT 1`;
    if (active.length > 0) return null;
    const batch = await getBatch(this.tx, name);
    if (batch === null || batch.sealed_at === null || batch.counts.queued + batch.counts.running > 0) return null;
    const [last] = await this.tx`SELECT max(finished_at) AS t FROM jobs WHERE batch = ${name}`;
    return { batch, finished_at: Math.max(batch.sealed_at, numOrNull(last?.t) ?? 0) };
  }

  findLatestJobByKey(key: string): Promise<Job | null> {
    return this.jobs.findLatestJobByKey(key);
  }

  // SlotStatements

  async dueSchedules(now: number, limit: number): Promise<Schedule[]> {
    const rows = await this.tx`SELECT * FROM schedules WHERE paused = 0 AND next_slot <= ${now}::float8
      ORDER BY next_slot LIMIT ${limit} FOR UPDATE SKIP LOCKED`;
    return (rows as Row[]).map(toSchedule);
  }

  async jobActive(id: number): Promise<boolean> {
    return (await this.tx`SELECT 1 FROM jobs WHERE id = ${id} AND state IN ('queued','running')`).length > 0;
  }

  async advance(name: string, from: number, to: number): Promise<boolean> {
    const rows = await this.tx`UPDATE schedules SET next_slot = ${to}::float8
      WHERE name = ${name} AND next_slot = ${from}::float8 AND paused = 0 RETURNING 1`;
    return rows.length > 0;
  }

  async insertSlot(r: SlotRow): Promise<boolean> {
    const rows = await this.tx`INSERT INTO schedule_slots (schedule, slot, outcome, job_id, at, detail)
      VALUES (${r.schedule}, ${r.slot}::float8, ${r.outcome}, ${r.job_id}::bigint, ${r.at}::float8, ${r.detail}::text)
      ON CONFLICT (schedule, slot) DO NOTHING RETURNING 1`;
    return rows.length > 0;
  }

  async addJob(job: NewJob, now: number): Promise<Job> {
    const stored = await this.jobs.insertJob(job, now);
    await this.jobs.appendEvent(stored.id, "added", null, null, now);
    return stored;
  }

  async setFired(name: string, slot: number, jobId: number): Promise<void> {
    await this.tx`UPDATE schedule_slots SET job_id = ${jobId} WHERE schedule = ${name} AND slot = ${slot}::float8`;
    await this.tx`UPDATE schedules SET last_slot = ${slot}::float8, last_job_id = ${jobId}
      WHERE name = ${name} AND (last_slot IS NULL OR last_slot <= ${slot}::float8)`;
  }

  async trimSlots(name: string): Promise<void> {
    await this.tx`DELETE FROM schedule_slots WHERE schedule = ${name}
      AND slot < (SELECT slot FROM schedule_slots WHERE schedule = ${name} ORDER BY slot DESC LIMIT 1 OFFSET ${SLOT_ROWS_KEPT - 1})`;
  }

  // HookStatements

  async hooksOn(state: JobState): Promise<Hook[]> {
    return ((await this.tx.unsafe(HOT_SQL.hooksOn, [state])) as Row[]).map(toHook);
  }

  getJob(id: number): Promise<Job | null> {
    return this.jobs.getJob(id);
  }

  async attemptFiles(jobId: number, attemptNo: number): Promise<{ stdout: string; stderr: string } | null> {
    const [row] = await this
      .tx`SELECT stdout_path, stderr_path FROM attempts WHERE job_id = ${jobId} AND attempt_no = ${attemptNo}`;
    return row ? { stdout: row.stdout_path, stderr: row.stderr_path } : null;
  }

  findActiveJobByKey(key: string): Promise<Job | null> {
    return this.jobs.findActiveJobByKey(key);
  }
}
