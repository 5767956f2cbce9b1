/**
 * `feedback`: one verdict about a job for an agent — is it over, did
 * it succeed, how did its latest attempt end, the tails of its output, and the
 * next command to run.
 */
import type { Warning } from "../contract/errors.ts";
import type { FeedbackData, StreamTail } from "../describe/schemas-jobs.ts";
import type { Attempt, Job, JobEvent } from "../model/job.ts";
import { LIMITS } from "../model/limits.ts";
import { leftRunningOf } from "./leftovers.ts";
import type { StreamView } from "./output.ts";
import { blockedNext, type RetryBlock } from "./retry-needs.ts";
import { isTerminal } from "./states.ts";
import { durationText } from "./values.ts";

/** The default and bounds of `--tail-bytes`. */
export const TAIL_BYTES = { default: 2048, min: 0, max: 1024 * 1024 } as const;

// Defined once, as the JSON Schemas `spoolctl schema` prints.
export type { FeedbackData };

/**
 * The next command for a job in its state. A job whose latest attempt timed
 * out would time out again with the same timeout: its retry doubles it
 * (within the limit of `add --timeout`, docs/contract.md "Retry's data").
 */
function nextCommand(job: Job, attempt: Attempt | null, block: RetryBlock | null): string | null {
  const lane = job.queue === "default" ? "" : ` --queue ${job.queue}`;
  switch (job.state) {
    case "queued":
      // --drain does not wait for a job the user delayed (docs/architecture.md "Drain"): a loop worker will run it.
      return job.next_run_at > Date.now() / 1000 && job.attempts === 0 && job.crashes === 0
        ? `spoolctl work${lane}`
        : `spoolctl work --drain${lane}`;
    case "running":
      return `spoolctl wait ${job.id}`;
    case "done":
      return `spoolctl output ${job.id}`;
    case "dead":
    case "canceled":
      // Its own retry would be refused while a need is dead or canceled: retry the chain's root (docs/architecture.md "Dependencies").
      if (block) return blockedNext(job.id, block);
      // A job already without a limit (timeout 0: a retry --timeout none since) needs no longer one.
      if (
        attempt?.failure_reason === "timeout" &&
        job.timeout_seconds > 0 &&
        job.timeout_seconds < LIMITS.timeout_seconds.max
      ) {
        return `spoolctl retry ${job.id} --timeout ${durationText(Math.min(job.timeout_seconds * 2, LIMITS.timeout_seconds.max))}`;
      }
      return `spoolctl retry ${job.id}`;
  }
}

function tail(v: StreamView): StreamTail {
  return {
    path: v.path,
    missing: v.missing,
    size_bytes: v.size_bytes,
    tail: v.text,
    truncated: v.truncated,
    omitted_bytes: v.omitted_bytes,
    partial_first_line: v.partial_first_line,
    binary: v.binary,
  };
}

/**
 * The verdict about `job` from its latest `attempt` (null: none yet) and the
 * tails of its two streams, as the `feedback` verb reads them in one snapshot
 * (src/store/verbs/feedback.ts), with the job's `events` (what the attempt
 * left running: docs/architecture.md "Leftover processes") and, for a job
 * whose retry its needs block, `block` (its next command retries the root
 * need instead). Warns `NO_ATTEMPTS_YET` before any attempt.
 */
export function feedbackOf(
  job: Job,
  attempt: Attempt | null,
  streams: { stdout: StreamView; stderr: StreamView },
  events: JobEvent[] = [],
  block: RetryBlock | null = null,
): { data: FeedbackData; warnings: Warning[] } {
  const stdout = tail(streams.stdout);
  const stderr = tail(streams.stderr);
  const terminal = isTerminal(job.state);
  const finished = attempt && attempt.finished_at !== null;
  const data: FeedbackData = {
    job_id: job.id,
    state: job.state,
    terminal,
    succeeded: terminal ? job.state === "done" : null,
    attempts: job.attempts,
    attempts_total: job.last_attempt_no,
    latest_attempt_no: attempt?.attempt_no ?? null,
    exit_code: attempt ? attempt.exit_code : job.last_exit_code,
    failure_reason: attempt?.failure_reason ?? null,
    last_error: job.last_error,
    duration_seconds: finished ? Math.max(0, attempt.finished_at! - attempt.started_at) : null,
    remediation: nextCommand(job, attempt, block),
    streams: { stdout, stderr },
  };
  const left = attempt ? leftRunningOf(events, attempt.attempt_no).at(-1) : undefined;
  if (left) data.left_running = left;
  const warnings: Warning[] = attempt
    ? []
    : [{ code: "NO_ATTEMPTS_YET", message: `job ${job.id} has not been executed yet` }];
  return { data, warnings };
}
