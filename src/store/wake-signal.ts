/**
 * The waiting half of every driver's {@link Waker} (docs/architecture.md
 * "Waking"): `fire()` wakes the pending `wait` at once, or, when nobody waits,
 * makes the next `wait` return at once (a commit seen between two waits is
 * never lost); `wait(ms)` otherwise resolves after `ms` (the poll).
 */
export class WakeSignal {
  private pending: (() => void) | null = null;
  private dirty = false;
  /** Once set, every wait returns at once. */
  closed = false;

  /** Wakes the waiter now, or the next wait. */
  readonly fire = (): void => {
    if (this.pending) {
      const resolve = this.pending;
      this.pending = null;
      resolve();
    } else this.dirty = true;
  };

  /** Resolves at the next {@link fire} or after `ms` milliseconds, whichever is first. */
  wait(ms: number): Promise<void> {
    if (this.dirty || this.closed) {
      this.dirty = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.pending = null;
        resolve();
      }, ms);
      this.pending = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
