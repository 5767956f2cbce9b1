/**
 * CI reports (`report`): the jobs of a run, or those matching filters,
 * as test cases with a result, timing from their attempts, and the failure
 * reason plus output tails of what did not pass. Renderers (JUnit XML,
 * markdown) live in `src/ui/`; the read is `reportSnapshot` of
 * src/store/verbs/report.ts; this module decides.
 */

import type { ReportCase, ReportData, ReportTotals } from "../describe/schemas-reports.ts";
import type { Attempt, Job, JobState } from "../model/job.ts";
import { describeExit } from "./outcome.ts";
import type { StreamView } from "./output.ts";
import { parseDuration, parseTimestamp } from "./values.ts";

/** How a job reads as a test case: done → passed or flaky, dead → failed, canceled → skipped, queued/running → pending. */
export type CaseResult = ReportCase["result"];

/** Bounds of `report --limit`. */
export const REPORT_LIMIT = { min: 1, max: 1_000_000, default: 10_000 } as const;

/** Output tails are cut to this many bytes, then to {@link TAIL_LINES} lines. */
export const REPORT_TAIL_BYTES = 8 * 1024;
/** Lines kept of an output tail. */
const TAIL_LINES = 40;

/** Filters of a report, validated. `since` is epoch seconds. */
export interface ReportQuery {
  /** Job ids or idempotency keys; empty = every job matching the other filters. */
  refs: string[];
  queue?: string;
  tags: Record<string, string>;
  /** Only jobs created at or after this time (epoch seconds). */
  since?: number;
  /** Only jobs of this batch (docs/architecture.md "Batches"). */
  batch?: string;
  limit: number;
}

// Defined once, as the JSON Schemas `spoolctl schema` prints.
export type { ReportCase, ReportData, ReportTotals };

/**
 * Parses `--since`: a duration back from `now` (`30m`, `2h`, `1d`, bare
 * seconds below 10^9) or a point in time (epoch seconds ≥ 10^9, ISO-8601).
 * Returns epoch seconds.
 */
export function parseSince(raw: string, now: number): number {
  const text = raw.trim();
  if (/^\d+(\.\d+)?$/.test(text) && Number(text) >= 1e9) return parseTimestamp("--since", raw);
  if (/^(\d+(\.\d+)?|\.\d+)\s*[smhd]?$/.test(text)) return now - parseDuration("--since", raw, 0, 100 * 365 * 86400);
  return parseTimestamp("--since", raw);
}

/** Attempt states that are a failure a later attempt may have made good (a crash counts: it ran and did not pass). */
const FAILED_ATTEMPT = new Set(["failed", "timed_out", "abandoned"]);

/** The failed attempts of a job that ended done: non-empty makes it flaky (docs/architecture.md "Flaky jobs"). */
function flakyAttempts(state: JobState, attempts: Attempt[]): Attempt[] {
  return state === "done" ? attempts.filter((a) => FAILED_ATTEMPT.has(a.state)) : [];
}

/** The label of a case in reports: its name, else its key, else null (docs/architecture.md "Job names"). */
export function caseLabel(c: Pick<ReportCase, "name" | "key">): string | null {
  return c.name ?? c.key;
}

function resultOf(state: JobState, flaky = false): CaseResult {
  if (state === "done") return flaky ? "flaky" : "passed";
  if (state === "dead") return "failed";
  if (state === "canceled") return "skipped";
  return "pending";
}

/** The last `TAIL_LINES` lines of a stream's tail read at {@link REPORT_TAIL_BYTES} ("" when missing). */
export function tailLines(view: StreamView): string {
  if (view.missing || view.text === "") return "";
  const lines = view.text.split("\n");
  // Views start at a line's start (ops/output.ts tailView); a lone partial line is kept.
  if (lines.at(-1) === "") lines.pop();
  return lines.slice(-TAIL_LINES).join("\n");
}

function attemptDetail(a: Attempt): string {
  const detail = a.error ?? describeExit(a.exit_code, a.signal);
  return a.failure_reason && a.failure_reason !== "canceled" ? `${a.failure_reason}: ${detail}` : detail;
}

/** `: need_failed: job 1 ended dead` or `: fail_fast: batch …` for a job the queue closed, else "". */
function closedBy(job: Job): string {
  const e = job.last_error;
  return e !== null && /^(need_failed|fail_fast): /.test(e) ? `: ${e}` : "";
}

function messageOf(job: Job, result: CaseResult, last: Attempt | undefined, failures: number): string | null {
  switch (result) {
    case "passed":
      return null;
    case "flaky":
      return `passed at attempt ${last?.attempt_no ?? "?"} after ${failures} failed attempt${failures === 1 ? "" : "s"}`;
    case "pending":
      return `not finished: ${job.state}${last ? ` (attempt ${last.attempt_no} ${last.state === "running" ? "running" : `${last.state}: ${attemptDetail(last)}`})` : ""}`;
    case "skipped":
      if (last?.state === "canceled") return `canceled while running${closedBy(job)}`;
      if (last)
        return `canceled while queued${closedBy(job)} (attempt ${last.attempt_no} ${last.state}: ${attemptDetail(last)})`;
      return `canceled before it ran${closedBy(job)}`;
    case "failed":
      return last && last.state !== "succeeded" && last.state !== "running"
        ? attemptDetail(last)
        : (job.last_error ?? "dead");
  }
}

/** The attempt whose output tails a case shows: the last one of a job that did not pass; null otherwise. */
export function tailedAttempt(job: Job, attempts: Attempt[]): Attempt | null {
  const last = attempts.at(-1);
  return job.state !== "done" && last !== undefined ? last : null;
}

/**
 * Builds one case from a job and its attempts (oldest first); `tails`: the
 * output tails of {@link tailedAttempt} (their {@link tailLines}), when it has one.
 */
export function caseOf(
  job: Job,
  attempts: Attempt[],
  now: number,
  tails: { stderr: string; stdout: string } | null,
): ReportCase {
  const flaky = flakyAttempts(job.state, attempts);
  const result = resultOf(job.state, flaky.length > 0);
  const last = attempts.at(-1);
  const time = attempts.reduce((sum, a) => sum + Math.max(0, (a.finished_at ?? now) - a.started_at), 0);
  return {
    id: job.id,
    queue: job.queue,
    state: job.state,
    result,
    name: job.name ?? null,
    key: job.idempotency_key,
    argv: job.argv,
    tags: job.tags,
    attempts_total: attempts.length,
    time_seconds: Math.round(time * 1000) / 1000,
    created_at: job.created_at,
    started_at: attempts[0]?.started_at ?? null,
    finished_at: last?.finished_at ?? null,
    exit_code: last?.exit_code ?? null,
    signal: last?.signal ?? null,
    failure_reason: job.state === "done" ? null : (last?.failure_reason ?? null),
    message: messageOf(job, result, last, flaky.length),
    stderr_tail: tails?.stderr ?? "",
    stdout_tail: tails?.stdout ?? "",
    flaky_attempts: flaky.map((a) => ({
      attempt_no: a.attempt_no,
      failure_reason: a.failure_reason,
      message: attemptDetail(a),
    })),
  };
}

/** Adds up cases. */
function totalsOf(cases: ReportCase[]): ReportTotals {
  const t: ReportTotals = { jobs: 0, passed: 0, failed: 0, skipped: 0, pending: 0, flaky: 0, time_seconds: 0 };
  for (const c of cases) {
    t.jobs++;
    t[c.result]++;
    t.time_seconds += c.time_seconds;
  }
  t.time_seconds = Math.round(t.time_seconds * 1000) / 1000;
  return t;
}

/**
 * The report of `cases` (oldest first) for `q`, dated `now` (epoch seconds):
 * totals, per-lane totals and the filters as applied (`ids`: the jobs `q.refs`
 * named).
 */
export function reportOf(
  q: ReportQuery,
  now: number,
  ids: number[],
  cases: ReportCase[],
  truncated: boolean,
): ReportData {
  const lanes: Record<string, ReportTotals> = {};
  for (const lane of [...new Set(cases.map((c) => c.queue))].sort())
    lanes[lane] = totalsOf(cases.filter((c) => c.queue === lane));
  return {
    generated_at: now,
    filters: {
      ids: [...ids].sort((a, b) => a - b),
      queue: q.queue ?? null,
      tags: q.tags,
      since: q.since ?? null,
      ...(q.batch !== undefined ? { batch: q.batch } : {}),
    },
    totals: totalsOf(cases),
    lanes,
    cases,
    truncated,
    files: { junit: null, markdown: null },
  };
}
