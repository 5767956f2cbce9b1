/**
 * When an attempt ended, as its worker can tell (docs/architecture.md
 * "Timeouts" ... "Clocks": a paused worker). A worker stopped by SIGSTOP or
 * Ctrl-Z (or blocked: a suspended VM, a long synchronous wait) cannot see its
 * children end, because they run on in their own sessions; it learns of the
 * end only when it resumes. Timing the attempt from that moment would count
 * the pause as the job's run time. So the worker looks every
 * {@link TICK_MS}; a gap much longer than that is a window in which it saw
 * nothing. At the first look after such a window, a child found a zombie
 * (ended, not yet waited for) is dated by the kernel: how long ago it last
 * ran, which for a zombie is its exit, read on the clock of the CPU it last ran
 * on (CPUs' clocks may differ by seconds). Where that cannot be read (another
 * OS, the child already waited for), an attempt found ended
 * right after the window is taken to have ended when the window began, the
 * last moment the worker knew it ran: a lower bound of its run time. An
 * attempt still running after the pause keeps the pause in its time (it ran).
 */
import { lastRanAgoMs, processEnded } from "./liveness.ts";

/** How often the worker looks, milliseconds. */
const TICK_MS = 200;
/** A gap between two looks longer than this (beyond the tick) is a pause, milliseconds. */
const PAUSE_GAP_MS = 1000;

/** Watches for pauses of this process; {@link PauseWatch.endedAt} dates an attempt's end. */
export class PauseWatch {
  private lastLook = performance.now();
  private timer: ReturnType<typeof setInterval> | null = null;
  /** Ends found (by PID) at the first look after a pause: the pause's start, performance.now() ms. */
  private readonly foundEnded = new Map<number, number>();

  /** Starts looking; `pids` lists the PIDs of the attempts in flight. */
  start(pids: () => Iterable<number>): void {
    this.timer ??= setInterval(() => this.look(pids()), TICK_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private look(pids: Iterable<number>): void {
    const now = performance.now();
    if (now - this.lastLook > TICK_MS + PAUSE_GAP_MS) {
      for (const pid of pids) {
        if (this.foundEnded.has(pid) || !processEnded(pid)) continue;
        const ago = lastRanAgoMs(pid);
        const at = ago === null ? this.lastLook : performance.now() - ago;
        this.foundEnded.set(pid, Math.min(now, at));
      }
    }
    this.lastLook = now;
  }

  /**
   * When the attempt whose child was `pid` ended (performance.now() ms), called
   * as its end is handled: the start of the pause it ended in, or now.
   */
  endedAt(pid: number | null): number {
    const now = performance.now();
    const found = pid === null ? undefined : this.foundEnded.get(pid);
    if (pid !== null) this.foundEnded.delete(pid);
    if (found !== undefined) return found;
    return now - this.lastLook > TICK_MS + PAUSE_GAP_MS ? this.lastLook : now;
  }
}
