/**
 * The parameter types of an attempt's life at the driver interface: the claim
 * request and what it returns, the heartbeat's keys and answers, the outcome a
 * worker records, the output it ships and an attempt an operator closes
 * (docs/architecture.md "The claim", "Fencing"). Split from store.ts so that
 * the interfaces there and in reader.ts and writer.ts read as lists of verbs.
 * Times are epoch seconds (float).
 */
import type { Attempt, AttemptState, EventName, FailureReason, Job, JobState } from "../model/job.ts";
import type { OutputStream } from "./reader.ts";

/** How an attempt was closed by someone other than its worker (e.g. `retry --force`). */
export interface AttemptClosing {
  jobId: number;
  attemptNo: number;
  state: AttemptState;
  failureReason: FailureReason | null;
  error: string;
  now: number;
}

/** The claim request (docs/architecture.md "Claim order", "Lanes and slots"). */
export interface ClaimRequest {
  queue: string;
  workerId: string;
  workerPid: number;
  /** The claiming process's start time, recorded on each attempt (`Attempt.worker_start_time`); null when unknown. */
  workerStartTime?: string | null;
  /**
   * The claimant's own fleet-wide ceiling of running jobs in the lane (`work
   * --slots`); null = none. A ceiling set on the lane (`lane set --slots`)
   * wins over it, and a paused lane claims nothing (docs/architecture.md
   * "Lanes and slots"): both are read by the claim statement itself.
   */
  slots: number | null;
  /** At most this many jobs (≥ 1). */
  limit: number;
  /**
   * When the claim is dated, epoch seconds on the queue's clock: jobs due by
   * then are eligible, and the leases it starts begin then. Absent: the store
   * reads its clock when the claim itself runs, after any wait for a lock, so
   * a claim that waited (a result held up by a locked row) never starts a
   * lease in the past that a reaper elsewhere would take for expired
   * (docs/architecture.md "The claim"). Tests give it to backdate claims.
   */
  now?: number;
}

/** A claim whose time is set (see {@link ClaimRequest.now}). */
export type DatedClaim = ClaimRequest & { now: number };

/** `req` dated by `now()` (the store's clock, epoch seconds) unless the caller gave it a time; drivers call it as the claim runs. */
export function datedClaim(req: ClaimRequest, now: () => number): DatedClaim {
  return req.now === undefined ? { ...req, now: now() } : (req as DatedClaim);
}

/** A job a claim moved to `running`, with the attempt row it opened. */
export interface ClaimedJob {
  job: Job;
  attempt: Attempt;
}

/** One ledger row to append with a write (the worker id and time come from the write). */
interface EventToAppend {
  event: EventName;
  workerId: string | null;
  detail: string | null;
}

/** One running attempt a worker renews its lease on. */
export interface AttemptKey {
  jobId: number;
  attemptNo: number;
  /**
   * The attempt's process group, sent with the first heartbeat after the spawn
   * (docs/architecture.md "The claim"): recorded on the attempt row when the
   * worker still owns it. Absent once recorded.
   */
  process?: AttemptProcess;
}

/** An attempt's process group and the start time of its leader (as /proc shows it; null: not read). */
export interface AttemptProcess {
  pgid: number;
  startTime: string | null;
}

/** What a heartbeat learned about one attempt. */
export interface AttemptLease {
  jobId: number;
  attemptNo: number;
  /** False when the worker no longer owns the attempt (canceled, force-retried, reaped). */
  owned: boolean;
  cancelRequested: boolean;
}

/** The outcome of an attempt as written back by its worker. */
export interface AttemptRecord {
  jobId: number;
  attemptNo: number;
  workerId: string;
  now: number;
  attemptState: AttemptState;
  exitCode: number | null;
  signal: number | null;
  error: string | null;
  failureReason: FailureReason | null;
  /**
   * The last non-empty line of the attempt's stderr as its worker read it at
   * the end (at most `STDERR_LINE_MAX` characters, src/model/job.ts), kept for triage's
   * failure signatures; null or absent when not read (docs/architecture.md "Triage").
   */
  stderrLastLine?: string | null;
  /**
   * That line's failure signature as stored: `<mask version>|<masked line>`
   * (see failure-signature.ts); null or absent when not computed.
   */
  stderrSignature?: string | null;
  jobState: JobState;
  /** Ledger rows written with the outcome, only when it was written. */
  events: EventToAppend[];
  /** The attempt's process group, when no heartbeat recorded it yet; kept as is when one did. */
  process?: AttemptProcess | null;
  attempts: number;
  crashes: number;
  nextRunAt: number;
}

/** A piece of output a worker ships (see {@link StoreWriter.appendAttemptOutput}). */
export interface OutputChunk {
  jobId: number;
  attemptNo: number;
  workerId: string;
  stream: OutputStream;
  /** Byte offset of `bytes` in the stream. */
  offset: number;
  bytes: Uint8Array;
  truncated: boolean;
}
