/**
 * The data of `schedule …` and `hook …` (docs/architecture.md "Recurring jobs",
 * "Hooks"), each written once as a JSON Schema with its TypeScript type derived
 * from it; src/ops/schedules.ts, src/ops/hooks.ts and the slot rows of
 * src/store/recurring.ts use the types. Times are epoch seconds.
 */

import {
  arrayOf,
  bool,
  constant,
  enumOf,
  int,
  type JsonSchema,
  nullable,
  num,
  object,
  optional,
  type Static,
  str,
} from "../contract/schema-kit.ts";
import { JOB_STATES } from "../model/job.ts";

const OUTCOMES = ["fired", "skipped", "missed", "manual"] as const;

/** A schedule as `schedule list --json` shows it. */
const scheduleData = object({
  name: str,
  /** `cron '0 3 * * *' Europe/Berlin` or `every 10s`. */
  rule: str,
  cron: nullable(str),
  every_seconds: nullable(num),
  tz: nullable(str),
  queue: str,
  argv: arrayOf(str),
  catch_up: str,
  overlap: enumOf(["skip", "queue", "allow"]),
  paused: bool,
  /** The next slot, epoch seconds, and as ISO-8601 in the schedule's zone (null while paused). */
  next_slot: nullable(num),
  next_fire: nullable(str),
  last_slot: nullable(str),
  last_job_id: nullable(int),
  last_job_state: nullable(enumOf(JOB_STATES)),
});
/** A schedule (see {@link scheduleData}). */
export type ScheduleData = Static<typeof scheduleData>;

/** A `schedule_slots` row: the schedule's own ledger. */
const slotRow = object({
  schedule: str,
  slot: num,
  outcome: enumOf(OUTCOMES),
  job_id: nullable(int),
  at: num,
  detail: nullable(str),
});
/** A slot row (see {@link slotRow}). */
export type SlotRow = Static<typeof slotRow>;

/** One slot a pass decided. */
const slotOutcome = object({
  schedule: str,
  slot: num,
  outcome: enumOf(OUTCOMES),
  job_id: nullable(int),
  /** Missed slots only: how many this row stands for. */
  count: optional(int),
});
/** A slot's outcome (see {@link slotOutcome}). */
export type SlotOutcome = Static<typeof slotOutcome>;

/** A hook as `hook list --json` shows it. */
const hookData = object({
  name: str,
  on: enumOf(["done", "dead", "canceled", "batch-done"]),
  queue: nullable(str),
  tag: nullable(str),
  run_queue: str,
  argv: arrayOf(str),
});
/** A hook (see {@link hookData}). */
export type HookData = Static<typeof hookData>;

/** `schedule rm`, `hook rm`: what was removed. */
const removed = object({ name: str, removed: constant(true) });
/** `schedule rm`, `hook rm` data (see {@link removed}). */
export type Removed = Static<typeof removed>;

/** `schedule pause`, `schedule resume`: the schedule, and whether the verb changed it. */
const pausedData = object({ schedule: scheduleData, changed: bool });
/** `schedule pause|resume` data (see {@link pausedData}). */
export type PausedData = Static<typeof pausedData>;

/** `schedule list` data; with a NAME, `slots` has that schedule's newest slot rows, newest first. */
const scheduleListData = object({ schedules: arrayOf(scheduleData), slots: optional(arrayOf(slotRow)) });
/** `schedule list` data (see {@link scheduleListData}). */
export type ScheduleListData = Static<typeof scheduleListData>;

/** `schedule run-now` data: the job added, its idempotency key and lane. */
const runNowData = object({ name: str, job_id: int, key: str, queue: str });
/** `schedule run-now` data (see {@link runNowData}). */
export type RunNowData = Static<typeof runNowData>;

/** `schedule tick` data: the slots the pass decided. */
const tickData = object({ outcomes: arrayOf(slotOutcome) });
/** `schedule tick` data (see {@link tickData}). */
export type TickData = Static<typeof tickData>;

/** `hook list` data. */
const hookListData = object({ hooks: arrayOf(hookData) });
/** `hook list` data (see {@link hookListData}). */
export type HookListData = Static<typeof hookListData>;

/** Data schemas of the schedule and hook verbs, by verb name. */
export const RECURRING_DATA_SCHEMAS: Record<string, JsonSchema> = {
  "schedule-add": scheduleData,
  "schedule-list": scheduleListData,
  "schedule-rm": removed,
  "schedule-pause": pausedData,
  "schedule-resume": pausedData,
  "schedule-run-now": runNowData,
  "schedule-tick": tickData,
  "hook-add": hookData,
  "hook-list": hookListData,
  "hook-rm": removed,
};
