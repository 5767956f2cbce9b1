/**
 * The worker's claims (docs/architecture.md "The claim", "Claim order"):
 * up to the free room, lane by lane, with a jittered back-off after claims
 * that keep finding nothing; and the jobs a claim whose answer was lost made
 * this worker's, given back.
 */
import type { Claimant, ClaimedAttempt } from "../store/verbs/claim.ts";
import { claimJobs } from "../store/verbs/claim.ts";
import { runningJobsOf } from "../store/verbs/reap.ts";
import { recordAttemptEnd } from "../store/verbs/record.ts";
import { nextDueAt } from "../store/verbs/worker-lanes.ts";
import { STOP_CHECK_MS, UNRECORDED_STOP_GRACE_MS, type WorkerCore } from "./core.ts";
import { processStartTime } from "./liveness.ts";
import { sharedClockNs } from "./timing.ts";

/** Longest pause before a claim after claims that found nothing, milliseconds. */
const MAX_CLAIM_JITTER_MS = 16;
/** Empty claims closer together than this count as one streak, milliseconds. */
const EMPTY_STREAK_MS = 200;

/** This process's start time, recorded on every attempt it claims (docs/architecture.md "Reaping"). */
const OWN_START_TIME = processStartTime(process.pid);

/** The claims of one worker. */
export class Claimer {
  constructor(private readonly w: WorkerCore) {}

  /** Whether the last claim filled the free room (false: idle room, so the idle wait asks when the next job is due). */
  claimFilledRoom = false;

  /** Claims in a row that found nothing (see the jitter in {@link claimWhileRoom}). */
  private emptyClaims = 0;
  private lastEmptyClaim = -Infinity;

  /** Set when a claim failed in a way that may have committed (see {@link releaseStrays}). */
  claimUncertain = false;

  /** Claims up to the free room in one transaction and starts what it got; returns how many. */
  async claimWhileRoom(): Promise<number> {
    const { store, opts } = this.w;
    if (this.w.stopping || (opts.mode === "once" && this.w.summary.claimed)) return 0;
    const room = opts.mode === "once" ? 1 : opts.concurrency - this.w.inFlight.size;
    if (room <= 0) return 0;
    // No fresh lease without a watchdog alive to end its run should this worker stop (docs/architecture.md "A stopped worker").
    if (!this.w.lease.guarded()) return 0;
    let claimed: ClaimedAttempt[];
    this.claimFilledRoom = false;
    // Claims that keep finding nothing (another worker took the job it was woken for) back off with
    // jitter, so that a fleet woken by one job does not queue on the write lock all at once.
    if (this.emptyClaims > 1 && performance.now() - this.lastEmptyClaim < EMPTY_STREAK_MS)
      await Bun.sleep(Math.random() * Math.min(2 ** (this.emptyClaims - 1), MAX_CLAIM_JITTER_MS));
    const sentNs = sharedClockNs();
    try {
      // No read first: the claim answers "is anything due?" itself, in one transaction per lane, lanes
      // in order of preference. Undated: the store dates it when it runs (a wait for a lock must not
      // start its leases in the past).
      claimed = [];
      for (const lane of this.w.lanes.claimable()) {
        claimed.push(...(await claimJobs(store, this.claimant(lane), room - claimed.length)));
        if (claimed.length >= room) break;
      }
    } catch (error) {
      // Over a network a claim can commit and its answer be lost: jobs may now be ours without our knowing.
      this.claimUncertain = true;
      this.w.transient(error);
      return 0;
    }
    this.claimFilledRoom = claimed.length === room;
    if (claimed.length > 0) this.emptyClaims = 0;
    else {
      // Only a quick run of empty claims is a race lost again and again; an idle worker's polls are not.
      this.emptyClaims = performance.now() - this.lastEmptyClaim < EMPTY_STREAK_MS ? this.emptyClaims + 1 : 1;
      this.lastEmptyClaim = performance.now();
    }
    if (claimed.length > 0) {
      this.w.summary.claimed = true;
      this.w.lease.renewedAt = performance.now(); // a claim writes the lease of what it claims
    }
    for (const next of claimed) await this.w.start(next, sentNs);
    // Its fresh lease is no job's to lose: the watchdog hears of it (it moves on when no older lease is in flight).
    if (claimed.length > 0) this.w.lease.tellWatchdog(sentNs);
    return claimed.length;
  }

  /**
   * Gives back jobs the store says this worker runs but that it never started:
   * a claim whose commit succeeded while its answer was lost (a connection cut
   * at the wrong moment). They are requeued without charge, as an interrupted
   * attempt; otherwise they would stay `running` under a live worker forever.
   */
  async releaseStrays(): Promise<void> {
    const { store, opts } = this.w;
    // A commit of the recorder may have claimed jobs it has not started yet: look once it is done.
    if (this.w.recorder.recording) return;
    const running = (jobId: number) => [...this.w.inFlight.values()].some((f) => f.claimed.job.id === jobId);
    try {
      for (const job of await runningJobsOf(store, opts.workerId)) {
        if (running(job.id) || this.w.recorder.recording) continue;
        const why = "its claim committed but this worker never heard it (connection lost); requeued without charge";
        await recordAttemptEnd(
          store,
          { jobId: job.id, attemptNo: job.last_attempt_no, workerId: opts.workerId },
          { kind: "interrupted", code: null, signal: null, why },
        );
        this.w.emit({ type: "storage", message: `gave back job ${job.id}: ${why}` });
      }
      if (!this.w.recorder.recording) this.claimUncertain = false;
    } catch (error) {
      this.w.transient(error);
    }
  }

  /** Who claims from `lane`, for the loop's claims and a result's. */
  claimant(lane: string): Claimant {
    const { opts } = this.w;
    return {
      queue: lane,
      workerId: opts.workerId,
      workerPid: process.pid,
      workerStartTime: OWN_START_TIME,
      slots: opts.slots,
    };
  }

  /** Whether a result may claim the slot it frees in its own commit: whenever the loop itself would claim. */
  mayClaimWithResult(): boolean {
    return (
      !this.w.stopping &&
      !this.w.interrupted &&
      this.w.opts.mode !== "once" &&
      this.w.recorder.unrecorded.length === 0 &&
      !this.claimUncertain &&
      !this.w.storage.claimPaused()
    );
  }

  /**
   * How long to sleep when nothing more can be claimed: the poll, or until the
   * next due job. Asked of the store only when the worker has idle room: with
   * every slot busy, the end of one of its own attempts wakes it.
   */
  async idleWaitMs(): Promise<number> {
    let ms = this.w.opts.pollInterval * 1000;
    // A result waiting to be written is tried again when its back-off ends (storage-watch.ts).
    if (this.w.recorder.unrecorded.length > 0) ms = Math.min(ms, Math.max(1, this.w.storage.msUntilRecordRetry()));
    const busy = this.w.inFlight.size >= this.w.opts.concurrency || this.claimFilledRoom;
    // Stopping with results unwritten: wake when the grace to leave them ends.
    if (this.w.stopping && this.w.recorder.unrecorded.length > 0)
      ms = Math.min(ms, Math.max(1, this.w.stopAskedAt + UNRECORDED_STOP_GRACE_MS - performance.now()));
    if (!this.w.stopping) ms = Math.min(ms, this.w.schedules.msUntilDue());
    // A busy worker that no `all` wake reaches reads its jobs' stop requests every STOP_CHECK_MS (loop.ts).
    if (this.w.inFlight.size > 0 && this.w.waker && !this.w.waker.hearsWhileBusy) ms = Math.min(ms, STOP_CHECK_MS);
    if (busy || this.w.stopping) return Math.min(ms, this.w.timing.heartbeat * 1000);
    const lanes = this.w.lanes.claimable();
    const due = await nextDueAt(this.w.store, lanes);
    const now = this.w.store.now();
    // A job already due that could not be claimed is held back by --slots or
    // --concurrency: the end of a running job (a commit, or our own poke) wakes
    // us; shortening the wait to 1 ms would spin on the database.
    if (due !== null && due > now) ms = Math.min(ms, Math.max(1, (due - now) * 1000 + 5));
    return Math.min(ms, this.w.timing.heartbeat * 1000);
  }
}
