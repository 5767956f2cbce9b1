/**
 * What happens after an attempt ends (docs/architecture.md "Retries and backoff",
 * "Timeouts", "Reaping", "Cancel"):
 * a pure function from the job, how its process ended and the queue settings to
 * the attempt's state and the job's next state. No I/O.
 */
import type { AttemptState, EventName, FailureReason, Job, JobState } from "../model/job.ts";
import type { QueueSettings } from "../model/settings.ts";

/**
 * Processes an attempt left running after its leader exited, found by one
 * look at its process group and its marker (docs/architecture.md "Leftover
 * processes"): their PIDs, ascending, and whether the worker ended them
 * (`--kill-leftovers`, the `kill_leftovers` setting).
 */
export interface Leftovers {
  pids: number[];
  killed: boolean;
}

/** How an attempt's process ended, as the executor or reaper saw it. */
export type ProcessEnd =
  | { kind: "exited"; code: number; left?: Leftovers }
  | { kind: "signaled"; signal: number; left?: Leftovers }
  | { kind: "timed_out"; code: number | null; signal: number | null }
  /** `permanent`: the command can never start (missing program, not executable, E2BIG): dead at once. */
  | { kind: "spawn_failed"; error: string; permanent?: boolean }
  | { kind: "canceled"; code: number | null; signal: number | null }
  /** The worker was told to stop twice (or gives back a job it never ran: `why`): requeue without charging a budget. */
  | { kind: "interrupted"; code: number | null; signal: number | null; why?: string }
  /** The worker died (decided by the reaper). */
  | { kind: "worker_crash"; error: string }
  /**
   * The attempt failed while the disk of its output was full: an
   * infrastructure condition, charged to neither the retry nor the crash
   * budget but to its own small one, {@link DISK_LOSS_LIMIT} attempts
   * (docs/architecture.md "Storage conditions"). `error` says why (`no space
   * left on device`); `lostBefore`: the job's earlier attempts lost so (0 when absent).
   */
  | { kind: "output_write_failed"; code: number | null; signal: number | null; error: string; lostBefore?: number };

/**
 * Attempts of one job that may be lost to a full disk before it is dead: a job
 * whose output can never fit would otherwise run again each time space is
 * freed, for ever (the crash budget is unbounded by default).
 */
export const DISK_LOSS_LIMIT = 3;

/** The error of an attempt lost to a full disk starts with this (how its kind is told from a process's failure). */
export const OUTPUT_WRITE_FAILED = "output_write_failed";

/** The decided outcome. Times are epoch seconds. */
export interface Outcome {
  attemptState: AttemptState;
  failureReason: FailureReason | null;
  exitCode: number | null;
  signal: number | null;
  error: string | null;
  jobState: JobState;
  attempts: number;
  crashes: number;
  nextRunAt: number;
  /** Seconds until the retry, when requeued with backoff. */
  backoffSeconds: number | null;
  /** Ledger events to append, in order. */
  events: EventName[];
}

let signalNames: Record<number, string> | null = null;

/** A signal's name, including unnamed real-time signals (`SIGRTMIN+3`). */
function signalName(signal: number): string {
  // node:os on first use only: this module is on the start path of verbs that never name a signal.
  signalNames ??= Object.fromEntries(
    Object.entries((require("node:os") as typeof import("node:os")).constants.signals).map(([name, n]) => [n, name]),
  );
  const known = signalNames[signal];
  if (known) return known;
  // Linux: SIGRTMIN is 34 for programs (glibc reserves 32 and 33).
  if (signal >= 34 && signal <= 64) return signal === 34 ? "SIGRTMIN" : `SIGRTMIN+${signal - 34}`;
  return `SIG${signal}`;
}

/** `exit N` or `signal N (NAME)` (docs/architecture.md "Execution"). */
export function describeExit(code: number | null, signal: number | null): string {
  if (signal !== null) return `signal ${signal} (${signalName(signal)})`;
  if (code !== null) return `exit ${code}`;
  return "no exit status";
}

/**
 * Backoff before a retry, in seconds: `min(cap, base ^ n)` where n is the
 * failures charged so far to the budget being spent: 2, 4, 8, … 60
 * (docs/architecture.md "Retries and backoff").
 */
function backoffSeconds(n: number, settings: Pick<QueueSettings, "backoff_base" | "backoff_cap">): number {
  return Math.min(settings.backoff_cap, settings.backoff_base ** n);
}

function retryOrDead(
  job: Job,
  budget: "attempts" | "crashes",
  settings: QueueSettings,
  now: number,
): Pick<Outcome, "jobState" | "attempts" | "crashes" | "nextRunAt" | "backoffSeconds" | "events"> {
  const attempts = job.attempts + (budget === "attempts" ? 1 : 0);
  const crashes = job.crashes + (budget === "crashes" ? 1 : 0);
  const exhausted =
    budget === "attempts" ? attempts > job.max_retries : job.max_crashes !== null && crashes > job.max_crashes;
  if (exhausted) {
    return { jobState: "dead", attempts, crashes, nextRunAt: job.next_run_at, backoffSeconds: null, events: ["dead"] };
  }
  const delay = backoffSeconds(budget === "attempts" ? attempts : crashes, settings);
  return { jobState: "queued", attempts, crashes, nextRunAt: now + delay, backoffSeconds: delay, events: [] };
}

/**
 * Decides the outcome of `job`'s current attempt. A cancel that was asked for
 * (`cancel --running --yes`) wins over any requeue: the attempt may have failed,
 * timed out, been interrupted or lost its worker before the worker acted on it.
 */
export function decideOutcome(job: Job, end: ProcessEnd, settings: QueueSettings, now: number): Outcome {
  const outcome = decideEnd(job, end, settings, now);
  if (job.cancel_requested && outcome.jobState === "queued") {
    return {
      ...outcome,
      jobState: "canceled",
      nextRunAt: job.next_run_at,
      backoffSeconds: null,
      events: [...outcome.events, "canceled"],
    };
  }
  return outcome;
}

/**
 * The outcome of a job that succeeded after fail-fast failed its batch and
 * asked it to stop (`now`; docs/architecture.md "Batches"): its worker had not
 * killed it yet. It is `canceled`, not `done` (its batch's verdict was already
 * known, so no count reports it passed), with the fail-fast reason as its
 * `last_error`; the attempt stays `succeeded`. Any other outcome is returned
 * as it is.
 */
export function failedFastOutcome(outcome: Outcome, batch: string, failedJob: number | null): Outcome {
  if (outcome.jobState !== "done") return outcome;
  return {
    ...outcome,
    jobState: "canceled",
    error: `fail_fast: batch ${batch} failed (job ${failedJob} ended dead)`,
    events: [...outcome.events, "canceled"],
  };
}

function decideEnd(job: Job, end: ProcessEnd, settings: QueueSettings, now: number): Outcome {
  const base = { exitCode: null as number | null, signal: null as number | null };
  switch (end.kind) {
    case "exited":
    case "signaled": {
      const code = end.kind === "exited" ? end.code : null;
      const signal = end.kind === "signaled" ? end.signal : null;
      if (code === 0) {
        return {
          attemptState: "succeeded",
          failureReason: null,
          exitCode: 0,
          signal: null,
          error: null,
          jobState: "done",
          attempts: job.attempts,
          crashes: job.crashes,
          nextRunAt: job.next_run_at,
          backoffSeconds: null,
          events: ["succeeded"],
        };
      }
      const next = retryOrDead(job, "attempts", settings, now);
      return {
        attemptState: "failed",
        failureReason: "process_exit",
        exitCode: code,
        signal,
        error: describeExit(code, signal),
        ...next,
        events: ["failed", ...next.events],
      };
    }
    case "timed_out": {
      const next = retryOrDead(job, "attempts", settings, now);
      return {
        attemptState: "timed_out",
        failureReason: "timeout",
        exitCode: end.code,
        signal: end.signal,
        error: `timed out after ${job.timeout_seconds}s`,
        ...next,
        events: ["timed_out", ...next.events],
      };
    }
    case "spawn_failed": {
      // A command that can never start is not retried unless the queue says so (docs/architecture.md "Execution"): one attempt charged, dead.
      const next =
        end.permanent && !settings.retry_spawn_failures
          ? {
              jobState: "dead" as const,
              attempts: job.attempts + 1,
              crashes: job.crashes,
              nextRunAt: job.next_run_at,
              backoffSeconds: null,
              events: ["dead" as const],
            }
          : retryOrDead(job, "attempts", settings, now);
      return {
        attemptState: "failed",
        failureReason: "spawn_failed",
        ...base,
        error: end.error,
        ...next,
        events: ["failed", ...next.events],
      };
    }
    case "canceled":
      return {
        attemptState: "canceled",
        failureReason: "canceled",
        exitCode: end.code,
        signal: end.signal,
        error: "canceled while running",
        jobState: "canceled",
        attempts: job.attempts,
        crashes: job.crashes,
        nextRunAt: job.next_run_at,
        backoffSeconds: null,
        events: ["canceled"],
      };
    case "interrupted":
      return {
        attemptState: "canceled",
        failureReason: "canceled",
        exitCode: end.code,
        signal: end.signal,
        error: end.why ?? "worker stopped; requeued without charge",
        jobState: "queued",
        attempts: job.attempts,
        crashes: job.crashes,
        nextRunAt: now,
        backoffSeconds: null,
        events: ["interrupted"],
      };
    case "output_write_failed": {
      // Its own budget: not the job's fault (retries), not a worker's (crashes).
      const lost = (end.lostBefore ?? 0) + 1;
      const dead = lost >= DISK_LOSS_LIMIT;
      const delay = dead ? null : backoffSeconds(lost, settings);
      return {
        attemptState: "failed",
        failureReason: "process_exit",
        exitCode: end.code,
        signal: end.signal,
        error: dead
          ? `${OUTPUT_WRITE_FAILED}: ${end.error} (lost to a full disk ${lost} times, the limit: its output may never fit; free space or bound its output, then retry it)`
          : `${OUTPUT_WRITE_FAILED}: ${end.error} (lost to a full disk: ${lost} of ${DISK_LOSS_LIMIT})`,
        jobState: dead ? "dead" : "queued",
        attempts: job.attempts,
        crashes: job.crashes,
        nextRunAt: delay === null ? job.next_run_at : now + delay,
        backoffSeconds: delay,
        events: dead ? ["failed", "dead"] : ["failed"],
      };
    }
    case "worker_crash": {
      const next = retryOrDead(job, "crashes", settings, now);
      return {
        attemptState: "abandoned",
        failureReason: "worker_crash",
        ...base,
        error: end.error,
        ...next,
        events: ["reaped", ...next.events],
      };
    }
  }
}
