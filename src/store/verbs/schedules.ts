/**
 * The schedule operations (docs/architecture.md "Recurring jobs"): add, list,
 * show, remove, pause or resume, fire now, and the due-slot pass every live
 * worker runs. Each is one transaction; parsing what the user typed and the
 * shapes shown are in `src/ops/schedules.ts`, slot arithmetic in
 * `src/ops/schedule-time.ts`.
 */
import { SpoolError } from "../../contract/errors.ts";
import type { Job } from "../../model/job.ts";
import type { JobTemplate, Schedule, ScheduleView } from "../../model/recurring.ts";
import { settingsFrom } from "../../model/settings.ts";
import { toNewJob } from "../../ops/job-spec.ts";
import { nextSlotAfter, planSlots, ruleOf } from "../../ops/schedule-time.ts";
import type { ScheduleDraft } from "../../ops/schedules.ts";
import { nameTaken, type SlotOutcome, type SlotRow } from "../recurring.ts";
import type { SnapshotReader, Store } from "../store.ts";

/**
 * Stores schedule `draft` (`schedule add`), one write transaction: reads the
 * queue settings its job copies (as `add` does), then inserts the row, whose
 * first slot is the first after the queue's clock (epoch seconds). Guard: the
 * name's primary key; `CONFLICT` when it is taken (nothing changed). Writes no
 * ledger row; wakes no worker (the next due-slot pass sees it).
 */
export async function addSchedule(store: Store, draft: ScheduleDraft): Promise<Schedule> {
  return await store.write(async (tx) => {
    const settings = settingsFrom(await tx.listSettings());
    const now = store.now();
    const { next_run_at: _due, idempotency_key: _key, ...job } = toNewJob(draft.spec, settings, now);
    const schedule: Schedule = {
      name: draft.name,
      cron: draft.cron,
      every_seconds: draft.every_seconds,
      tz: draft.tz,
      job: job as JobTemplate,
      queue: job.queue,
      catch_up: draft.catch_up,
      overlap: draft.overlap,
      paused: false,
      next_slot: nextSlotAfter(ruleOf(draft), now),
      last_slot: null,
      last_job_id: null,
      created_at: now,
    };
    if (!(await tx.recurring.addSchedule(schedule))) throw nameTaken("schedule", draft.name);
    return schedule;
  });
}

/** Every schedule by name with its last job's state (`schedule list`), one read snapshot. */
export async function listSchedules(store: SnapshotReader): Promise<ScheduleView[]> {
  return store.read(async (tx) => tx.recurring.listSchedules());
}

/** Schedule `name` and its newest `limit` slot rows (`schedule show`), one read snapshot. Raises `NOT_FOUND`. */
export async function scheduleDetail(
  store: SnapshotReader,
  name: string,
  limit: number,
): Promise<{ schedule: ScheduleView; slots: SlotRow[] }> {
  return await store.read(async (tx) => {
    const schedule = (await tx.recurring.listSchedules()).find((x) => x.name === name);
    if (!schedule) throw noSchedule(name);
    return { schedule, slots: await tx.recurring.slotsOf(name, limit) };
  });
}

/** `NOT_FOUND` for schedule `name`. */
function noSchedule(name: string): SpoolError {
  return new SpoolError("NOT_FOUND", `no schedule named ${name}`, {
    remediation: "spoolctl schedule list shows the schedules",
    detail: { name },
  });
}

/** Deletes schedule `name` (`schedule rm`; its jobs stay), one write transaction, one DELETE. Raises `NOT_FOUND`. */
export async function removeSchedule(store: Store, name: string): Promise<void> {
  if (!(await store.write(async (tx) => tx.recurring.removeSchedule(name)))) throw noSchedule(name);
}

/**
 * Pauses or resumes schedule `name` (`schedule pause|resume`), one write
 * transaction: reads the schedule, sets `paused` and, on resume, its next slot
 * to the first after the queue's clock (slots missed while paused are not
 * caught up), then reads it back. Guard: the UPDATE changes nothing when the
 * schedule is already so (`changed: false`). Raises `NOT_FOUND`. Writes no
 * ledger row; wakes no worker.
 */
export async function pauseSchedule(
  store: Store,
  name: string,
  paused: boolean,
): Promise<{ schedule: ScheduleView; changed: boolean }> {
  return await store.write(async (tx) => {
    const s = await tx.recurring.getSchedule(name);
    if (s === null) throw noSchedule(name);
    const changed = await tx.recurring.setPaused(name, paused, nextSlotAfter(ruleOf(s), store.now()));
    const schedule = (await tx.recurring.listSchedules()).find((x) => x.name === name);
    if (!schedule) throw noSchedule(name);
    return { schedule, changed };
  });
}

/**
 * Adds schedule `name`'s job now, outside its slots (`schedule run-now`), one
 * write transaction (`fireNow`): the job, with its `added` ledger row and a
 * `manual` slot row, wakes the workers of its lane. Raises `NOT_FOUND`.
 */
export async function runScheduleNow(store: Store, name: string): Promise<Job> {
  const fired = await store.write(async (tx) => tx.recurring.fireNow(name, store.now()));
  if (fired === null) throw noSchedule(name);
  return fired.job;
}

/** The earliest next slot of an unpaused schedule (epoch seconds; null: none), one read snapshot on an index. */
async function earliestScheduleSlot(store: SnapshotReader): Promise<number | null> {
  return store.read(async (tx) => tx.recurring.earliestSlot());
}

/**
 * Fires the due slots of at most `limit` schedules at the queue's clock (the
 * due-slot pass), one write transaction: `fireDue` decides each schedule's
 * slots with the pure planner `planSlots` and fires them, fenced by each
 * schedule's `next_slot` in its guarded UPDATE (two workers' passes never fire
 * one slot twice); then reads the earliest next slot. Jobs fired get `added`
 * ledger rows and wake their lanes' workers.
 */
async function fireDueSchedules(
  store: Store,
  limit: number,
): Promise<{ outcomes: SlotOutcome[]; earliest: number | null }> {
  return await store.write(async (tx) => {
    const outcomes = await tx.recurring.fireDue(store.now(), planSlots, limit);
    return { outcomes, earliest: await tx.recurring.earliestSlot() };
  });
}

/** Most schedules one pass fires (the rest wait for the next pass, a second later). */
const PASS_LIMIT = 50;

/**
 * One due-slot pass at the store's clock (docs/architecture.md "Recurring jobs"), what
 * every live worker runs about once a second: the cheap indexed read
 * {@link earliestScheduleSlot} first, and the write transaction {@link fireDueSchedules}
 * only when a slot is due. Returns what it decided and the earliest next slot afterwards
 * (null: no unpaused schedule).
 */
export async function tickSchedules(store: Store): Promise<{ outcomes: SlotOutcome[]; earliest: number | null }> {
  const earliest = await earliestScheduleSlot(store);
  if (earliest === null || earliest > store.now()) return { outcomes: [], earliest };
  return await fireDueSchedules(store, PASS_LIMIT);
}
