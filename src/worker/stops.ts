/**
 * The worker's look at its stop requests (docs/architecture.md "Cancel",
 * "Graceful stop"): its own (`spoolctl stop`) and its running jobs' (`cancel
 * --running`, a fail-fast `now`), whose process groups it then kills.
 */
import { stopsAsked } from "../store/verbs/registry.ts";
import { STOP_CHECK_MS, type WorkerCore } from "./core.ts";

/** When the worker last read its stop requests, per worker. */
export class StopCheck {
  private last = -Infinity;

  constructor(private readonly w: WorkerCore) {}

  /**
   * Reads the stop requests at once after an `all` wake (a cancel, a
   * fail-fast, a stop: docs/architecture.md "Waking"); otherwise at most every
   * {@link STOP_CHECK_MS} (the loop's own commits wake it ~2 times a job; the
   * flags need no fresher look), which a busy worker that no wake reaches
   * (PostgreSQL) waits no longer than (src/worker/claimer.ts idleWaitMs). One
   * read; raises what the read raises (the loop waits it out).
   */
  async check(): Promise<void> {
    const { w } = this;
    const woken = w.waker?.takeStop() ?? false;
    if (w.stopping && w.inFlight.size === 0) return;
    if (!woken && performance.now() - this.last < STOP_CHECK_MS) return;
    this.last = performance.now();
    const jobIds = [...w.inFlight.values()].map((f) => f.claimed.job.id);
    const asked = await stopsAsked(w.store, w.opts.workerId, jobIds);
    if (!w.stopping && asked.stopRequested) w.requestStop("stop requested through the registry");
    for (const c of asked.canceled) w.inFlight.get(`${c.jobId}:${c.attemptNo}`)?.stop("canceled");
  }
}
