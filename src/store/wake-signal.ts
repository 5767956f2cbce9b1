/**
 * The waiting half of every driver's {@link Waker} and {@link WorkWaker}
 * (docs/architecture.md "Waking"): `fire()` wakes the pending `wait` at once,
 * or, when nobody waits, makes the next `wait` return at once (a commit seen
 * between two waits is never lost); `wait(ms)` otherwise resolves after `ms`
 * (the poll). `fire("freed")` (a job of the lane ended) wakes only a wait that
 * asked for it, and is otherwise kept for the next wait that does: a worker
 * held back by `--slots` or a drain asks for it, a busy one does not.
 */
import type { WorkWaker } from "./store.ts";

export class WakeSignal {
  private pending: { freed: boolean; resolve: () => void } | null = null;
  private dirty = false;
  private dirtyFreed = false;
  /** Once set, every wait returns at once. */
  closed = false;
  /** Set by {@link fireStop}, cleared by {@link takeStop}. */
  private stopSeen = false;

  /** Wakes the waiter like {@link fire} and remembers that a stop-worthy signal (`all`) came. */
  readonly fireStop = (): void => {
    this.stopSeen = true;
    this.fire();
  };

  /** Whether {@link fireStop} was called since the last call; consumes it. */
  takeStop(): boolean {
    const seen = this.stopSeen;
    this.stopSeen = false;
    return seen;
  }

  /** Wakes the waiter now, or the next wait; "freed" only a waiter that wants it. */
  readonly fire = (kind?: "freed"): void => {
    if (this.pending && (kind === undefined || this.pending.freed)) {
      const { resolve } = this.pending;
      this.pending = null;
      resolve();
    } else if (kind === undefined) this.dirty = true;
    else this.dirtyFreed = true;
  };

  /**
   * Resolves at the next {@link fire} (with `freed`, also a "freed" one) or
   * after `ms` milliseconds, whichever is first. Whatever was fired before
   * the wait returns is consumed by it: the caller reads the queue next.
   */
  wait(ms: number, freed = true): Promise<void> {
    if (this.dirty || (freed && this.dirtyFreed) || this.closed) {
      this.dirty = false;
      this.dirtyFreed = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.pending = null;
        this.dirty = false;
        this.dirtyFreed = false;
        resolve();
      }, ms);
      this.pending = {
        freed,
        resolve: () => {
          clearTimeout(timer);
          this.dirty = false;
          this.dirtyFreed = false;
          resolve();
        },
      };
    });
  }
}

/**
 * The {@link WorkWaker} over `signal`; `release` frees the wake-up source (a watcher, a LISTEN) at close;
 * `hearsWhileBusy`: whether the source signals a busy worker too (see {@link WorkWaker.hearsWhileBusy}).
 */
export function workWaker(signal: WakeSignal, release: () => void = () => {}, hearsWhileBusy = false): WorkWaker {
  return {
    hearsWhileBusy,
    takeStop: () => signal.takeStop(),
    wait: (ms, freed) => signal.wait(ms, freed),
    poke: () => signal.fire(),
    close() {
      signal.closed = true;
      release();
      signal.fire();
    },
  };
}

/** A work waker that only polls (a driver or a place without wake-ups). */
export function pollingWorkWaker(): WorkWaker {
  return workWaker(new WakeSignal());
}

/**
 * What a write transaction made available to workers, signalled after COMMIT
 * (docs/architecture.md "Waking"): `ready` lanes got a job they may claim (a
 * job added, or requeued by a result or a reap), `freed` lanes had a job end
 * (a slot freed; a drain may be settled), `all` wakes every worker of every
 * lane (a retry, a cancel, a stop request: rare operator writes).
 */
export class WorkSignals {
  readonly ready = new Set<string>();
  readonly freed = new Set<string>();
  all = false;

  /** Whether nothing was signalled. */
  get empty(): boolean {
    return !this.all && this.ready.size === 0 && this.freed.size === 0;
  }

  clear(): void {
    this.ready.clear();
    this.freed.clear();
    this.all = false;
  }
}
