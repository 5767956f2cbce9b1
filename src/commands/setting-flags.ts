/**
 * The value grammar of the flags that set a job's settings (its time limit,
 * retry budget, priority, delay and due time), shared by `add`, `edit` and
 * `retry` so that one setting is parsed one way everywhere; each verb adds its
 * own description and default. Units as the parser returns them: seconds for
 * durations, epoch seconds for times (src/contract/flags.ts).
 */
import { LIMITS } from "../model/limits.ts";

/** A job's time limit: a duration within the limits, or `none` (0: no limit). */
export const TIMEOUT_VALUE = {
  type: "string",
  valueHint: "DURATION",
  valueType: "duration",
  allowsNone: true,
  min: LIMITS.timeout_seconds.min,
  max: LIMITS.timeout_seconds.max,
} as const;

/** A retry budget: retries after a failed, timed-out or unstartable attempt. */
export const RETRIES_VALUE = {
  type: "string",
  valueHint: "N",
  valueType: "integer",
  min: LIMITS.max_retries.min,
  max: LIMITS.max_retries.max,
} as const;

/** A claim priority, a 32-bit integer (higher first). */
export const PRIORITY_VALUE = {
  type: "string",
  valueHint: "N",
  valueType: "integer",
  min: LIMITS.priority.min,
  max: LIMITS.priority.max,
} as const;

/** A delay from now before a job is due, seconds (0: now). */
export const DELAY_VALUE = {
  type: "string",
  valueHint: "DURATION",
  valueType: "duration",
  min: 0,
  max: LIMITS.delay_seconds.max,
} as const;

/** A due time: epoch seconds or ISO-8601. */
export const TIME_VALUE = { type: "string", valueHint: "TIME", valueType: "timestamp" } as const;
