/**
 * A FIFO lock for a store's transactions: one at a time, in call order, so two
 * async operations of one process (a heartbeat timer firing while a claim is
 * open) never interleave inside one transaction or race a read-decide-write
 * callback of their own process (docs/architecture.md "The driver contract").
 */
export class FifoLock {
  private tail: Promise<void> = Promise.resolve();

  /** Runs `fn` once every earlier holder has finished; resolves or rejects with it. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn);
    this.tail = result.then(
      () => {},
      () => {},
    );
    return result;
  }
}
