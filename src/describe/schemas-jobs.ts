/**
 * The data of the verbs that act on finished or unwanted jobs: feedback,
 * cancel, delete, prune; each written once as a JSON Schema with its
 * TypeScript type derived from it (src/ops/feedback.ts, src/ops/cancel.ts,
 * src/ops/prune.ts and src/commands/delete.ts use the types). Times are
 * seconds, sizes bytes.
 */

import {
  arrayOf,
  bool,
  enumOf,
  int,
  type JsonSchema,
  nullable,
  num,
  object,
  oneOf,
  optional,
  type Static,
  str,
} from "../contract/schema-kit.ts";
import { FAILURE_REASONS } from "../model/job.ts";
import { jobState } from "./schemas-rows.ts";

/** One stream's tail. */
const streamTail = object({
  path: nullable(str),
  missing: bool,
  size_bytes: int,
  /** The last bytes as UTF-8, from a line's start when earlier bytes are left out; "" when `binary`. */
  tail: str,
  truncated: bool,
  /** Bytes of the stream before `tail`, counted at the stream's offsets. */
  omitted_bytes: int,
  /** `tail` starts mid-line: it held no line break to cut at. */
  partial_first_line: bool,
  /** Not text (a NUL byte, or mostly bytes that are not UTF-8): `output ID --raw` has the bytes. */
  binary: bool,
});
/** One stream's tail (see {@link streamTail}). */
export type StreamTail = Static<typeof streamTail>;

/** What an attempt left running once its own process exited (its `left_running` event). */
const leftRunning = object({ attempt: int, pids: arrayOf(int), killed: bool });
/** What an attempt left running (see {@link leftRunning}). */
export type LeftRunning = Static<typeof leftRunning>;

/** `feedback --json` data. */
const feedbackData = object({
  job_id: int,
  state: jobState,
  terminal: bool,
  /** true when done, false when dead or canceled, null while queued or running. */
  succeeded: nullable(bool),
  /** Failures charged to the retry budget. */
  attempts: int,
  /** Attempts started so far. */
  attempts_total: int,
  latest_attempt_no: nullable(int),
  exit_code: nullable(int),
  failure_reason: nullable(enumOf(FAILURE_REASONS)),
  last_error: nullable(str),
  /** Run time of the latest finished attempt. */
  duration_seconds: nullable(num),
  /** The next command to run, or null when there is nothing to do. */
  remediation: nullable(str),
  streams: object({ stdout: streamTail, stderr: streamTail }),
  /** Processes the latest attempt left running after it exited (PIDs, and whether its worker ended them); absent when none. */
  left_running: optional(leftRunning),
});
/** `feedback --json` data (see {@link feedbackData}). */
export type FeedbackData = Static<typeof feedbackData>;

/** One canceled job, as `cancel --json` reports it. */
const canceledJob = object({
  job_id: int,
  /** `canceled`, or `running` while its worker has yet to stop it. */
  state: enumOf(["canceled", "running"]),
  /** True when the cancel was handed to the running job's worker (state stays `running` until it acts). */
  was_running: bool,
  /** The jobs that needed its success, closed with it (`need_failed`, down the chain), ascending; absent when none. */
  closed: optional(arrayOf(int)),
});
/** One canceled job (see {@link canceledJob}). */
export type CanceledJob = Static<typeof canceledJob>;

/** `cancel --json` data: the job, or `{count, jobs}` for several. */
const cancelData = oneOf(
  canceledJob,
  object({
    count: int,
    jobs: arrayOf(canceledJob),
    /** Set by `--dry-run`: the jobs that would be canceled; nothing changed. */
    dry_run: optional(bool),
  }),
);
/** `cancel --json` data (see {@link cancelData}). */
export type CancelData = Static<typeof cancelData>;

/** `delete --json` data: what was deleted (all zero and `job_ids` empty when the confirm was declined). */
const deleteData = object({
  count: int,
  job_ids: arrayOf(int),
  deleted_attempts: int,
  deleted_events: int,
  freed_bytes: int,
  /** Set when jobs were deleted: they cannot be recovered. */
  irreversible: bool,
  /** The jobs that needed a deleted queued job's success, closed (`need_failed`, down the chain), ascending; absent when none. */
  closed: optional(arrayOf(int)),
  /** Set by `--dry-run`: the counts are what `--yes` would delete (and close); nothing changed. */
  dry_run: optional(bool),
});
/** `delete --json` data (see {@link deleteData}). */
export type DeleteData = Static<typeof deleteData>;

/** `prune --json` data: with `--dry-run` the counts are what `--yes` would delete, and `actual` is false. */
const pruneData = object({
  /** Whether rows and files were really deleted. */
  actual: bool,
  dry_run: bool,
  /** Set on an actual prune: what was deleted cannot be recovered. */
  irreversible: optional(bool),
  /** Terminal jobs that matched. */
  matched: int,
  deleted_jobs: int,
  deleted_attempts: int,
  deleted_events: int,
  freed_bytes: int,
});
/** `prune --json` data (see {@link pruneData}). */
export type PruneData = Static<typeof pruneData>;

/** Data schemas of feedback, cancel, delete and prune, by verb name. */
export const JOB_DATA_SCHEMAS: Record<string, JsonSchema> = {
  feedback: feedbackData,
  cancel: cancelData,
  delete: deleteData,
  prune: pruneData,
};
