/**
 * The work loop (`work`; docs/architecture.md "The claim", "Waking", "Drain"): reap, claim up to `concurrency` jobs,
 * run each in its own process group with a heartbeat, record outcomes, and
 * wait on file changes plus a slow poll when idle. Modes: `loop` (until
 * stopped), `once` (one claim at most), `drain` (until the lane is settled).
 */
import type { SpoolError } from "../contract/errors.ts";
import { TOOL_VERSION } from "../contract/version.ts";
import { KILL_LEFTOVERS_VAR } from "../model/job.ts";
import { lanesColumn } from "../ops/lanes.ts";
import { attemptSpan } from "../ops/trace-context.ts";
import type { Store, WorkWaker } from "../store/store.ts";
import type { ClaimedAttempt } from "../store/verbs/claim.ts";
import { workerStopped } from "../store/verbs/registry.ts";
import { workerStartSettings } from "../store/verbs/ship.ts";
import type { WorkerEvent, WorkOptions, WorkSummary } from "./api.ts";
import { Claimer } from "./claimer.ts";
import { flightKey, type InFlight, isDamage, isTransient, type WorkerCore } from "./core.ts";
import { DrainNotice, sayWhatTheDrainLeft } from "./drain-wait.ts";
import { attemptMarker, startAttempt, workerEnvironment } from "./executor.ts";
import { LaneWatch } from "./lane-watch.ts";
import { Lease } from "./lease.ts";
import { PauseWatch } from "./pause.ts";
import { reapDeadWorkersNow, sweepOrphans } from "./reaping.ts";
import { Recorder } from "./recorder.ts";
import { registerThisWorker } from "./registry.ts";
import { SchedulePass } from "./schedule-pass.ts";
import { OutputShipper, SHIP_INTERVAL_MS } from "./ship.ts";
import { StopCheck } from "./stops.ts";
import { StorageWatch } from "./storage-watch.ts";
import { readTiming, type Timing } from "./timing.ts";
import { attemptTracer, randomBytes, tracedAttempt } from "./tracing.ts";
import { Watchdog } from "./watchdog.ts";

/** One `work` process's loop. */
export class Worker implements WorkerCore {
  /** Writes the results of ended attempts (src/worker/recorder.ts). */
  readonly recorder = new Recorder(this);
  /** Claims jobs, and gives back those a lost claim took (src/worker/claimer.ts). */
  readonly claimer = new Claimer(this);
  /** Renews the lease, stops the children when it cannot (src/worker/lease.ts). */
  readonly lease = new Lease(this);
  /** Attempts in flight, by `job:attempt` (a job can be re-claimed here while its old run ends). */
  readonly inFlight = new Map<string, InFlight>();
  /** Dates attempts' ends across pauses of this process (SIGSTOP, Ctrl-Z): src/worker/pause.ts. */
  private readonly pauses = new PauseWatch();
  stopping = false;
  interrupted = false;
  waker: WorkWaker | null = null;
  readonly timing: Timing;
  readonly summary: WorkSummary;
  /** The environment children start from, copied once per worker. */
  private readonly baseEnv = workerEnvironment();
  /** The `kill_leftovers` setting as this worker read it when it started (docs/architecture.md "Leftover processes"). */
  private killLeftovers = false;
  /** Where attempts' spans go when an OTLP endpoint is set (src/worker/tracing.ts); null: nowhere. */
  private readonly tracer = attemptTracer(process.env, TOOL_VERSION, (message) =>
    this.emit({ type: "tracing", message }),
  );
  readonly storage: StorageWatch;
  /** The lanes this worker serves, their pauses and ceilings (src/worker/lane-watch.ts). */
  readonly lanes: LaneWatch;

  constructor(
    readonly store: Store,
    readonly opts: WorkOptions,
  ) {
    this.timing = opts.timing ?? readTiming();
    this.lanes = new LaneWatch(
      store,
      { lanes: opts.lanes ?? [opts.queue], allLanes: opts.allLanes ?? false, slots: opts.slots },
      (event) => this.emit(event),
      this.timing,
    );
    this.summary = {
      worker_id: opts.workerId,
      executed: 0,
      succeeded: 0,
      failed: 0,
      reaped: 0,
      claimed: false,
      drained: false,
      job_ids: [],
      left_queued: [],
    };
    this.storage = new StorageWatch(store, (message) => this.emit({ type: "storage", message }));
    this.schedules = new SchedulePass(store, (outcomes) => this.emit({ type: "schedule", outcomes }));
  }

  /** The due-slot pass of recurring schedules (docs/architecture.md "Recurring jobs"). */
  readonly schedules: SchedulePass;

  /** First signal: stop claiming, let in-flight jobs finish (docs/architecture.md "Graceful stop"). */
  requestStop(reason: string): void {
    if (this.stopping) return;
    this.stopping = true;
    this.stopAskedAt = performance.now();
    // Results waiting out a back-off get one more try now, not up to 15 s from now.
    this.storage.retryRecordNow();
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

  emit(event: WorkerEvent): void {
    this.opts.onEvent?.(event);
  }

  /** Runs until the mode says stop; resolves with the summary. */
  async run(): Promise<WorkSummary> {
    const { store, opts } = this;
    // A database that cannot be reached yet is waited for, like a lock (a CONFLICT on the id is not).
    for (const reaped of await this.untilDone(() =>
      // A holder it cannot judge is waited for while its lease runs; the wait is said once.
      registerThisWorker(
        store,
        opts.workerId,
        lanesColumn(opts.allLanes ? "all" : (opts.lanes ?? [opts.queue])),
        this.timing.reapThreshold,
        (message) => this.emit({ type: "id_wait", message }),
      ),
    )) {
      this.summary.reaped++;
      this.emit({ type: "reaped", reaped });
    }
    this.lease.renewedAt = performance.now();
    // On a shared queue, a process of its own ends the jobs of this worker should it stop renewing (SIGSTOP).
    this.lease.watchdog = Watchdog.forWorker(store, opts, this.timing, (message) =>
      this.emit({ type: "watchdog", message }),
    );
    await sweepOrphans(this);
    const started = await this.untilDone(() => workerStartSettings(store));
    this.killLeftovers = started.kill_leftovers;
    if (store.shipsOutput) this.shipper = new OutputShipper(store, opts.workerId, started.output_cap);
    const ship = this.shipper ? setInterval(() => void this.shipRunning(), SHIP_INTERVAL_MS) : null;
    await this.untilDone(() => this.lanes.refresh(true));
    this.rewatch();
    const beat = setInterval(() => void this.lease.beat(), this.timing.heartbeat * 1000);
    this.pauses.start(() =>
      [...this.inFlight.values()].flatMap((f) => (f.running.pid === null ? [] : [f.running.pid])),
    );
    try {
      await this.loop();
    } finally {
      clearInterval(beat);
      this.pauses.stop();
      this.lease.watchdog?.close();
      if (ship) clearInterval(ship);
      this.waker?.close();
      await this.tracer?.close();
      try {
        // Not into a file that is no longer the queue.
        if (!this.lost) await workerStopped(store, opts.workerId);
      } catch {
        // best effort: a stale registry row is judged by PID liveness anyway
      }
    }
    if (this.lost) throw this.lost;
    return this.summary;
  }

  /** Set when the queue's file was deleted or replaced under this worker: the error it exits with. */
  lost: SpoolError | null = null;

  /**
   * Compares the queue's file with the one opened (docs/architecture.md "A
   * vanished or replaced file"): when it is gone or another, the worker stops
   * claiming, stops its running jobs (their results have nowhere to go that
   * anyone reads) and exits with `QUEUE_REPLACED`. One stat(2); called on every
   * turn and every heartbeat.
   */
  checkFile(): void {
    if (this.lost) return;
    const lost = this.store.replaced();
    if (lost !== null) this.giveUp(lost);
  }

  /**
   * Ends the worker for a condition of its queue that waiting cannot cure (the
   * file replaced, a damaged file met by a heartbeat): claiming stops, running
   * jobs are stopped, and {@link run} raises `error` once they have ended.
   */
  giveUp(error: SpoolError): void {
    if (this.lost) return;
    this.lost = error;
    const running = this.inFlight.size;
    this.emit({
      type: "storage",
      message: `${error.message}: claiming stopped${running > 0 ? `; stopping ${running} running job(s), whose results have nowhere to go` : ""}; exiting`,
    });
    this.interrupt();
  }

  /** Ships attempt output into a shared database; null when the store keeps output in files only. */
  shipper: OutputShipper | null = null;
  private shipping = false;

  private async shipRunning(): Promise<void> {
    if (this.shipping || !this.shipper) return;
    this.shipping = true;
    try {
      await this.shipper.shipAll();
    } catch (error) {
      this.transient(error);
    } finally {
      this.shipping = false;
    }
  }

  /** Reports a condition to wait out (lock held, disk full, I/O error); anything else is a bug and propagates. */
  transient(error: unknown): void {
    if (isTransient(error)) this.say(error.message);
    else throw error;
  }

  /** Emits a transient line, at most once per 30 s for the same text (docs/architecture.md "Storage conditions"). */
  say(message: string): void {
    const line = this.storage.rateLimit(message);
    if (line !== null) this.emit({ type: "transient", message: line });
  }

  /**
   * Runs `fn` until it succeeds, waiting out transient conditions (a lock, a
   * full disk, a database that cannot be reached) with a growing pause (50 ms
   * to 2 s); other errors propagate.
   */
  private async untilDone<T>(fn: () => Promise<T>): Promise<T> {
    for (let pause = 50; ; pause = Math.min(pause * 2, 2000)) {
      try {
        return await fn();
      } catch (error) {
        this.transient(error);
        await Bun.sleep(pause);
      }
    }
  }

  private async loop(): Promise<void> {
    let pause = 50;
    for (;;) {
      try {
        if (await this.turn()) return;
        pause = 50;
      } catch (error) {
        if (isDamage(error)) {
          // A damaged file is not waited out: stop the jobs, then exit with the error (run() raises it).
          this.giveUp(error);
          if (this.inFlight.size === this.recorder.unrecorded.length) return;
        } else {
          // A read between the steps failed (the database went away): wait it out, then go on.
          this.transient(error);
        }
        await this.waker!.wait(pause, false);
        pause = Math.min(pause * 2, 2000);
      }
    }
  }

  private lastReap = -Infinity;
  /** Its look at stop requests, its own and its jobs' (src/worker/stops.ts). */
  private readonly stops = new StopCheck(this);

  /** One turn of the loop; resolves true when the worker is done. */
  private async turn(): Promise<boolean> {
    const { opts } = this;
    {
      this.checkFile();
      await this.stops.check();
      if (!this.stopping && performance.now() - this.lastReap >= this.timing.heartbeat * 1000) {
        this.lastReap = performance.now();
        await reapDeadWorkersNow(this);
      }
      if (!this.stopping && !this.lost) await this.schedules.maybeRun().catch((error) => this.transient(error));
      if (!this.stopping) {
        // A pause, a resume or a lane's new ceiling reaches this worker within a second (lane-watch.ts).
        await this.lanes.refresh();
        this.rewatch();
      }
      await this.recorder.recordPending();
      // While results cannot be written, claiming more would only pile up unrecorded runs;
      // while a disk of the queue is full, a claimed job would only fail on it.
      if (this.claimer.claimUncertain) await this.claimer.releaseStrays();
      const paused = this.storage.claimPaused();
      if (this.recorder.unrecorded.length === 0 && !paused) await this.claimer.claimWhileRoom();
      await this.storage.checkpointIfDue(this.inFlight.size === 0);
      if (this.recorder.mayLeaveUnrecorded()) {
        // Told to stop while results cannot be written: exit; the reaper of the next worker requeues them.
        this.emit({
          type: "storage",
          message: `exiting with ${this.recorder.unrecorded.length} result(s) unrecorded (job ${this.recorder.unrecorded.map((u) => u.claimed.job.id).join(", ")}): the next worker reaps and requeues them`,
        });
        return true;
      }
      if (this.inFlight.size === 0) {
        if (this.stopping || opts.mode === "once") return true;
        if (opts.mode === "drain" && (await this.lanes.settled())) {
          this.summary.drained = true;
          this.summary.left_queued = await sayWhatTheDrainLeft(this.store, this.lanes, opts.allLanes === true, (e) =>
            this.emit(e),
          );
          return true;
        }
      }
      // A job of the lane ending matters only to a worker held back by --slots or a drain waiting for the lane to settle.
      if (this.inFlight.size === 0 && opts.mode === "loop" && !this.saidWaiting) {
        // Once, when the worker first goes idle: later idle spells between jobs would fill a CI log.
        this.saidWaiting = true;
        this.emit({ type: "idle", queue: this.lanes.served().join(",") });
      }
      if (this.inFlight.size === 0 && opts.mode === "drain")
        await this.drainNotice.maybeSay(this.store, this.lanes, this.timing.reapThreshold, {
          reapNow: () => reapDeadWorkersNow(this, true),
          emit: (e) => this.emit(e),
        });
      const freed = this.lanes.anySlots() || (opts.mode === "drain" && this.inFlight.size === 0);
      const hungry = !this.stopping && this.inFlight.size < (opts.mode === "once" ? 1 : opts.concurrency);
      await this.waker!.wait(await this.claimer.idleWaitMs(), freed, hungry);
      return false;
    }
  }

  /** When a first stop was asked for (performance.now(), ms). */
  stopAskedAt = 0;

  /** Whether the `idle` event ("waiting for jobs") was emitted: once per worker (README "Running jobs"). */
  private saidWaiting = false;
  /** The drain's notice of what holds it open, once per idle spell (src/worker/drain-wait.ts). */
  private readonly drainNotice = new DrainNotice();

  /** (Re)makes the waker when the lanes served, or the need for freed-slot wake-ups, changed (lane-watch.ts). */
  private rewatch(): void {
    const next = this.lanes.rewatch(this.waker, this.opts.mode === "drain");
    if (next === this.waker) return;
    this.waker?.close();
    this.waker = next;
  }

  /** Starts a claimed attempt; `leaseNs`: sharedClockNs (src/worker/timing.ts) taken before its claim was sent. */
  async start(claimed: ClaimedAttempt, leaseNs: bigint): Promise<void> {
    const { job, attemptNo } = claimed;
    this.drainNotice.reset();
    this.emit({ type: "started", job, attemptNo });
    const started = performance.now();
    const startedMs = Date.now();
    // A span of its own, named in the command's TRACEPARENT (docs/architecture.md "Traces").
    const span = attemptSpan(job.trace ?? null, attemptNo, randomBytes);
    const running = startAttempt({
      argv: job.argv,
      cwd: job.cwd,
      env: { ...job.env, ...span.env },
      stdoutPath: claimed.stdoutPath,
      stderrPath: claimed.stderrPath,
      timeoutSeconds: job.timeout_seconds,
      marker: attemptMarker(this.store.queueId, job.id, attemptNo),
      baseEnv: this.baseEnv,
      killLeftovers: this.killLeftovers || job.env[KILL_LEFTOVERS_VAR] === "1",
    });
    // In flight from now on, so that the next heartbeat renews its lease and records the process group.
    // (Until then, a reaper finds the attempt's processes by their marker: docs/architecture.md "Orphans".)
    this.inFlight.set(flightKey(claimed), { claimed, running, processRecorded: false, leaseNs, stop: running.stop });
    // Should this worker die, its watchdog ends what it left running (docs/architecture.md "A stopped worker").
    this.lease.watchdog?.jobStarted(
      running.pid,
      running.startTime(),
      attemptMarker(this.store.queueId, job.id, attemptNo),
    );
    this.shipper?.track(claimed);
    if (this.interrupted) running.stop("interrupted");
    void running.done.then((processEnd) => {
      this.tracer?.ended(tracedAttempt(claimed, span, startedMs, processEnd));
      const ended = Math.max(started, this.pauses.endedAt(running.pid));
      const end = this.lease.endOf(claimed, running, leaseNs, processEnd);
      return this.recorder.ended({ claimed, end, started, ended });
    });
  }
}
