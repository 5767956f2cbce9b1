/**
 * JSON Schemas of the data of `schedule …` and `hook …` (docs/architecture.md "Recurring
 * jobs", "Hooks"). Mirrors the result types of src/ops/schedules.ts and src/ops/hooks.ts.
 */
import { JOB_STATES } from "../store/model.ts";
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
  str,
} from "./schema-kit.ts";

const OUTCOMES = ["fired", "skipped", "missed", "manual"] as const;

const schedule = object({
  name: str,
  rule: str,
  cron: nullable(str),
  every_seconds: nullable(num),
  tz: nullable(str),
  queue: str,
  argv: arrayOf(str),
  catch_up: str,
  overlap: enumOf(["skip", "queue", "allow"]),
  paused: bool,
  next_slot: nullable(num),
  next_fire: nullable(str),
  last_slot: nullable(str),
  last_job_id: nullable(int),
  last_job_state: nullable(enumOf(JOB_STATES)),
});
const slotRow = object({
  schedule: str,
  slot: num,
  outcome: enumOf(OUTCOMES),
  job_id: nullable(int),
  at: num,
  detail: nullable(str),
});
const slotOutcome = object({
  schedule: str,
  slot: num,
  outcome: enumOf(OUTCOMES),
  job_id: nullable(int),
  count: optional(int),
});
const hook = object({
  name: str,
  on: enumOf(["done", "dead", "canceled", "batch-done"]),
  queue: nullable(str),
  tag: nullable(str),
  run_queue: str,
  argv: arrayOf(str),
});
const removed = object({ name: str, removed: constant(true) });
const paused = object({ schedule, changed: bool });

/** Data schemas of the schedule and hook verbs, by verb name. */
export const RECURRING_DATA_SCHEMAS: Record<string, JsonSchema> = {
  "schedule-add": schedule,
  "schedule-list": object({ schedules: arrayOf(schedule), slots: optional(arrayOf(slotRow)) }),
  "schedule-rm": removed,
  "schedule-pause": paused,
  "schedule-resume": paused,
  "schedule-run-now": object({ name: str, job_id: int, key: str, queue: str }),
  "schedule-tick": object({ outcomes: arrayOf(slotOutcome) }),
  "hook-add": hook,
  "hook-list": object({ hooks: arrayOf(hook) }),
  "hook-rm": removed,
};
