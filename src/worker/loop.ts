/**
 * The work loop (SPEC §4–§5 `work`): reap, claim up to `concurrency` jobs,
 * run each in its own process group with a heartbeat, record outcomes, and
 * wait on file changes plus a slow poll when idle. Modes: `loop` (until
 * stopped), `once` (one claim at most), `drain` (until the lane is settled).
 */
import { SpoolError } from "../contract/errors.ts";
import { claimNext, type ClaimedAttempt } from "../ops/claim.ts";
import type { Outcome, ProcessEnd } from "../ops/outcome.ts";
import { recordAttemptEnd } from "../ops/record.ts";
import type { Store } from "../store/store.ts";
import { attemptMarker, startAttempt } from "./executor.ts";
import { reapDeadWorkers, type ReapedJob } from "./reaper.ts";
import { registerWorker } from "./registry.ts";
import { readTiming, type Timing } from "./timing.ts";
import { watchQueue, type Waker } from "./wake.ts";

/** How a worker runs. Times in seconds. */
export interface WorkOptions {
  queue: string;
  slots: number | null;
  concurrency: number;
  pollInterval: number;
  workerId: string;
  mode: "loop" | "once" | "drain";
  timing?: Timing;
  onEvent?: (event: WorkerEvent) => void;
}

/** What a worker reports as it goes; the command renders these. */
export type WorkerEvent =
  | { type: "finished"; jobId: number; attemptNo: number; argv: string[]; outcome: Outcome; seconds: number }
  | { type: "lost"; jobId: number; attemptNo: number }
  | { type: "reaped"; reaped: ReapedJob }
  | { type: "transient"; message: string }
  | { type: "stopping"; reason: string; inFlight: number };

/** What a worker did, as `work --json` reports it. */
export interface WorkSummary {
  worker_id: string;
  executed: number;
  succeeded: number;
  failed: number;
  reaped: number;
  claimed: boolean;
  drained: boolean;
  job_ids: number[];
}

interface InFlight {
  claimed: ClaimedAttempt;
  stop(reason: "canceled" | "interrupted"): void;
  done: Promise<void>;
}

/** One `work` process's loop. */
export class Worker {
  /** Attempts in flight, by `job:attempt` (a job can be re-claimed here while its old run ends). */
  private readonly inFlight = new Map<string, InFlight>();
  /** Ended attempts whose result could not be written yet (disk full): retried before any claim. */
  private readonly unrecorded: { claimed: ClaimedAttempt; end: ProcessEnd; started: number }[] = [];
  private stopping = false;
  private interrupted = false;
  private waker: Waker | null = null;
  private readonly timing: Timing;
  private readonly summary: WorkSummary;

  constructor(
    private readonly store: Store,
    private readonly opts: WorkOptions,
  ) {
    this.timing = opts.timing ?? readTiming();
    this.summary = { worker_id: opts.workerId, executed: 0, succeeded: 0, failed: 0, reaped: 0, claimed: false, drained: false, job_ids: [] };
  }

  /** First signal: stop claiming, let in-flight jobs finish (SPEC §4 "Graceful stop"). */
  requestStop(reason: string): void {
    if (this.stopping) return;
    this.stopping = true;
    this.emit({ type: "stopping", reason, inFlight: this.inFlight.size });
    this.waker?.poke();
  }

  /** Second signal: group-kill in-flight children; their attempts are requeued without charge. */
  interrupt(): void {
    this.stopping = true;
    this.interrupted = true;
    for (const job of this.inFlight.values()) job.stop("interrupted");
    this.waker?.poke();
  }

  /** Whether a first stop was requested. */
  get isStopping(): boolean {
    return this.stopping;
  }

  private emit(event: WorkerEvent): void {
    this.opts.onEvent?.(event);
  }

  /** Runs until the mode says stop; resolves with the summary. */
  async run(): Promise<WorkSummary> {
    const { store, opts } = this;
    registerWorker(store, opts.workerId, opts.queue);
    this.waker = watchQueue(store.path);
    const registryBeat = setInterval(() => this.beatRegistry(), this.timing.heartbeat * 1000);
    try {
      await this.loop();
    } finally {
      clearInterval(registryBeat);
      this.waker.close();
      try {
        store.write((tx) => tx.markWorkerStopped(opts.workerId, Date.now() / 1000));
      } catch {
        // best effort: a stale registry row is judged by PID liveness anyway
      }
    }
    return this.summary;
  }

  private beatRegistry(): void {
    try {
      const { stopRequested } = this.store.write((tx) => tx.heartbeatWorker(this.opts.workerId, Date.now() / 1000));
      if (stopRequested) this.requestStop("stop requested through the registry");
    } catch (error) {
      this.transient(error);
    }
  }

  /** Reports a condition to wait out (lock held, disk full, I/O error); anything else is a bug and propagates. */
  private transient(error: unknown): void {
    if (isTransient(error)) this.emit({ type: "transient", message: error.message });
    else throw error;
  }

  private async reap(): Promise<void> {
    try {
      for (const reaped of await reapDeadWorkers(this.store, this.opts.workerId, this.timing.reapThreshold)) {
        this.summary.reaped++;
        this.emit({ type: "reaped", reaped });
      }
    } catch (error) {
      this.transient(error);
    }
  }

  /** Claims while there is room; returns how many were claimed. */
  private claimWhileRoom(): number {
    const { store, opts } = this;
    let claimed = 0;
    while (!this.stopping && this.inFlight.size < opts.concurrency) {
      if (opts.mode === "once" && this.summary.claimed) break;
      const now = Date.now() / 1000;
      if (!store.read((tx) => tx.hasDueJob(opts.queue, now))) break;
      let next: ClaimedAttempt | null;
      try {
        next = claimNext(store, { queue: opts.queue, workerId: opts.workerId, workerPid: process.pid, slots: opts.slots });
      } catch (error) {
        this.transient(error);
        break;
      }
      if (!next) break;
      this.summary.claimed = true;
      this.start(next);
      claimed++;
    }
    return claimed;
  }

  private async loop(): Promise<void> {
    const { store, opts } = this;
    let lastReap = -Infinity;
    let lastStopCheck = -Infinity;
    for (;;) {
      // Our own commits wake this loop ~2 times a job; the stop flag needs no fresher look than 250 ms.
      if (!this.stopping && performance.now() - lastStopCheck >= STOP_CHECK_MS) {
        lastStopCheck = performance.now();
        if (store.read((tx) => tx.getWorker(opts.workerId))?.stop_requested) this.requestStop("stop requested through the registry");
      }
      if (!this.stopping && performance.now() - lastReap >= this.timing.heartbeat * 1000) {
        lastReap = performance.now();
        await this.reap();
      }
      this.recordPending();
      // While results cannot be written, claiming more would only pile up unrecorded runs.
      if (this.unrecorded.length === 0) this.claimWhileRoom();
      if (this.inFlight.size === 0) {
        if (this.stopping || opts.mode === "once") return;
        if (opts.mode === "drain" && store.read((tx) => tx.laneSettled(opts.queue, Date.now() / 1000))) {
          this.summary.drained = true;
          return;
        }
      }
      await this.waker!.wait(this.idleWaitMs());
    }
  }

  /** How long to sleep when nothing can be claimed: the poll, or until the next due job. */
  private idleWaitMs(): number {
    let ms = this.opts.pollInterval * 1000;
    const due = this.store.read((tx) => tx.nextDueAt(this.opts.queue));
    const now = Date.now() / 1000;
    // A job already due that could not be claimed is held back by --slots or
    // --concurrency: the end of a running job (a commit, or our own poke) wakes
    // us; shortening the wait to 1 ms would spin on the database.
    if (due !== null && due > now) ms = Math.min(ms, Math.max(1, (due - now) * 1000 + 5));
    return Math.min(ms, this.timing.heartbeat * 1000);
  }

  private start(claimed: ClaimedAttempt): void {
    const { job, attemptNo } = claimed;
    const started = performance.now();
    const running = startAttempt({
      argv: job.argv,
      cwd: job.cwd,
      env: job.env,
      stdoutPath: claimed.stdoutPath,
      stderrPath: claimed.stderrPath,
      timeoutSeconds: job.timeout_seconds,
      marker: attemptMarker(this.store.path, job.id, attemptNo),
    });
    if (running.pid !== null) {
      // The reaper needs the group to kill an orphan if this worker dies: retry through LOCKED.
      // (If it still cannot be written, the reaper finds the processes by their marker.)
      try {
        this.retryLocked(() => this.store.write((tx) => tx.setAttemptProcess(job.id, attemptNo, running.pid!, running.startTime)));
      } catch (error) {
        this.transient(error);
      }
    }
    if (this.interrupted) running.stop("interrupted");
    const beat = setInterval(() => {
      try {
        const seen = this.store.write((tx) => tx.heartbeatJob(job.id, attemptNo, this.opts.workerId, Date.now() / 1000));
        // null: the job was taken from us (retry --force); its run must not go on beside the new one.
        if (seen === null || seen.cancelRequested) running.stop("canceled");
      } catch (error) {
        this.transient(error);
      }
    }, this.timing.heartbeat * 1000);
    const done = running.done.then((end) => {
      clearInterval(beat);
      this.finish(claimed, end, started);
      this.waker?.poke();
    });
    this.inFlight.set(flightKey(claimed), { claimed, stop: running.stop, done });
  }

  /**
   * Records an ended attempt and does the bookkeeping. When the result cannot be
   * written (disk full, I/O error, a lock held past every retry) the attempt is
   * kept in flight and retried before any new claim: losing it would re-run the job.
   */
  private finish(claimed: ClaimedAttempt, end: ProcessEnd, started: number): boolean {
    const { job, attemptNo } = claimed;
    let outcome: Outcome | null;
    try {
      outcome = this.retryLocked(() => recordAttemptEnd(this.store, { jobId: job.id, attemptNo, workerId: this.opts.workerId }, end));
    } catch (error) {
      if (!isTransient(error)) throw error;
      if (!this.unrecorded.some((u) => u.claimed === claimed)) this.unrecorded.push({ claimed, end, started });
      this.emit({ type: "transient", message: `cannot record job ${job.id} attempt ${attemptNo} yet: ${error.message}` });
      return false;
    }
    this.inFlight.delete(flightKey(claimed));
    this.summary.executed++;
    this.summary.job_ids.push(job.id);
    if (outcome === null) {
      this.emit({ type: "lost", jobId: job.id, attemptNo });
    } else {
      if (outcome.jobState === "done") this.summary.succeeded++;
      else this.summary.failed++;
      this.emit({ type: "finished", jobId: job.id, attemptNo, argv: job.argv, outcome, seconds: (performance.now() - started) / 1000 });
    }
    return true;
  }

  /** Retries the results that could not be written, oldest first; stops at the first that still fails. */
  private recordPending(): void {
    while (this.unrecorded.length > 0) {
      const { claimed, end, started } = this.unrecorded[0]!;
      if (!this.finish(claimed, end, started)) return;
      this.unrecorded.shift();
    }
  }

  /** Runs `fn`, retrying up to 12 times while it raises `LOCKED` (each try waits the busy timeout); other errors propagate. */
  private retryLocked<T>(fn: () => T): T {
    for (let tries = 0; ; tries++) {
      try {
        return fn();
      } catch (error) {
        if (!(error instanceof SpoolError && error.code === "LOCKED") || tries >= 11) throw error;
        this.emit({ type: "transient", message: error.message });
      }
    }
  }
}

/** How often the loop reads its registry row for a `spoolctl stop`, milliseconds. */
const STOP_CHECK_MS = 250;

/** The in-flight key of an attempt. */
function flightKey(claimed: ClaimedAttempt): string {
  return `${claimed.job.id}:${claimed.attemptNo}`;
}

/** Whether a failure is one a worker waits out: a held lock, a full disk, an I/O error. */
function isTransient(error: unknown): error is SpoolError {
  return error instanceof SpoolError && (error.code === "LOCKED" || error.detail?.storage !== undefined);
}
