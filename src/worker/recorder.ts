/**
 * The worker's recorder (docs/architecture.md "The claim", "Fencing",
 * "Storage conditions"): writes the results of ended attempts, those that
 * came in together in one commit, claiming the slots they free in the same
 * commit; keeps the results that cannot be written yet and retries them.
 */
import { SpoolError } from "../contract/errors.ts";
import { readLastStderrLine, storedSignature } from "../ops/failure-signature.ts";
import type { Outcome } from "../ops/outcome.ts";
import type { ClaimedAttempt } from "../store/verbs/claim.ts";
import { type AttemptEnd, complete, recordAttemptEnds } from "../store/verbs/record.ts";
import { type Ended, flightKey, isDamage, isTransient, UNRECORDED_STOP_GRACE_MS, type WorkerCore } from "./core.ts";
import { sharedClockNs } from "./timing.ts";

/** The recorder of one worker. */
export class Recorder {
  constructor(private readonly w: WorkerCore) {}

  /** Ended attempts whose result could not be written yet (disk full): retried before any claim. */
  readonly unrecorded: Ended[] = [];
  /** Ended attempts waiting for the recorder, which writes all that came in together in one commit. */
  private readonly ending: Ended[] = [];
  recording = false;

  /** Takes an attempt whose process ended and records it (with those that ended together). */
  ended(ended: Ended): Promise<void> {
    this.ending.push(ended);
    return this.recordEnded();
  }

  /**
   * The recorder: writes the results of ended attempts, those that came in
   * together in one commit ("complete many": while one commit is under way,
   * the next ones gather), then wakes the loop. A result that cannot be
   * written joins {@link unrecorded}.
   */
  async recordEnded(): Promise<void> {
    if (this.recording) return;
    this.recording = true;
    try {
      // With other attempts still running, one turn of the event loop first: children that ended together are recorded together.
      if (this.w.inFlight.size > this.ending.length) await new Promise((resolve) => setImmediate(resolve));
      while (this.ending.length > 0) {
        const batch = this.ending.splice(0);
        if (!(await this.finish(batch))) this.unrecorded.push(...batch);
      }
    } finally {
      this.recording = false;
    }
    this.w.waker?.poke();
  }

  /**
   * Records ended attempts in one transaction and does the bookkeeping;
   * resolves false, recording nothing, when the results cannot be written
   * (disk full, I/O error, a lock held past every retry): the caller keeps
   * them and they are retried before any new claim, since losing one would
   * re-run its job.
   */
  private async finish(batch: Ended[]): Promise<boolean> {
    let outcomes: (Outcome | null)[];
    let claimNs = 0n; // set just before the claim is sent
    let next: ClaimedAttempt[] | null = null;
    try {
      const ends: AttemptEnd[] = [];
      for (const { claimed, end, started, ended } of batch) {
        // The rest of the output goes before the result: a reader that sees the end sees all of it.
        await this.w.shipper?.finish(claimed);
        const flight = this.w.inFlight.get(flightKey(claimed));
        const group =
          flight && !flight.processRecorded && flight.running.pid !== null
            ? { pgid: flight.running.pid, startTime: flight.running.startTime() }
            : null;
        // Read outside the write transaction: one bounded read of the file's end (triage's signature).
        const stderrLastLine = readLastStderrLine(claimed.stderrPath);
        // Masked here, once per attempt, so that triage's GROUP BY yields a row per failure.
        const stderr =
          stderrLastLine === null ? null : { lastLine: stderrLastLine, signature: storedSignature(stderrLastLine) };
        // Dated when the child ended (src/worker/pause.ts), not when the result could be written, and
        // from the stored start plus the monotonic time elapsed: a wall clock set back or forward while
        // the job ran does not change its duration (docs/architecture.md "Clocks").
        const endedAt = claimed.startedAt + Math.max(0, ended - started) / 1000;
        ends.push({
          ref: {
            jobId: claimed.job.id,
            attemptNo: claimed.attemptNo,
            workerId: this.w.opts.workerId,
            stderr,
            process: group,
          },
          end,
          endedAt,
        });
      }
      // The slots these attempts free are claimed again in the results' own commit when the store can:
      // one commit per job while the lane has work (docs/architecture.md "The claim").
      const room = this.w.opts.concurrency - (this.w.inFlight.size - batch.length);
      // Undated, like the loop's claims: dated when it runs, after the result's waits for locks.
      const lane = this.w.lanes.claimable()[0];
      const claim =
        room > 0 && lane !== undefined && this.w.claimer.mayClaimWithResult()
          ? { ...this.w.claimer.claimant(lane), limit: room }
          : null;
      claimNs = sharedClockNs();
      if (claim === null) outcomes = await this.retryLocked(() => recordAttemptEnds(this.w.store, ends));
      else ({ outcomes, claimed: next } = await this.retryLocked(() => complete(this.w.store, ends, claim)));
    } catch (error) {
      // A damaged file ends the worker (giveUp); its results stay unrecorded, left to the file's next reader.
      if (isDamage(error)) this.w.giveUp(error);
      else if (!isTransient(error)) throw error;
      this.w.storage.recordFailed();
      for (const { claimed } of batch)
        this.w.say(`cannot record job ${claimed.job.id} attempt ${claimed.attemptNo} yet: ${error.message}`);
      return false;
    }
    this.w.storage.recordSucceeded();
    batch.forEach(({ claimed, end, started, ended }, i) => {
      const { job, attemptNo } = claimed;
      const outcome = outcomes[i]!;
      this.w.lease.jobRecorded(this.w.inFlight.get(flightKey(claimed))?.running.pid ?? null);
      this.w.inFlight.delete(flightKey(claimed));
      this.w.summary.executed++;
      this.w.summary.job_ids.push(job.id);
      if (outcome === null) {
        this.w.emit({ type: "lost", jobId: job.id, attemptNo });
      } else {
        if (outcome.jobState === "done") this.w.summary.succeeded++;
        else this.w.summary.failed++;
        this.w.emit({
          type: "finished",
          jobId: job.id,
          attemptNo,
          argv: job.argv,
          outcome,
          seconds: (ended - started) / 1000,
          ...((end.kind === "exited" || end.kind === "signaled") && end.left ? { left: end.left } : {}),
        });
      }
    });
    if (next !== null && next.length > 0) {
      this.w.summary.claimed = true;
      this.w.lease.renewedAt = performance.now(); // a claim writes the lease of what it claims
      for (const c of next) await this.w.start(c, claimNs);
      this.w.lease.tellWatchdog(claimNs);
    }
    return true;
  }

  /** Retries the results that could not be written, all in one commit, when their back-off allows. */
  async recordPending(): Promise<void> {
    if (this.unrecorded.length === 0 || !this.w.storage.mayRetryRecord()) return;
    const batch = [...this.unrecorded];
    if (await this.finish(batch)) this.unrecorded.splice(0, batch.length);
  }

  /** Runs `fn`, retrying up to 12 times while it raises `LOCKED` (each try waits the busy timeout); other errors propagate. */
  private async retryLocked<T>(fn: () => Promise<T>): Promise<T> {
    for (let tries = 0; ; tries++) {
      try {
        return await fn();
      } catch (error) {
        if (!(error instanceof SpoolError && error.code === "LOCKED") || tries >= 11) throw error;
        this.w.say(error.message);
      }
    }
  }

  /**
   * Whether the worker may exit with results it could not write (docs/architecture.md
   * "Storage conditions"): all that is left in flight are such results, and it
   * was told to stop twice, or once {@link UNRECORDED_STOP_GRACE_MS} ago (a last
   * try to write them came first). One SIGTERM thus ends a worker held by a full
   * disk within seconds; its jobs are left to the next worker's reaper.
   */
  mayLeaveUnrecorded(): boolean {
    if (!this.w.stopping || this.w.inFlight.size === 0 || this.w.inFlight.size !== this.unrecorded.length) return false;
    return this.w.interrupted || performance.now() - this.w.stopAskedAt >= UNRECORDED_STOP_GRACE_MS;
  }
}
