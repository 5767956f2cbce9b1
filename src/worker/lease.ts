/**
 * The worker's lease (docs/architecture.md "Heartbeat and lease"): one
 * heartbeat for the whole worker, renewing its registry row and the lease of
 * every attempt in flight; the watchdog told of each renewal; and, when
 * renewals stop getting through, the children stopped before the lease runs
 * out (a shared queue).
 */
import type { ProcessEnd } from "../ops/outcome.ts";
import type { AttemptKey } from "../store/attempt-types.ts";
import type { ClaimedAttempt } from "../store/verbs/claim.ts";
import { heartbeat } from "../store/verbs/heartbeat.ts";
import { isDamage, type WorkerCore } from "./core.ts";
import type { RunningAttempt } from "./executor.ts";
import { leaseGuardSeconds, sharedClockNs } from "./timing.ts";
import { endedByWatchdog, type Watchdog } from "./watchdog.ts";

/** Why an attempt this worker stopped for want of a lease renewal was requeued (docs/architecture.md "Heartbeat and lease"). */
const LEASE_LOST_WHY =
  "this worker could not renew its lease in time (a slow or unreachable database), so it stopped the job before another worker could reap it; requeued without charge";

/** The lease of one worker. */
export class Lease {
  constructor(private readonly w: WorkerCore) {}

  private beating = false;
  /** This worker's watchdog (a shared queue), told of every renewal: src/worker/watchdog.ts. */
  watchdog: Watchdog | null = null;
  /** When the lease was last renewed (performance.now(), ms). */
  renewedAt = performance.now();
  /** Set when {@link checkLease} stopped the children; cleared by the next renewal. */
  private leaseStopped = false;
  /** The attempts {@link checkLease} stopped, so their record says why. */
  private readonly leaseLost = new WeakSet<object>();

  /**
   * A worker that cannot renew its lease stops its children itself before the
   * lease runs out, so a partitioned host never runs a job beside the worker
   * that reaps and re-runs it elsewhere. One heartbeat of margin.
   */
  checkLease(): void {
    // A SQLite worker without a watchdog is reaped only once confirmed dead on its host: stopping protects nothing.
    if (!this.w.store.shipsOutput && this.watchdog === null) return;
    const silentSeconds = (performance.now() - this.renewedAt) / 1000;
    const limit = leaseGuardSeconds(this.w.timing);
    if (this.leaseStopped || this.w.inFlight.size === 0 || silentSeconds < limit) return;
    this.leaseStopped = true;
    const jobIds = [...this.w.inFlight.values()].map((f) => f.claimed.job.id);
    for (const flight of this.w.inFlight.values()) {
      this.leaseLost.add(flight.claimed);
      flight.stop("interrupted");
    }
    this.w.emit({ type: "lease_lost", jobIds, seconds: silentSeconds });
  }

  /**
   * One heartbeat for the whole worker, in one transaction: its registry row
   * and the lease of every attempt in flight (docs/architecture.md "Heartbeat
   * and lease"). An attempt the worker no longer owns (force-retried, reaped)
   * or whose cancel was requested is stopped.
   */
  async beat(): Promise<void> {
    this.w.checkFile();
    if (this.w.lost) return;
    if (this.beating) {
      this.checkLease(); // the previous beat hangs (a database that stopped answering)
      return;
    }
    if (!this.guarded()) {
      this.checkLease(); // no renewal without a guard: past the guard time this worker stops its jobs itself
      return;
    }
    this.beating = true;
    try {
      // The first beat after a spawn also records the attempt's process group (docs/architecture.md "The claim").
      const flights = [...this.w.inFlight.values()];
      const sentNs = sharedClockNs(); // before the database stamps the leases; the watchdog's clock too
      const attempts: AttemptKey[] = flights.map((f) => {
        const key: AttemptKey = { jobId: f.claimed.job.id, attemptNo: f.claimed.attemptNo };
        if (!f.processRecorded && f.running.pid !== null)
          key.process = { pgid: f.running.pid, startTime: f.running.startTime() };
        return key;
      });
      const { stopRequested, leases } = await heartbeat(this.w.store, this.w.opts.workerId, attempts);
      this.renewedAt = performance.now();
      this.leaseStopped = false;
      for (const f of flights) {
        f.processRecorded = true;
        f.leaseNs = sentNs;
      }
      this.tellWatchdog(sentNs);
      for (const lease of leases) {
        // Not owned: the job was taken from us (retry --force); its run must not go on beside the new one.
        if (!lease.owned || lease.cancelRequested)
          this.w.inFlight.get(`${lease.jobId}:${lease.attemptNo}`)?.stop("canceled");
      }
      if (stopRequested) this.w.requestStop("stop requested through the registry");
    } catch (error) {
      this.checkLease();
      // The heartbeat runs off a timer: what it cannot wait out ends the worker through the loop, not as an unhandled rejection.
      if (isDamage(error)) this.w.giveUp(error);
      else this.w.transient(error);
    } finally {
      this.beating = false;
    }
  }

  /** Tells the watchdog that the job led by `pid` is recorded (src/worker/watchdog.ts). */
  jobRecorded(pid: number | null): void {
    this.watchdog?.jobRecorded(pid);
  }

  /**
   * Whether this worker may renew or take a lease: no watchdog is needed
   * (one host's queue), or its watchdog lives (docs/architecture.md "A stopped
   * worker": a lease is never renewed without a guard that could end its run).
   */
  guarded(): boolean {
    return this.watchdog === null || this.watchdog.guarding();
  }

  /**
   * Tells the watchdog the start of the oldest lease in force, after a renewal
   * or a claim (`sentNs`: when it was sent): that one's, or an earlier claim's
   * or renewal's still in flight (docs/architecture.md "A stopped worker").
   */
  tellWatchdog(sentNs: bigint): void {
    if (!this.watchdog) return;
    let oldest = sentNs;
    for (const f of this.w.inFlight.values()) if (f.leaseNs < oldest) oldest = f.leaseNs;
    this.watchdog.renewed(oldest);
  }

  /**
   * How an attempt's process ended as its record must say: ended by the
   * watchdog (its lease ran out while this worker was stopped), or stopped by
   * {@link checkLease} (why it was requeued), else as the process ended.
   */
  endOf(claimed: ClaimedAttempt, running: RunningAttempt, leaseNs: bigint, processEnd: ProcessEnd): ProcessEnd {
    // Stopped by this worker for want of a renewal: says so, also when its watchdog ended the job too.
    return processEnd.kind === "interrupted" && this.leaseLost.has(claimed)
      ? { ...processEnd, why: LEASE_LOST_WHY }
      : this.watchdog?.ended(running.pid, running.startTime(), leaseNs)
        ? endedByWatchdog(processEnd)
        : processEnd;
  }
}
