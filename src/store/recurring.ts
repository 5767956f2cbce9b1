/**
 * Recurring schedules and outcome hooks in the store (docs/architecture.md "Recurring
 * jobs", "Hooks"; their rows are src/model/recurring.ts): their keys, their transactions'
 * interfaces, and the one algorithm that fires due slots, shared by both
 * drivers over their own statements ({@link SlotStatements}). Times are epoch seconds.
 */

import { SpoolError } from "../contract/errors.ts";
import type { SlotOutcome, SlotRow } from "../describe/schemas-recurring.ts";
import type { Job, JobState, NewJob } from "../model/job.ts";
import type { Hook, Schedule, ScheduleView, SlotDecision } from "../model/recurring.ts";
import { HOOK_BORN_TAG } from "../ops/hooks.ts";

/**
 * The planner a pass calls between its read and its write: null leaves the schedule as it is
 * (`--overlap queue` while the previous job is active).
 */
export type SlotPlanner = (schedule: Schedule, now: number, lastJobActive: boolean) => SlotDecision | null;

// Defined once, as the JSON Schemas `spoolctl schema` prints (`schedule tick`, `schedule list NAME`).
export type { SlotOutcome, SlotRow };

/** `CONFLICT` for `schedule add` or `hook add` of a name already taken: nothing was changed. */
export function nameTaken(kind: "schedule" | "hook", name: string): SpoolError {
  return new SpoolError("CONFLICT", `${kind} ${name} exists already`, {
    remediation: `spoolctl ${kind} rm ${name}, then add it again; spoolctl ${kind} list shows it`,
    detail: { name },
  });
}

/** The idempotency key of a schedule's job for `slot`: `sched:NAME:<ISO UTC>` (docs/architecture.md "Recurring jobs"). */
export function slotKey(name: string, slot: number, manual = false): string {
  return `sched:${name}:${manual ? "manual:" : ""}${new Date(slot * 1000).toISOString().replace(".000Z", "Z")}`;
}

/** The schedule and slot a job was made for, read back from its key; null for any other job. */
export function slotOfKey(key: string | null): { schedule: string; slot: string; manual: boolean } | null {
  const m = key === null ? null : /^sched:(.+):(manual:)?(\d{4}-\d\d-\d\dT[\d:.]+Z)$/.exec(key);
  return m ? { schedule: m[1]!, slot: m[3]!, manual: m[2] !== undefined } : null;
}

/** Key prefix of a hook's job: such a job never triggers hooks itself. */
export const HOOK_KEY_PREFIX = "hook:";

/** The idempotency key of hook `name`'s job for `job` ending in `state`. */
function hookKey(name: string, job: Pick<Job, "id" | "last_attempt_no">, state: JobState): string {
  return `${HOOK_KEY_PREFIX}${name}:${job.id}:${job.last_attempt_no}:${state}`;
}

/** The values a hook's job gets, in environment variables only, never in its command line. */
function hookEnvironment(
  job: Job,
  state: JobState,
  outputFile: string | null,
  stderrFile: string | null,
): Record<string, string> {
  return {
    SPOOLCTL_HOOK_JOB_ID: String(job.id),
    SPOOLCTL_HOOK_STATE: state,
    SPOOLCTL_HOOK_EXIT_CODE: job.last_exit_code === null ? "" : String(job.last_exit_code),
    SPOOLCTL_HOOK_LANE: job.queue,
    SPOOLCTL_HOOK_BATCH: job.batch ?? "",
    SPOOLCTL_HOOK_ATTEMPT: String(job.last_attempt_no),
    SPOOLCTL_HOOK_OUTPUT_FILE: outputFile ?? "",
    SPOOLCTL_HOOK_STDERR_FILE: stderrFile ?? "",
  };
}

/** Whether hook `h` fires for `job` ending in `state` (never for a hook's own job, nor one it added). */
function hookMatches(h: Hook, job: Job, state: JobState): boolean {
  if (job.idempotency_key?.startsWith(HOOK_KEY_PREFIX)) return false;
  if (job.tags[HOOK_BORN_TAG] !== undefined) return false;
  if (h.on_outcome !== state) return false;
  if (h.match_queue !== null && h.match_queue !== job.queue) return false;
  if (h.match_tag_key !== null && job.tags[h.match_tag_key] !== (h.match_tag_value ?? "")) return false;
  return true;
}

/** The statements a driver gives {@link fireDueSlots}, all inside its one write transaction. */
export interface SlotStatements {
  /** Unpaused schedules whose next slot is due by `now`, earliest first (PostgreSQL: locked, skipping locked rows). */
  dueSchedules(now: number, limit: number): Promise<Schedule[]>;
  /** Whether job `id` is queued or running. */
  jobActive(id: number): Promise<boolean>;
  /** The guard: moves the schedule's next slot from `from` to `to`; false when another pass moved it first. */
  advance(name: string, from: number, to: number): Promise<boolean>;
  /** Inserts a slot row; false when the slot already has one (the second fence). */
  insertSlot(row: SlotRow): Promise<boolean>;
  /** Adds a job with its `added` event; returns it. */
  addJob(job: NewJob, now: number): Promise<Job>;
  /** Records the job a slot made on its slot row and as the schedule's last job. */
  setFired(name: string, slot: number, jobId: number): Promise<void>;
  /** Keeps the newest {@link SLOT_ROWS_KEPT} slot rows of the schedule. */
  trimSlots(name: string): Promise<void>;
}

/** Slot rows kept per schedule (older ones are trimmed as new ones come). */
export const SLOT_ROWS_KEPT = 500;

/**
 * The due-slot pass (docs/architecture.md "Recurring jobs"), inside one write transaction:
 * for each due schedule, read, plan ({@link SlotPlanner}), then write guarded by the next slot
 * it read, so that two passes racing fire a slot once; the slot rows' primary key and the
 * job's idempotency key `sched:NAME:<slot>` are second fences. Returns what was decided.
 */
export async function fireDueSlots(
  st: SlotStatements,
  now: number,
  plan: SlotPlanner,
  limit: number,
): Promise<SlotOutcome[]> {
  const out: SlotOutcome[] = [];
  for (const s of await st.dueSchedules(now, limit)) {
    const active = s.last_job_id !== null && (await st.jobActive(s.last_job_id));
    const d = plan(s, now, active);
    if (d === null || !(await st.advance(s.name, s.next_slot, d.next))) continue;
    for (const slot of d.fire) {
      if (!(await st.insertSlot({ schedule: s.name, slot, outcome: "fired", job_id: null, at: now, detail: null })))
        continue;
      const job = await st.addJob({ ...s.job, next_run_at: now, idempotency_key: slotKey(s.name, slot) }, now);
      await st.setFired(s.name, slot, job.id);
      out.push({ schedule: s.name, slot, outcome: "fired", job_id: job.id });
    }
    const detail = JSON.stringify({ overlap: s.overlap, active_job: s.last_job_id });
    for (const slot of d.skipped)
      if (await st.insertSlot({ schedule: s.name, slot, outcome: "skipped", job_id: null, at: now, detail }))
        out.push({ schedule: s.name, slot, outcome: "skipped", job_id: null });
    if (d.missed !== null) {
      const { first, last, count } = d.missed;
      const row = { schedule: s.name, slot: first, outcome: "missed" as const, job_id: null, at: now };
      if (await st.insertSlot({ ...row, detail: JSON.stringify({ count, last, catch_up: s.catch_up }) }))
        out.push({ schedule: s.name, slot: first, outcome: "missed", job_id: null, count });
    }
    await st.trimSlots(s.name);
  }
  return out;
}

/**
 * Reads of schedules and hooks (`tx.recurring` of a read snapshot): docs/architecture.md
 * "Recurring jobs", "Hooks".
 */
export interface RecurringReader {
  /** The earliest next slot of an unpaused schedule, or null (one indexed row: the worker asks about once a second). */
  earliestSlot(): Promise<number | null>;
  /** Every schedule with its last job's state, by name. */
  listSchedules(): Promise<ScheduleView[]>;
  /** One schedule, or null. */
  getSchedule(name: string): Promise<Schedule | null>;
  /** The newest `limit` slot rows of a schedule, newest first. */
  slotsOf(name: string, limit: number): Promise<SlotRow[]>;
  /** Every hook, by name. */
  listHooks(): Promise<Hook[]>;
}

/**
 * Writes of schedules and hooks (`tx.recurring` inside a write transaction). Each method is
 * one operation of the caller's transaction with its guard in SQL.
 */
export interface RecurringWriter extends RecurringReader {
  /** Inserts a schedule; false, changing nothing, when the name is taken (guard: the primary key). */
  addSchedule(s: Schedule): Promise<boolean>;
  /** Deletes a schedule and its slot rows (its jobs stay); false when there is none. */
  removeSchedule(name: string): Promise<boolean>;
  /**
   * Pauses or resumes a schedule, guarded by its current `paused`; a resume also sets its
   * next slot to `nextSlot` (slots passed while paused are not caught up). Returns false,
   * changing nothing, when there is no such schedule or it already was so.
   */
  setPaused(name: string, paused: boolean, nextSlot: number): Promise<boolean>;
  /**
   * The due-slot pass ({@link fireDueSlots}): fires each due schedule's slots at `now`
   * (epoch seconds, the store's clock) as `plan` decides, guarded by the schedule's next
   * slot; writes `added` ledger rows for the jobs and wakes their lanes' workers.
   */
  fireDue(now: number, plan: SlotPlanner, limit: number): Promise<SlotOutcome[]>;
  /**
   * `schedule run-now`: adds the schedule's job now, keyed `sched:NAME:manual:<now>`, with a
   * `manual` slot row, and records it as the last job; null when there is no such schedule.
   */
  fireNow(name: string, now: number): Promise<{ job: Job; slot: number } | null>;
  /** Inserts a hook; false when the name is taken. */
  addHook(h: Hook): Promise<boolean>;
  /** Deletes a hook; false when there is none. */
  removeHook(name: string): Promise<boolean>;
}

/** The statements a driver gives {@link enqueueOutcomeHooks}, inside the transaction that ended the job. */
export interface HookStatements {
  /** Hooks waiting for `state`, and those waiting for `batch-done` (read with them: one statement per job end). */
  hooksOn(state: JobState): Promise<Hook[]>;
  getJob(id: number): Promise<Job | null>;
  /** The output files of an attempt on the host that ran it, or null. */
  attemptFiles(jobId: number, attemptNo: number): Promise<{ stdout: string; stderr: string } | null>;
  findActiveJobByKey(key: string): Promise<Job | null>;
  /** Adds a job with its `added` event; returns it. */
  addJob(job: NewJob, now: number): Promise<Job>;
}

/**
 * "Job ended → enqueue hooks" (docs/architecture.md "Hooks"): in the transaction that moved
 * job `jobId` to the terminal `state`, adds one job per matching hook, due at `now`, keyed
 * `hook:NAME:JOB:ATTEMPT:STATE` (a key already active adds nothing), with the outcome in its
 * environment only. A hook's own job triggers none. Returns the ids added.
 */
export async function enqueueOutcomeHooks(
  st: HookStatements,
  jobId: number,
  state: JobState,
  now: number,
  /** The hooks of `state`, when the caller read them already (PostgreSQL reads them with the outcome's write). */
  read?: Hook[],
): Promise<number[]> {
  const hooks = read ?? (await st.hooksOn(state));
  if (hooks.length === 0) return [];
  const job = await st.getJob(jobId);
  if (job === null) return [];
  const matching = hooks.filter((h) => hookMatches(h, job, state));
  if (matching.length === 0) return [];
  const files = job.last_attempt_no > 0 ? await st.attemptFiles(job.id, job.last_attempt_no) : null;
  const env = hookEnvironment(job, state, files?.stdout ?? null, files?.stderr ?? null);
  const added: number[] = [];
  for (const h of matching) {
    const key = hookKey(h.name, job, state);
    if ((await st.findActiveJobByKey(key)) !== null) continue;
    const hookJob = await st.addJob(
      { ...h.job, env: { ...h.job.env, ...env }, next_run_at: now, idempotency_key: key },
      now,
    );
    added.push(hookJob.id);
  }
  return added;
}
