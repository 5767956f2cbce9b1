/**
 * A worker's side of its watchdog (src/worker/watchdog-main.ts;
 * docs/architecture.md "A stopped worker"): starts the process, tells it of
 * each lease renewal (one line on a pipe per heartbeat) and of each job
 * started and recorded (one line each), starts it again at once if it dies
 * (a lease is renewed only while it lives), and answers whether it ended a
 * given job.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import type { ProcessEnd } from "../ops/outcome.ts";
import type { Store } from "../store/store.ts";
import type { WorkOptions } from "./api.ts";
import { inOwnPidNamespace, pidNamespace, processState } from "./liveness.ts";
import { leaseGuardSeconds, sharedClockNs, type Timing, watchdogGraceSeconds } from "./timing.ts";
import type { WatchdogConfig } from "./watchdog-main.ts";

/** The argument that turns `spoolctl` into a watchdog (src/cli.ts); never typed by a person. */
export const WATCHDOG_ARG = "__spoolctl-watchdog";

/**
 * Whether `argv` (without the program) starts a watchdog: {@link WATCHDOG_ARG}
 * and a config as `work` writes it. Anything else goes to the CLI, which
 * refuses it like any unknown command.
 */
export function isWatchdogCall(argv: string[]): boolean {
  if (argv[0] !== WATCHDOG_ARG || argv.length !== 2) return false;
  try {
    const config = JSON.parse(argv[1]!) as Partial<WatchdogConfig>;
    return Number.isInteger(config.workerPid) && typeof config.renewedNs === "string" && /^\d+$/.test(config.renewedNs);
  } catch {
    return false;
  }
}

/** Least time between two starts of a watchdog that keeps dying, milliseconds. */
const RESTART_PAUSE_MS = 10_000;

/** Settings of a worker's watchdog, times in seconds. */
export interface WatchdogOptions {
  /** The command that runs `runWatchdog` with one more argument, the config (e.g. `bun cli.ts __spoolctl-watchdog`). */
  command: string[];
  workerId: string;
  guardSeconds: number;
  graceSeconds: number;
  recheckSeconds: number;
  /** Folder of the ledger (the spool folder on this host). */
  dir: string;
  say: boolean;
}

/** One worker's watchdog. */
export class Watchdog {
  private proc: Subprocess<"pipe", "ignore", "inherit"> | null = null;
  /** When it was last started again after dying (performance.now(), ms). */
  private lastRestart = -Infinity;
  /** The oldest lease in force as last told, {@link sharedClockNs}. */
  private renewedNs: bigint;
  private closed = false;
  /** The jobs in flight as told (`J` lines by leader PID): told again to a restarted watchdog. */
  private readonly jobs = new Map<number, string>();
  readonly ledger: string;

  /**
   * The watchdog of a worker on `store`, or null: one on a shared queue
   * (PostgreSQL), and on a SQLite file for a worker in a PID namespace of its
   * own (a container: workers of other namespaces on the same volume judge it
   * by its lease, see {@link inOwnPidNamespace}); none for a SQLite worker of
   * the machine's first namespace (a stopped one is never reaped: its PID is
   * looked at), none without `opts.watchdog` (a worker run inside another
   * program), none but on Linux (it reads /proc).
   */
  static forWorker(
    store: Store,
    opts: WorkOptions,
    timing: Timing,
    onTrouble: (message: string) => void,
  ): Watchdog | null {
    if (!opts.watchdog || process.platform !== "linux") return null;
    if (!store.shipsOutput && !inOwnPidNamespace()) return null;
    const settings: WatchdogOptions = {
      ...opts.watchdog,
      workerId: opts.workerId,
      guardSeconds: leaseGuardSeconds(timing),
      graceSeconds: watchdogGraceSeconds(timing),
      recheckSeconds: timing.heartbeat,
      dir: store.spoolDir,
    };
    return new Watchdog(settings, onTrouble);
  }

  constructor(
    private readonly opts: WatchdogOptions,
    private readonly onTrouble: (message: string) => void,
  ) {
    // The namespace in the name: containers that share a SQLite volume share its spool folder, and PIDs.
    this.ledger = join(opts.dir, `watchdog-${pidNamespace() ?? "ns"}-${process.pid}.ended`);
    this.renewedNs = sharedClockNs();
    rmSync(this.ledger, { force: true }); // a PID's earlier worker's
    this.start();
  }

  /** Whether a dead watchdog may be started again now: at once, unless it was started again less than the pause ago. */
  private mayRestart(): boolean {
    return performance.now() - this.lastRestart >= RESTART_PAUSE_MS;
  }

  private restart(): void {
    this.lastRestart = performance.now();
    this.start();
  }

  /**
   * The watchdog `proc` is gone (`how`: its exit code or signal): started
   * again at once, then said; once per process, whichever of its exit and a
   * {@link guarding} look saw it first.
   */
  private died(proc: Subprocess<"pipe", "ignore", "inherit">, how: string): void {
    if (this.closed || this.proc !== proc) return;
    this.proc = null;
    // At once, not at the next renewal: until then nothing would end the jobs of this worker if it stopped.
    // Only one that keeps dying waits out the pause.
    const restart = this.mayRestart();
    // The new one first, then the line: a worker stopped right after saying so is guarded already.
    if (restart) this.restart();
    this.onTrouble(
      `this worker's watchdog exited (${how}); ${restart ? "started it again" : "starting it again within 10s; until then this worker renews no lease"}`,
    );
  }

  private start(): void {
    const config: WatchdogConfig = {
      workerPid: process.pid,
      workerId: this.opts.workerId,
      guardMs: this.opts.guardSeconds * 1000,
      graceMs: this.opts.graceSeconds * 1000,
      recheckMs: this.opts.recheckSeconds * 1000,
      ledger: this.ledger,
      renewedNs: String(this.renewedNs),
      say: this.opts.say,
    };
    try {
      // A session of its own: a Ctrl-Z or Ctrl-C at the worker's terminal does not reach it.
      const proc = Bun.spawn([...this.opts.command, JSON.stringify(config)], {
        stdin: "pipe",
        stdout: "ignore",
        stderr: "inherit",
        detached: true,
      });
      proc.unref(); // the worker's exit does not wait for it: the end of its input ends it
      this.proc = proc;
      for (const line of this.jobs.values()) proc.stdin.write(line);
      proc.stdin.flush();
      void proc.exited.then((code) => this.died(proc, String(code ?? proc.signalCode)));
    } catch (error) {
      this.proc = null;
      this.onTrouble(`cannot start this worker's watchdog: ${(error as Error).message}`);
    }
  }

  /**
   * Tells the watchdog that every lease of this worker started at `ns` or later
   * ({@link sharedClockNs}, which the watchdog reads too, taken before the
   * renewal was sent: never later than the database stamped it).
   */
  renewed(ns: bigint): void {
    if (this.closed) return;
    this.renewedNs = ns;
    this.tell(`R ${ns}\n`);
  }

  /**
   * Whether the watchdog is alive to guard a renewal, starting it again when
   * it died and the restart pause is over. A worker renews its leases only
   * when this is true (docs/architecture.md "A stopped worker": a lease is
   * never renewed without a guard that could end its run).
   */
  guarding(): boolean {
    if (this.closed) return false;
    const proc = this.proc;
    if (proc !== null) {
      if (proc.exitCode === null && proc.signalCode === null) {
        const state = processState(proc.pid);
        if (state !== null && state !== "Z" && state !== "X") return true;
      }
      // Seen gone before its exit was reported (a loaded machine): said all the same.
      this.died(proc, String(proc.signalCode ?? proc.exitCode ?? "killed"));
      return this.proc !== null;
    }
    if (this.mayRestart()) this.restart();
    return this.proc !== null;
  }

  /** Tells the watchdog of a job started: its leader `pid`, start time when known, and attempt marker. */
  jobStarted(pid: number | null, startTime: string | null, marker: string): void {
    if (pid === null || this.closed) return;
    const line = `J ${pid} ${startTime ?? "-"} ${marker}\n`;
    this.jobs.set(pid, line);
    this.tell(line);
  }

  /** Tells the watchdog that the job led by `pid` is recorded: nothing of it is left to end. */
  jobRecorded(pid: number | null): void {
    if (pid === null || !this.jobs.delete(pid)) return;
    this.tell(`E ${pid}\n`);
  }

  private tell(line: string): void {
    if (this.proc === null) {
      if (this.mayRestart()) this.restart();
      return;
    }
    try {
      this.proc.stdin.write(line);
      this.proc.stdin.flush();
    } catch {
      // it died meanwhile: proc.exited starts it again
    }
  }

  /**
   * Whether the watchdog ended the job whose process was `pid` (started at
   * `startTime` when known), after `sinceNs` ({@link sharedClockNs}: the attempt's
   * claim). One `stat` when it never ended anything.
   */
  ended(pid: number | null, startTime: string | null, sinceNs: bigint): boolean {
    if (pid === null || !existsSync(this.ledger)) return false;
    let text: string;
    try {
      text = readFileSync(this.ledger, "utf8");
    } catch {
      return false;
    }
    return text.split("\n").some((line) => {
      const [p, start, at] = line.split(" ");
      return (
        Number(p) === pid && (startTime === null || start === startTime) && at !== undefined && BigInt(at) >= sinceNs
      );
    });
  }

  /** Stops the watchdog: a goodbye (this worker exits, it ends nothing), the end of its input; removes the ledger. */
  close(): void {
    this.closed = true;
    try {
      const proc = this.proc;
      if (proc) {
        proc.stdin.write("B\n");
        proc.stdin.end();
      }
    } catch {
      // gone already
    }
    rmSync(this.ledger, { force: true });
  }
}

/**
 * An attempt's end once the worker's watchdog ended it (docs/architecture.md
 * "A stopped worker"): interrupted, so requeued without charge when the worker
 * still owns the job; a late result otherwise, refused by the fencing. Ends
 * the worker caused itself (timeout, cancel, interrupt) stay as they are.
 */
export function endedByWatchdog(end: ProcessEnd): ProcessEnd {
  if (end.kind !== "exited" && end.kind !== "signaled" && end.kind !== "output_write_failed") return end;
  return {
    kind: "interrupted",
    code: end.kind === "signaled" ? null : end.code,
    signal: end.kind === "exited" ? null : end.signal,
    why: "ended by this worker's watchdog: the worker could not renew its lease (stopped or stuck); requeued without charge",
  };
}
