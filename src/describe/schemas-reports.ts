/**
 * JSON Schemas of the data of `report` and `completion`, mirroring
 * `ReportData` (src/ops/report.ts) and `CompletionData`
 * (src/commands/completion.ts). Times are epoch seconds.
 */
import { FAILURE_REASONS } from "../store/model.ts";
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
  str,
} from "./schema-kit.ts";
import { jobState, stringMap } from "./schemas-rows.ts";

const totals = object({ jobs: int, passed: int, failed: int, skipped: int, pending: int, time_seconds: num });

const reportCase = object({
  id: int,
  queue: str,
  state: jobState,
  result: enumOf(["passed", "failed", "skipped", "pending"]),
  argv: arrayOf(str),
  tags: stringMap,
  attempts_total: int,
  time_seconds: num,
  created_at: num,
  started_at: nullable(num),
  finished_at: nullable(num),
  exit_code: nullable(int),
  signal: nullable(int),
  failure_reason: nullable(enumOf(FAILURE_REASONS)),
  message: nullable(str),
  stderr_tail: str,
  stdout_tail: str,
});

/** Data schemas of `report` and `completion`. */
export const REPORT_DATA_SCHEMAS: Record<string, JsonSchema> = {
  report: object({
    generated_at: num,
    filters: object({
      ids: arrayOf(int),
      queue: nullable(str),
      tags: stringMap,
      since: nullable(num),
      batch: optional(str),
    }),
    totals,
    lanes: mapOf(totals),
    cases: arrayOf(reportCase),
    truncated: bool,
    files: object({ junit: nullable(str), markdown: nullable(str) }),
  }),
  completion: object({ shell: enumOf(["bash", "zsh", "fish"]), script: str }),
};
