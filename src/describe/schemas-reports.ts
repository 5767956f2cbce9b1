/**
 * The data of `report` and `completion`, each written once as a JSON Schema
 * with its TypeScript type derived from it (docs/contract.md "JSON Schema
 * export"); src/ops/report.ts and src/commands/completion.ts use the types.
 * Times are epoch seconds.
 */

import {
  arrayOf,
  bool,
  enumOf,
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
import { FAILURE_REASONS } from "../model/job.ts";
import { jobState, stringMap } from "./schemas-rows.ts";

/** Counts of a set of cases. */
const reportTotals = object({
  jobs: int,
  passed: int,
  failed: int,
  skipped: int,
  pending: int,
  /** Passed after failed attempts (docs/architecture.md "Flaky jobs"); not counted in `passed`. */
  flaky: int,
  time_seconds: num,
});
/** Counts of a set of cases (see {@link reportTotals}). */
export type ReportTotals = Static<typeof reportTotals>;

/** One job as a test case; `time_seconds` sums its attempts' run time. */
const reportCase = object({
  id: int,
  queue: str,
  state: jobState,
  /**
   * How a job reads as a test case: done → passed (flaky when an attempt
   * failed before the one that succeeded), dead → failed, canceled →
   * skipped, queued/running → pending.
   */
  result: enumOf(["passed", "flaky", "failed", "skipped", "pending"]),
  /** The job's name (`add --name`, docs/architecture.md "Job names"); null: none. */
  name: nullable(str),
  /** Its idempotency key; null: none. */
  key: nullable(str),
  argv: arrayOf(str),
  tags: stringMap,
  /** Attempts started (all kinds). */
  attempts_total: int,
  time_seconds: num,
  created_at: num,
  /** Start of the first attempt, or null when it never ran. */
  started_at: nullable(num),
  /** End of the last attempt, or null while it runs or when it never ran. */
  finished_at: nullable(num),
  exit_code: nullable(int),
  signal: nullable(int),
  /** Failure reason of the last attempt that did not succeed (null when passed). */
  failure_reason: nullable(enumOf(FAILURE_REASONS)),
  /** One line: `process_exit: exit 1`, `canceled`, `not finished: queued`; null when passed. */
  message: nullable(str),
  /** Tails (≤ 40 lines) of the last attempt's output, for cases that did not pass; "" otherwise. */
  stderr_tail: str,
  stdout_tail: str,
  /** A flaky case's failed attempts, oldest first (JUnit `<flakyFailure>`); empty otherwise. */
  flaky_attempts: arrayOf(object({ attempt_no: int, failure_reason: nullable(enumOf(FAILURE_REASONS)), message: str })),
});
/** One test case (see {@link reportCase}). */
export type ReportCase = Static<typeof reportCase>;

/** `report --json` data. */
const reportData = object({
  generated_at: num,
  /** `batch` is present when `--batch` was given. */
  filters: object({
    ids: arrayOf(int),
    queue: nullable(str),
    tags: stringMap,
    since: nullable(num),
    batch: optional(str),
  }),
  totals: reportTotals,
  /** Totals per lane, lanes sorted by name. */
  lanes: mapOf(reportTotals),
  /** Oldest job first. */
  cases: arrayOf(reportCase),
  /** More jobs matched than `--limit`; the oldest were left out. */
  truncated: bool,
  /** Files written (null when not asked for). */
  files: object({ junit: nullable(str), markdown: nullable(str), summary: optional(str) }),
});
/** `report --json` data (see {@link reportData}). */
export type ReportData = Static<typeof reportData>;

/** `completion --json` data: the shell and its script. */
const completionData = object({ shell: enumOf(["bash", "zsh", "fish"]), script: str });
/** `completion --json` data (see {@link completionData}). */
export type CompletionData = Static<typeof completionData>;

/**
 * `metrics --json` data: the format, its HTTP content type and the exposition
 * text; under `--serve`, instead of the text, the scrapes answered and the address.
 */
const metricsData = object({
  format: enumOf(["prometheus", "openmetrics"]),
  content_type: str,
  text: optional(str),
  served: optional(int),
  address: optional(str),
});
/** `metrics --json` data (see {@link metricsData}). */
export type MetricsData = Static<typeof metricsData>;

/**
 * `ui --json` data, printed once the server listens: the URL to open (with
 * its token), the address and port bound, and whether writes are refused.
 */
const uiData = object({
  url: str,
  host: str,
  port: int,
  read_only: bool,
});
/** `ui --json` data (see {@link uiData}). */
export type UiData = Static<typeof uiData>;

/** Data schemas of `report`, `completion`, `metrics` and `ui`. */
export const REPORT_DATA_SCHEMAS: Record<string, JsonSchema> = {
  report: reportData,
  completion: completionData,
  metrics: metricsData,
  ui: uiData,
};
