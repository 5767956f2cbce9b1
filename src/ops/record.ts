/**
 * The pure part of recording how an attempt ended (docs/architecture.md
 * "Fencing", "Storage conditions"): which attempts a full disk lost, and the
 * outcome a worker's earlier write of the same result left in the ledger. The
 * write itself is the `recordAttemptEnd` family of operations
 * (src/store/verbs/record.ts), which decides through {@link decideOutcome}.
 */
import type { Attempt, Job, JobEvent } from "../model/job.ts";
import { OUTPUT_WRITE_FAILED, type Outcome } from "./outcome.ts";

/** Whether an attempt's error says it was lost to a full disk (its output could not be written). */
export function lostToDisk(error: string | null): boolean {
  return error?.startsWith(`${OUTPUT_WRITE_FAILED}:`) ?? false;
}

/** The attempt number in an outcome event's detail (`{"attempt": N, …}`), or null. */
function attemptOfDetail(detail: string | null): number | null {
  try {
    const parsed = detail === null ? null : JSON.parse(detail);
    return typeof parsed?.attempt === "number" ? parsed.attempt : null;
  } catch {
    return null;
  }
}

/**
 * The outcome events worker `workerId` wrote for attempt `attemptNo`, of a
 * job's ledger `events` (nobody else writes them under its id).
 */
export function ownOutcomeEvents(events: JobEvent[], workerId: string, attemptNo: number): JobEvent[] {
  return events.filter(
    (e) => e.worker_id === workerId && e.event !== "claimed" && attemptOfDetail(e.detail) === attemptNo,
  );
}

/**
 * The outcome a worker already wrote for its attempt (docs/architecture.md
 * "Fencing"): a result retried after the answer to its COMMIT was lost finds
 * its own write, recognised by `ours` (its {@link ownOutcomeEvents}), and
 * reports it as recorded instead of as taken away. Null when the worker wrote
 * no outcome for it (the job was taken from it): no such events, or the
 * `attempt` row missing or still running. `jobState` is the state the write
 * set, from its events; the counters are `job`'s now.
 */
export function earlierOutcome(job: Job, attempt: Attempt | null, ours: JobEvent[]): Outcome | null {
  if (!attempt || attempt.state === "running") return null;
  const events = ours.map((e) => e.event);
  const jobState = events.includes("dead")
    ? "dead"
    : events.includes("canceled")
      ? "canceled"
      : events.includes("succeeded")
        ? "done"
        : "queued";
  const retryIn = (JSON.parse(ours[0]!.detail ?? "{}") as { retry_in?: number }).retry_in;
  return {
    attemptState: attempt.state,
    failureReason: attempt.failure_reason,
    exitCode: attempt.exit_code,
    signal: attempt.signal,
    error: attempt.error,
    jobState,
    attempts: job.attempts,
    crashes: job.crashes,
    nextRunAt: job.next_run_at,
    backoffSeconds: retryIn ?? null,
    events,
  };
}
