/**
 * What the parts of a worker share (src/worker/loop.ts runs them): the
 * attempts in flight, the ended ones waiting for their result, and the
 * worker's own state and services as its recorder, lease and claimer see them
 * (docs/architecture.md "The claim", "Heartbeat and lease").
 */
import { SpoolError } from "../contract/errors.ts";
import type { ProcessEnd } from "../ops/outcome.ts";
import type { Store, WorkWaker } from "../store/store.ts";
import type { Claimant, ClaimedAttempt } from "../store/verbs/claim.ts";
import type { WorkerEvent, WorkOptions, WorkSummary } from "./api.ts";
import type { RunningAttempt } from "./executor.ts";
import type { LaneWatch } from "./lane-watch.ts";
import type { OutputShipper } from "./ship.ts";
import type { StorageWatch } from "./storage-watch.ts";
import type { Timing } from "./timing.ts";

/** An attempt this worker runs. */
export interface InFlight {
  claimed: ClaimedAttempt;
  running: RunningAttempt;
  /** Whether a heartbeat has recorded the attempt's process group (otherwise the result carries it). */
  processRecorded: boolean;
  /** When its lease was last written, at the latest: sharedClockNs (src/worker/timing.ts) taken before the claim or heartbeat was sent. */
  leaseNs: bigint;
  stop(reason: "canceled" | "interrupted"): void;
}

/** An attempt whose process ended, with when it started and ended (performance.now(), ms). */
export interface Ended {
  claimed: ClaimedAttempt;
  end: ProcessEnd;
  started: number;
  ended: number;
}

/** How long a worker told once to stop still tries to write results a full disk holds up, milliseconds. */
export const UNRECORDED_STOP_GRACE_MS = 3000;

/** One `work` process as its parts see it (the Worker of src/worker/loop.ts). */
export interface WorkerCore {
  readonly store: Store;
  readonly opts: WorkOptions;
  readonly timing: Timing;
  /** Attempts in flight, by `job:attempt` ({@link flightKey}). */
  readonly inFlight: Map<string, InFlight>;
  readonly summary: WorkSummary;
  readonly storage: StorageWatch;
  readonly lanes: LaneWatch;
  /** A first stop was asked for: claim nothing more. */
  readonly stopping: boolean;
  /** A second stop: the children were group-killed. */
  readonly interrupted: boolean;
  /** Set when the queue's file was replaced or damaged under the worker: the error it exits with. */
  readonly lost: SpoolError | null;
  readonly shipper: OutputShipper | null;
  readonly waker: WorkWaker | null;
  /** The recorder's results not yet written (src/worker/recorder.ts). */
  readonly recorder: { readonly recording: boolean; readonly unrecorded: readonly Ended[] };
  /** Who claims, and whether a result may claim with it (src/worker/claimer.ts). */
  readonly claimer: { claimant(lane: string): Claimant; mayClaimWithResult(): boolean };
  /**
   * When the lease was last renewed (performance.now(), ms), and the watchdog told of a claim's
   * fresh lease (sharedClockNs, src/worker/timing.ts) (src/worker/lease.ts).
   */
  readonly lease: {
    renewedAt: number;
    tellWatchdog(sentNs: bigint): void;
    guarded(): boolean;
    jobRecorded(pid: number | null): void;
  };
  /** When a first stop was asked for (performance.now(), ms). */
  readonly stopAskedAt: number;
  /** The due-slot pass of recurring schedules: how long until its next slot, ms. */
  readonly schedules: { msUntilDue(): number };
  emit(event: WorkerEvent): void;
  /** Emits a transient line, rate-limited. */
  say(message: string): void;
  /** Reports a condition to wait out; anything else propagates. */
  transient(error: unknown): void;
  /** Ends the worker for a condition waiting cannot cure. */
  giveUp(error: SpoolError): void;
  /** Compares the queue's file with the one opened. */
  checkFile(): void;
  requestStop(reason: string): void;
  /** Starts a claimed attempt; `leaseNs`: sharedClockNs (src/worker/timing.ts) taken before its claim was sent. */
  start(claimed: ClaimedAttempt, leaseNs: bigint): Promise<void>;
}

/** How often the loop reads its stop requests (a `spoolctl stop`, its jobs' cancels) without a wake, milliseconds. */
export const STOP_CHECK_MS = 250;

/** The in-flight key of an attempt. */
export function flightKey(claimed: ClaimedAttempt): string {
  return `${claimed.job.id}:${claimed.attemptNo}`;
}

/** Whether a failure is a damaged queue file (`QUEUE_CORRUPT`): never waited out, it ends the worker. */
export function isDamage(error: unknown): error is SpoolError {
  return error instanceof SpoolError && error.code === "QUEUE_CORRUPT";
}

/** Whether a failure is one a worker waits out: a held lock, a full disk, an I/O error. */
export function isTransient(error: unknown): error is SpoolError {
  return error instanceof SpoolError && (error.code === "LOCKED" || error.detail?.storage !== undefined);
}
