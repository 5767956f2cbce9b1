/**
 * The data of the lane and batch verbs and of `wait` (docs/architecture.md
 * "Lanes and slots", "Batches"): pause, resume, lane set, lane list, batch
 * seal|show|list, wait; each written once as a JSON Schema with its TypeScript
 * type derived from it (src/ops/lanes.ts, src/ops/wait.ts and
 * src/commands/lane.ts use the types). Times are epoch seconds.
 */

import {
  arrayOf,
  bool,
  countsOf,
  int,
  type JsonSchema,
  mapOf,
  nullable,
  num,
  object,
  optional,
  type Static,
  str,
} from "../contract/schema-kit.ts";
import { JOB_STATES } from "../model/job.ts";
import { batchSummary, jobState } from "./schemas-rows.ts";

/** `LANE_UNKNOWN`'s data: the lanes in use when nothing named the lane (a typo?), else null. */
const unknownLane = nullable(object({ lanes_in_use: arrayOf(str) }));

/** One lane as `lane list` shows it. */
const laneView = object({
  queue: str,
  queued: int,
  running: int,
  /** The lane's own fleet-wide ceiling (`lane set --slots`); null: none (workers' --slots apply). */
  slots: nullable(int),
  paused: bool,
  paused_at: nullable(num),
  paused_until: nullable(num),
  pause_reason: nullable(str),
  /** Live workers serving the lane (by name, or with --all-lanes). */
  workers: int,
});
/** One lane (see {@link laneView}). */
export type LaneView = Static<typeof laneView>;

/** `lane list --json` data. */
const laneListData = object({ count: int, lanes: arrayOf(laneView) });
/** `lane list --json` data (see {@link laneListData}). */
export type LaneListData = Static<typeof laneListData>;

/** `pause --json` data. */
const pauseData = object({
  queue: str,
  paused_at: num,
  /** When the pause ends by itself; null: until resumed. */
  paused_until: nullable(num),
  reason: nullable(str),
  /** The lane's running jobs, which finish. */
  running: int,
  /** The lane's queued jobs, which wait. */
  queued: int,
  /** The pause this one replaced (a pause was in force already), or null. */
  replaced: nullable(object({ reason: nullable(str), paused_until: nullable(num) })),
  unknown_lane: unknownLane,
});
/** `pause --json` data (see {@link pauseData}). */
export type PauseData = Static<typeof pauseData>;

/** `resume --json` data. */
const resumeData = object({
  queue: str,
  /** Whether the lane was paused (false: nothing changed). */
  was_paused: bool,
  queued: int,
});
/** `resume --json` data (see {@link resumeData}). */
export type ResumeData = Static<typeof resumeData>;

/** `lane set --json` data; `unknown_lane` is null too when the ceiling was cleared. */
const laneSetData = object({
  queue: str,
  /** The lane's ceiling now; null: cleared. */
  slots: nullable(int),
  running: int,
  unknown_lane: unknownLane,
});
/** `lane set --json` data (see {@link laneSetData}). */
export type LaneSetData = Static<typeof laneSetData>;

/** One awaited job as `wait --json` reports it. */
const waitedJob = object({
  /** Failures charged to the retry budget. */
  attempts: int,
  last_error: nullable(str),
  last_exit_code: nullable(int),
  state: jobState,
  /** Present (true) when it ended done after failed attempts (docs/architecture.md "Flaky jobs"). */
  flaky: optional(bool),
});
/** One awaited job (see {@link waitedJob}). */
export type WaitedJob = Static<typeof waitedJob>;

/** `wait --json` data: jobs keyed by id; a selection wait (`--batch`, `--queue`, `--tag`) adds the counts. */
const waitData = object({
  all_succeeded: bool,
  jobs: mapOf(waitedJob),
  /** How many of `jobs` are flaky (done after failed attempts); absent when none. */
  flaky: optional(int),
  /** A selection wait: its jobs counted by state. */
  counts: optional(countsOf(JOB_STATES)),
  /** `wait --batch`: the batch, with its seal, fail-fast and verdict. */
  batch: optional(batchSummary),
});
/** `wait --json` data (see {@link waitData}). */
export type WaitData = Static<typeof waitData>;

/** Data schemas of the lane, batch and wait verbs, by verb name. */
export const LANE_DATA_SCHEMAS: Record<string, JsonSchema> = {
  wait: waitData,
  "batch-seal": batchSummary,
  "batch-show": batchSummary,
  "batch-list": object({ batches: arrayOf(batchSummary) }),
  pause: pauseData,
  resume: resumeData,
  "lane-list": laneListData,
  "lane-set": laneSetData,
};
