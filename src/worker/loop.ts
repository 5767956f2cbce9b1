/**
 * The work loop (`work`; docs/architecture.md "The claim", "Waking", "Drain"): reap, claim up to `concurrency` jobs,
 * run each in its own process group with a heartbeat, record outcomes, and
 * wait on file changes plus a slow poll when idle. Modes: `loop` (until
 * stopped), `once` (one claim at most), `drain` (until the lane is settled).
 */
import { SpoolError } from "../contract/errors.ts";
import { type Claimant, type ClaimedAttempt, claimJobs } from "../ops/claim.ts";
import { readLastStderrLine } from "../ops/failure-signature.ts";
import { lanesColumn } from "../ops/lanes.ts";
import type { Outcome, ProcessEnd } from "../ops/outcome.ts";
import { type AttemptEnd, recordAttemptEnd, recordAttemptEnds, recordAttemptEndsAndClaim } from "../ops/record.ts";
import { readSettings } from "../ops/settings.ts";
import { heartbeat } from "../store/heartbeat.ts";
import type { AttemptKey, Store, WorkWaker } from "../store/store.ts";
import type { WorkerEvent, WorkOptions, WorkSummary } from "./api.ts";
import { whatHoldsTheDrain } from "./drain-wait.ts";
import { attemptMarker, type RunningAttempt, startAttempt, workerEnvironment } from "./executor.ts";
import { LaneWatch } from "./lane-watch.ts";
import { processStartTime } from "./liveness.ts";
import { PauseWatch } from "./pause.ts";
import { killOrphans, reapDeadWorkers } from "./reaper.ts";
import { registerWorker } from "./registry.ts";
import { SchedulePass } from "./schedule-pass.ts";
import { OutputShipper, SHIP_INTERVAL_MS } from "./ship.ts";
import { StorageWatch } from "./storage-watch.ts";
import { leaseGuardSeconds, readTiming, sharedClockNs, type Timing } from "./timing.ts";
import { endedByWatchdog, Watchdog } from "./watchdog.ts";

/** Why an attempt this worker stopped for want of a lease renewal was requeued (docs/architecture.md "Heartbeat and lease"). */
const LEASE_LOST_WHY =
  "this worker could not renew its lease in time (a slow or unreachable database), so it stopped the job before another worker could reap it; requeued without charge";

interface InFlight {
  claimed: ClaimedAttempt;
  running: RunningAttempt;
  /** Whether a heartbeat has recorded the attempt's process group (otherwise the result carries it). */
  processRecorded: boolean;
  /** When its lease was last written, at the latest: {@link sharedClockNs} taken before the claim or heartbeat was sent. */
  leaseNs: bigint;
  stop(reason: "canceled" | "interrupted"): void;
}

/** One `work` process's loop. */
export class Worker {
  /** Attempts in flight, by `job:attempt` (a job can be re-claimed here while its old run ends). */
  private readonly inFlight = new Map<string, InFlight>();
  /** Ended attempts whose result could not be written yet (disk full): retried before any claim. */
  private readonly unrecorded: Ended[] = [];
  /** Ended attempts waiting for the recorder, which writes all that came in together in one commit. */
  private readonly ending: Ended[] = [];
  private recording = false;
  /** Dates attempts' ends across pauses of this process (SIGSTOP, Ctrl-Z): src/worker/pause.ts. */
  private readonly pauses = new PauseWatch();
  private stopping = false;
  private interrupted = false;
  private waker: WorkWaker | null = null;
  private readonly timing: Timing;
  private readonly summary: WorkSummary;
  /** The environment children start from, copied once per worker. */
  private readonly baseEnv = workerEnvironment();
  /** Whether the last claim filled the free room (false: idle room, so the idle wait asks when the next job is due). */
  private claimFilledRoom = false;
  private readonly storage: StorageWatch;
  /** The lanes this worker serves, their pauses and ceilings (src/worker/lane-watch.ts). */
  private readonly lanes: LaneWatch;

  constructor(
    private readonly store: Store,
    private readonly opts: WorkOptions,
  ) {
    this.lanes = new LaneWatch(
      store,
      { lanes: opts.lanes ?? [opts.queue], allLanes: opts.allLanes ?? false, slots: opts.slots },
      (event) => this.emit(event),
    );
    this.timing = opts.timing ?? readTiming();
    this.summary = {
      worker_id: opts.workerId,
      executed: 0,
      succeeded: 0,
      failed: 0,
      reaped: 0,
      claimed: false,
      drained: false,
      job_ids: [],
    };
    this.storage = new StorageWatch(store, (message) => this.emit({ type: "storage", message }));
    this.schedules = new SchedulePass(store, (outcomes) => this.emit({ type: "schedule", outcomes }));
  }

  /** The due-slot pass of recurring schedules (docs/architecture.md "Recurring jobs"). */
  private readonly schedules: SchedulePass;

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

  private emit(event: WorkerEvent): void {
    this.opts.onEvent?.(event);
  }

  /** Runs until the mode says stop; resolves with the summary. */
  async run(): Promise<WorkSummary> {
    const { store, opts } = this;
    // A database that cannot be reached yet is waited for, like a lock (a CONFLICT on the id is not).
    for (const reaped of await this.untilDone(() =>
      // A holder it cannot judge is waited for while its lease runs; the wait is said once.
      registerWorker(
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
    this.renewedAt = performance.now();
    // On a shared queue, a process of its own ends the jobs of this worker should it stop renewing (SIGSTOP).
    this.watchdog = Watchdog.forWorker(store, opts, this.timing, (message) => this.emit({ type: "watchdog", message }));
    await this.sweepOrphans();
    if (store.shipsOutput) {
      const { output_cap } = await this.untilDone(() => store.read(async (tx) => readSettings(tx)));
      this.shipper = new OutputShipper(store, opts.workerId, output_cap);
    }
    const ship = this.shipper ? setInterval(() => void this.shipRunning(), SHIP_INTERVAL_MS) : null;
    await this.untilDone(() => this.lanes.refresh(true));
    this.rewatch();
    const beat = setInterval(() => void this.heartbeat(), this.timing.heartbeat * 1000);
    this.pauses.start(() =>
      [...this.inFlight.values()].flatMap((f) => (f.running.pid === null ? [] : [f.running.pid])),
    );
    try {
      await this.loop();
    } finally {
      clearInterval(beat);
      this.pauses.stop();
      this.watchdog?.close();
      if (ship) clearInterval(ship);
      this.waker?.close();
      try {
        // Not into a file that is no longer the queue.
        if (!this.lost)
          await store.write(async (tx) => tx.markWorkerStopped(opts.workerId, store.now()), { durable: false });
      } catch {
        // best effort: a stale registry row is judged by PID liveness anyway
      }
    }
    if (this.lost) throw this.lost;
    return this.summary;
  }

  /** Set when the queue's file was deleted or replaced under this worker: the error it exits with. */
  private lost: SpoolError | null = null;

  /**
   * Compares the queue's file with the one opened (docs/architecture.md "A
   * vanished or replaced file"): when it is gone or another, the worker stops
   * claiming, stops its running jobs (their results have nowhere to go that
   * anyone reads) and exits with `QUEUE_REPLACED`. One stat(2); called on every
   * turn and every heartbeat.
   */
  private checkFile(): void {
    if (this.lost) return;
    const lost = this.store.replaced();
    if (lost !== null) this.giveUp(lost);
  }

  /**
   * Ends the worker for a condition of its queue that waiting cannot cure (the
   * file replaced, a damaged file met by a heartbeat): claiming stops, running
   * jobs are stopped, and {@link run} raises `error` once they have ended.
   */
  private giveUp(error: SpoolError): void {
    if (this.lost) return;
    this.lost = error;
    const running = this.inFlight.size;
    this.emit({
      type: "storage",
      message: `${error.message}: claiming stopped${running > 0 ? `; stopping ${running} running job(s), whose results have nowhere to go` : ""}; exiting`,
    });
    this.interrupt();
  }

  private beating = false;
  /** Ships attempt output into a shared database; null when the store keeps output in files only. */
  private shipper: OutputShipper | null = null;
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
  /** This worker's watchdog (a shared queue), told of every renewal: src/worker/watchdog.ts. */
  private watchdog: Watchdog | null = null;
  /** When the lease was last renewed (performance.now(), ms). */
  private renewedAt = performance.now();
  /** Set when {@link checkLease} stopped the children; cleared by the next renewal. */
  private leaseStopped = false;
  /** The attempts {@link checkLease} stopped, so their record says why. */
  private readonly leaseLost = new WeakSet<object>();

  /** Kills what dead workers of this queue left running on this host (docs/architecture.md "Orphans"). */
  private async sweepOrphans(): Promise<void> {
    try {
      const { killed, spared } = await killOrphans(this.store);
      if (killed.length > 0) this.emit({ type: "orphans", killed });
      for (const group of spared) this.emit({ type: "orphan_spared", ...group });
    } catch (error) {
      this.transient(error);
    }
  }

  /**
   * A worker that cannot renew its lease stops its children itself before the
   * lease runs out, so a partitioned host never runs a job beside the worker
   * that reaps and re-runs it elsewhere. One heartbeat of margin.
   */
  private checkLease(): void {
    // On one host (SQLite) a job is reaped only once its worker is confirmed dead: stopping protects nothing.
    if (!this.store.shipsOutput) return;
    const silentSeconds = (performance.now() - this.renewedAt) / 1000;
    const limit = leaseGuardSeconds(this.timing);
    if (this.leaseStopped || this.inFlight.size === 0 || silentSeconds < limit) return;
    this.leaseStopped = true;
    const jobIds = [...this.inFlight.values()].map((f) => f.claimed.job.id);
    for (const flight of this.inFlight.values()) {
      this.leaseLost.add(flight.claimed);
      flight.stop("interrupted");
    }
    this.emit({ type: "lease_lost", jobIds, seconds: silentSeconds });
  }

  /**
   * One heartbeat for the whole worker, in one transaction: its registry row
   * and the lease of every attempt in flight (docs/architecture.md "Heartbeat
   * and lease"). An attempt the worker no longer owns (force-retried, reaped)
   * or whose cancel was requested is stopped.
   */
  private async heartbeat(): Promise<void> {
    this.checkFile();
    if (this.lost) return;
    if (this.beating) {
      this.checkLease(); // the previous beat hangs (a database that stopped answering)
      return;
    }
    this.beating = true;
    try {
      // The first beat after a spawn also records the attempt's process group (docs/architecture.md "The claim").
      const flights = [...this.inFlight.values()];
      const sentNs = sharedClockNs(); // before the database stamps the leases; the watchdog's clock too
      const attempts: AttemptKey[] = flights.map((f) => {
        const key: AttemptKey = { jobId: f.claimed.job.id, attemptNo: f.claimed.attemptNo };
        if (!f.processRecorded && f.running.pid !== null)
          key.process = { pgid: f.running.pid, startTime: f.running.startTime() };
        return key;
      });
      const { stopRequested, leases } = await heartbeat(this.store, this.opts.workerId, attempts);
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
          this.inFlight.get(`${lease.jobId}:${lease.attemptNo}`)?.stop("canceled");
      }
      if (stopRequested) this.requestStop("stop requested through the registry");
    } catch (error) {
      this.checkLease();
      // The heartbeat runs off a timer: what it cannot wait out ends the worker through the loop, not as an unhandled rejection.
      if (isDamage(error)) this.giveUp(error);
      else this.transient(error);
    } finally {
      this.beating = false;
    }
  }

  /**
   * Tells the watchdog the start of the oldest lease in force, after a renewal
   * or a claim (`sentNs`: when it was sent): that one's, or an earlier claim's
   * or renewal's still in flight (docs/architecture.md "A stopped worker").
   */
  private tellWatchdog(sentNs: bigint): void {
    if (!this.watchdog) return;
    let oldest = sentNs;
    for (const f of this.inFlight.values()) if (f.leaseNs < oldest) oldest = f.leaseNs;
    this.watchdog.renewed(oldest);
  }

  /** Reports a condition to wait out (lock held, disk full, I/O error); anything else is a bug and propagates. */
  private transient(error: unknown): void {
    if (isTransient(error)) this.say(error.message);
    else throw error;
  }

  /** Emits a transient line, at most once per 30 s for the same text (docs/architecture.md "Storage conditions"). */
  private say(message: string): void {
    const line = this.storage.rateLimit(message);
    if (line !== null) this.emit({ type: "transient", message: line });
  }

  /** Reaps dead workers' jobs (docs/architecture.md "Reaping"); `certainOnly`: only those of workers certainly dead here. */
  private async reap(certainOnly = false): Promise<void> {
    try {
      for (const reaped of await reapDeadWorkers(this.store, this.opts.workerId, this.timing.reapThreshold, {
        certainOnly,
      })) {
        this.summary.reaped++;
        this.emit({ type: "reaped", reaped });
        for (const pgid of reaped.spared)
          this.emit({ type: "orphan_spared", jobId: reaped.jobId, attemptNo: reaped.attemptNo, pgid });
      }
    } catch (error) {
      this.transient(error);
    }
  }

  /** Claims up to the free room in one transaction and starts what it got; returns how many. */
  private async claimWhileRoom(): Promise<number> {
    const { store, opts } = this;
    if (this.stopping || (opts.mode === "once" && this.summary.claimed)) return 0;
    const room = opts.mode === "once" ? 1 : opts.concurrency - this.inFlight.size;
    if (room <= 0) return 0;
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
      for (const lane of this.lanes.claimable()) {
        claimed.push(...(await claimJobs(store, this.claimant(lane), room - claimed.length)));
        if (claimed.length >= room) break;
      }
    } catch (error) {
      // Over a network a claim can commit and its answer be lost: jobs may now be ours without our knowing.
      this.claimUncertain = true;
      this.transient(error);
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
      this.summary.claimed = true;
      this.renewedAt = performance.now(); // a claim writes the lease of what it claims
    }
    for (const next of claimed) await this.start(next, sentNs);
    // Its fresh lease is no job's to lose: the watchdog hears of it (it moves on when no older lease is in flight).
    if (claimed.length > 0) this.tellWatchdog(sentNs);
    return claimed.length;
  }

  /** Claims in a row that found nothing (see the jitter in {@link claimWhileRoom}). */
  private emptyClaims = 0;
  private lastEmptyClaim = -Infinity;

  /** Set when a claim failed in a way that may have committed (see {@link releaseStrays}). */
  private claimUncertain = false;

  /**
   * Gives back jobs the store says this worker runs but that it never started:
   * a claim whose commit succeeded while its answer was lost (a connection cut
   * at the wrong moment). They are requeued without charge, as an interrupted
   * attempt; otherwise they would stay `running` under a live worker forever.
   */
  private async releaseStrays(): Promise<void> {
    const { store, opts } = this;
    // A commit of the recorder may have claimed jobs it has not started yet: look once it is done.
    if (this.recording) return;
    const running = (jobId: number) => [...this.inFlight.values()].some((f) => f.claimed.job.id === jobId);
    try {
      const mine = (await store.read(async (tx) => tx.runningJobsByWorker())).filter(
        (r) => r.worker_id === opts.workerId,
      );
      for (const { job_id } of mine) {
        if (running(job_id)) continue;
        const job = await store.read(async (tx) => tx.getJob(job_id));
        if (job?.state !== "running" || job.locked_by !== opts.workerId || running(job_id) || this.recording) continue;
        const why = "its claim committed but this worker never heard it (connection lost); requeued without charge";
        await recordAttemptEnd(
          store,
          { jobId: job.id, attemptNo: job.last_attempt_no, workerId: opts.workerId },
          { kind: "interrupted", code: null, signal: null, why },
        );
        this.emit({ type: "storage", message: `gave back job ${job.id}: ${why}` });
      }
      if (!this.recording) this.claimUncertain = false;
    } catch (error) {
      this.transient(error);
    }
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
          if (this.inFlight.size === this.unrecorded.length) return;
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
  private lastStopCheck = -Infinity;

  /** One turn of the loop; resolves true when the worker is done. */
  private async turn(): Promise<boolean> {
    const { store, opts } = this;
    {
      this.checkFile();
      // Our own commits wake this loop ~2 times a job; the stop flag needs no fresher look than 250 ms.
      if (!this.stopping && performance.now() - this.lastStopCheck >= STOP_CHECK_MS) {
        this.lastStopCheck = performance.now();
        if ((await store.read(async (tx) => tx.getWorker(opts.workerId)))?.stop_requested)
          this.requestStop("stop requested through the registry");
      }
      if (!this.stopping && performance.now() - this.lastReap >= this.timing.heartbeat * 1000) {
        this.lastReap = performance.now();
        await this.reap();
      }
      if (!this.stopping && !this.lost) await this.schedules.maybeRun().catch((error) => this.transient(error));
      if (!this.stopping) {
        // A pause, a resume or a lane's new ceiling reaches this worker within a second (lane-watch.ts).
        await this.lanes.refresh();
        this.rewatch();
      }
      await this.recordPending();
      // While results cannot be written, claiming more would only pile up unrecorded runs;
      // while a disk of the queue is full, a claimed job would only fail on it.
      if (this.claimUncertain) await this.releaseStrays();
      const paused = this.storage.claimPaused();
      if (this.unrecorded.length === 0 && !paused) await this.claimWhileRoom();
      await this.storage.checkpointIfDue(this.inFlight.size === 0);
      if (this.mayLeaveUnrecorded()) {
        // Told to stop while results cannot be written: exit; the reaper of the next worker requeues them.
        this.emit({
          type: "storage",
          message: `exiting with ${this.unrecorded.length} result(s) unrecorded (job ${this.unrecorded.map((u) => u.claimed.job.id).join(", ")}): the next worker reaps and requeues them`,
        });
        return true;
      }
      if (this.inFlight.size === 0) {
        if (this.stopping || opts.mode === "once") return true;
        if (opts.mode === "drain" && (await this.lanes.settled())) {
          this.summary.drained = true;
          return true;
        }
      }
      // A job of the lane ending matters only to a worker held back by --slots or a drain waiting for the lane to settle.
      if (this.inFlight.size === 0 && opts.mode === "loop" && !this.saidIdle) {
        this.saidIdle = true;
        this.emit({ type: "idle", queue: this.lanes.served().join(",") });
      }
      if (this.inFlight.size === 0 && opts.mode === "drain") await this.sayWhatHoldsTheDrain();
      const freed = this.lanes.anySlots() || (opts.mode === "drain" && this.inFlight.size === 0);
      const hungry = !this.stopping && this.inFlight.size < (opts.mode === "once" ? 1 : opts.concurrency);
      await this.waker!.wait(await this.idleWaitMs(), freed, hungry);
      return false;
    }
  }

  /** When a first stop was asked for (performance.now(), ms). */
  private stopAskedAt = 0;

  /**
   * Whether the worker may exit with results it could not write (docs/architecture.md
   * "Storage conditions"): all that is left in flight are such results, and it
   * was told to stop twice, or once {@link UNRECORDED_STOP_GRACE_MS} ago (a last
   * try to write them came first). One SIGTERM thus ends a worker held by a full
   * disk within seconds; its jobs are left to the next worker's reaper.
   */
  private mayLeaveUnrecorded(): boolean {
    if (!this.stopping || this.inFlight.size === 0 || this.inFlight.size !== this.unrecorded.length) return false;
    return this.interrupted || performance.now() - this.stopAskedAt >= UNRECORDED_STOP_GRACE_MS;
  }

  /**
   * How long to sleep when nothing more can be claimed: the poll, or until the
   * next due job. Asked of the store only when the worker has idle room: with
   * every slot busy, the end of one of its own attempts wakes it.
   */
  private async idleWaitMs(): Promise<number> {
    let ms = this.opts.pollInterval * 1000;
    // A result waiting to be written is tried again when its back-off ends (storage-watch.ts).
    if (this.unrecorded.length > 0) ms = Math.min(ms, Math.max(1, this.storage.msUntilRecordRetry()));
    const busy = this.inFlight.size >= this.opts.concurrency || this.claimFilledRoom;
    // Stopping with results unwritten: wake when the grace to leave them ends.
    if (this.stopping && this.unrecorded.length > 0)
      ms = Math.min(ms, Math.max(1, this.stopAskedAt + UNRECORDED_STOP_GRACE_MS - performance.now()));
    if (!this.stopping) ms = Math.min(ms, this.schedules.msUntilDue());
    if (busy || this.stopping) return Math.min(ms, this.timing.heartbeat * 1000);
    const lanes = this.lanes.claimable();
    const due = await this.store.read(async (tx) => {
      let first: number | null = null;
      for (const lane of lanes) {
        const t = await tx.nextDueAt(lane);
        if (t !== null && (first === null || t < first)) first = t;
      }
      return first;
    });
    const now = this.store.now();
    // A job already due that could not be claimed is held back by --slots or
    // --concurrency: the end of a running job (a commit, or our own poke) wakes
    // us; shortening the wait to 1 ms would spin on the database.
    if (due !== null && due > now) ms = Math.min(ms, Math.max(1, (due - now) * 1000 + 5));
    return Math.min(ms, this.timing.heartbeat * 1000);
  }

  /** Whether the `idle` event of this idle spell was emitted. */
  private saidIdle = false;
  /** Since when a drain has had nothing to run (performance.now(), ms; null: it has work). */
  private drainIdleSince: number | null = null;

  /**
   * A drain left with nothing to run, two seconds on, names once what holds
   * it open: other workers' running jobs. It first reaps the jobs of workers
   * of this host certainly dead since the last reap, so that none is named: they
   * are requeued at once (docs/architecture.md "Reaping"); another host's
   * silent worker is named, and reaped when its lease expires.
   */
  private async sayWhatHoldsTheDrain(): Promise<void> {
    const now = performance.now();
    this.drainIdleSince ??= now;
    if (this.saidIdle || now - this.drainIdleSince < DRAIN_QUIET_MS) return;
    await this.reap(true);
    if (await this.lanes.settled()) return;
    this.saidIdle = true;
    for (const lane of this.lanes.served()) {
      const event = await whatHoldsTheDrain(this.store, lane, this.timing.reapThreshold);
      if (event) {
        this.emit(event);
        break;
      }
    }
  }

  /** (Re)makes the waker when the lanes served, or the need for freed-slot wake-ups, changed (lane-watch.ts). */
  private rewatch(): void {
    const next = this.lanes.rewatch(this.waker, this.opts.mode === "drain");
    if (next === this.waker) return;
    this.waker?.close();
    this.waker = next;
  }

  /** Starts a claimed attempt; `leaseNs`: {@link sharedClockNs} taken before its claim was sent. */
  private async start(claimed: ClaimedAttempt, leaseNs: bigint): Promise<void> {
    const { job, attemptNo } = claimed;
    this.saidIdle = false;
    this.drainIdleSince = null;
    this.emit({ type: "started", job, attemptNo });
    const started = performance.now();
    const running = startAttempt({
      argv: job.argv,
      cwd: job.cwd,
      env: job.env,
      stdoutPath: claimed.stdoutPath,
      stderrPath: claimed.stderrPath,
      timeoutSeconds: job.timeout_seconds,
      marker: attemptMarker(this.store.queueId, job.id, attemptNo),
      baseEnv: this.baseEnv,
    });
    // In flight from now on, so that the next heartbeat renews its lease and records the process group.
    // (Until then, a reaper finds the attempt's processes by their marker: docs/architecture.md "Orphans".)
    this.inFlight.set(flightKey(claimed), { claimed, running, processRecorded: false, leaseNs, stop: running.stop });
    this.shipper?.track(claimed);
    if (this.interrupted) running.stop("interrupted");
    void running.done.then((processEnd) => {
      const ended = Math.max(started, this.pauses.endedAt(running.pid));
      // Stopped by this worker for want of a renewal: says so, also when its watchdog ended the job too.
      const end =
        processEnd.kind === "interrupted" && this.leaseLost.has(claimed)
          ? { ...processEnd, why: LEASE_LOST_WHY }
          : this.watchdog?.ended(running.pid, running.startTime(), leaseNs)
            ? endedByWatchdog(processEnd)
            : processEnd;
      this.ending.push({ claimed, end, started, ended });
      return this.recordEnded();
    });
  }

  /**
   * The recorder: writes the results of ended attempts, those that came in
   * together in one commit ("complete many": while one commit is under way,
   * the next ones gather), then wakes the loop. A result that cannot be
   * written joins {@link unrecorded}.
   */
  private async recordEnded(): Promise<void> {
    if (this.recording) return;
    this.recording = true;
    try {
      // With other attempts still running, one turn of the event loop first: children that ended together are recorded together.
      if (this.inFlight.size > this.ending.length) await new Promise((resolve) => setImmediate(resolve));
      while (this.ending.length > 0) {
        const batch = this.ending.splice(0);
        if (!(await this.finish(batch))) this.unrecorded.push(...batch);
      }
    } finally {
      this.recording = false;
    }
    this.waker?.poke();
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
        await this.shipper?.finish(claimed);
        const flight = this.inFlight.get(flightKey(claimed));
        const group =
          flight && !flight.processRecorded && flight.running.pid !== null
            ? { pgid: flight.running.pid, startTime: flight.running.startTime() }
            : null;
        // Read outside the write transaction: one bounded read of the file's end (triage's signature).
        const stderrLastLine = readLastStderrLine(claimed.stderrPath);
        // Dated when the child ended (src/worker/pause.ts), not when the result could be written, and
        // from the stored start plus the monotonic time elapsed: a wall clock set back or forward while
        // the job ran does not change its duration (docs/architecture.md "Clocks").
        const endedAt = claimed.startedAt + Math.max(0, ended - started) / 1000;
        ends.push({
          ref: {
            jobId: claimed.job.id,
            attemptNo: claimed.attemptNo,
            workerId: this.opts.workerId,
            stderrLastLine,
            process: group,
          },
          end,
          endedAt,
        });
      }
      // The slots these attempts free are claimed again in the results' own commit when the store can:
      // one commit per job while the lane has work (docs/architecture.md "The claim").
      const room = this.opts.concurrency - (this.inFlight.size - batch.length);
      // Undated, like the loop's claims: dated when it runs, after the result's waits for locks.
      const lane = this.lanes.claimable()[0];
      const claim =
        room > 0 && lane !== undefined && this.mayClaimWithResult() ? { ...this.claimant(lane), limit: room } : null;
      claimNs = sharedClockNs();
      if (claim === null) outcomes = await this.retryLocked(() => recordAttemptEnds(this.store, ends));
      else
        ({ outcomes, claimed: next } = await this.retryLocked(() =>
          recordAttemptEndsAndClaim(this.store, ends, claim),
        ));
    } catch (error) {
      // A damaged file ends the worker (giveUp); its results stay unrecorded, left to the file's next reader.
      if (isDamage(error)) this.giveUp(error);
      else if (!isTransient(error)) throw error;
      this.storage.recordFailed();
      for (const { claimed } of batch)
        this.say(`cannot record job ${claimed.job.id} attempt ${claimed.attemptNo} yet: ${error.message}`);
      return false;
    }
    this.storage.recordSucceeded();
    batch.forEach(({ claimed, started, ended }, i) => {
      const { job, attemptNo } = claimed;
      const outcome = outcomes[i]!;
      this.inFlight.delete(flightKey(claimed));
      this.summary.executed++;
      this.summary.job_ids.push(job.id);
      if (outcome === null) {
        this.emit({ type: "lost", jobId: job.id, attemptNo });
      } else {
        if (outcome.jobState === "done") this.summary.succeeded++;
        else this.summary.failed++;
        this.emit({
          type: "finished",
          jobId: job.id,
          attemptNo,
          argv: job.argv,
          outcome,
          seconds: (ended - started) / 1000,
        });
      }
    });
    if (next !== null && next.length > 0) {
      this.summary.claimed = true;
      this.renewedAt = performance.now(); // a claim writes the lease of what it claims
      for (const c of next) await this.start(c, claimNs);
      this.tellWatchdog(claimNs);
    }
    return true;
  }

  /** Who claims from `lane`, for the loop's claims and a result's. */
  private claimant(lane: string): Claimant {
    const { opts } = this;
    return {
      queue: lane,
      workerId: opts.workerId,
      workerPid: process.pid,
      workerStartTime: OWN_START_TIME,
      slots: opts.slots,
    };
  }

  /** Whether a result may claim the slot it frees in its own commit: whenever the loop itself would claim. */
  private mayClaimWithResult(): boolean {
    return (
      !this.stopping &&
      !this.interrupted &&
      this.opts.mode !== "once" &&
      this.unrecorded.length === 0 &&
      !this.claimUncertain &&
      !this.storage.claimPaused()
    );
  }

  /** Retries the results that could not be written, all in one commit, when their back-off allows. */
  private async recordPending(): Promise<void> {
    if (this.unrecorded.length === 0 || !this.storage.mayRetryRecord()) return;
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
        this.say(error.message);
      }
    }
  }
}

/** Longest pause before a claim after claims that found nothing, milliseconds. */
const MAX_CLAIM_JITTER_MS = 16;
/** Empty claims closer together than this count as one streak, milliseconds. */
const EMPTY_STREAK_MS = 200;

/** How long a worker told once to stop still tries to write results a full disk holds up, milliseconds. */
const UNRECORDED_STOP_GRACE_MS = 3000;

/** How long a drain has nothing to run before it says what it waits for, milliseconds. */
const DRAIN_QUIET_MS = 2000;

/** How often the loop reads its registry row for a `spoolctl stop`, milliseconds. */
const STOP_CHECK_MS = 250;

/** This process's start time, recorded on every attempt it claims (docs/architecture.md "Reaping"). */
const OWN_START_TIME = processStartTime(process.pid);

/** An attempt whose process ended, with when it started and ended (performance.now(), ms). */
interface Ended {
  claimed: ClaimedAttempt;
  end: ProcessEnd;
  started: number;
  ended: number;
}

/** The in-flight key of an attempt. */
function flightKey(claimed: ClaimedAttempt): string {
  return `${claimed.job.id}:${claimed.attemptNo}`;
}

/** Whether a failure is a damaged queue file (`QUEUE_CORRUPT`): never waited out, it ends the worker. */
function isDamage(error: unknown): error is SpoolError {
  return error instanceof SpoolError && error.code === "QUEUE_CORRUPT";
}

/** Whether a failure is one a worker waits out: a held lock, a full disk, an I/O error. */
function isTransient(error: unknown): error is SpoolError {
  return error instanceof SpoolError && (error.code === "LOCKED" || error.detail?.storage !== undefined);
}
