/**
 * The worker's heartbeat as one store operation (docs/architecture.md
 * "Heartbeat and lease"): the registry row and the leases of its running
 * attempts renewed in one transaction, answering whether a stop was asked
 * and, per attempt, whether it is still owned and whether a cancel was asked.
 */
import type { AttemptKey, AttemptLease } from "../attempt-types.ts";
import type { Store } from "../store.ts";

/** What a heartbeat learned. */
export interface HeartbeatAnswer {
  /** `spoolctl stop` asked this worker to finish and exit. */
  stopRequested: boolean;
  /** One per attempt sent that the store still knows; see {@link AttemptLease}. */
  leases: AttemptLease[];
}

/**
 * Renews worker `workerId`'s registry heartbeat and the leases of `attempts`
 * in one write transaction, not durable (a heartbeat acknowledges nothing to
 * anyone: docs/architecture.md "Durability"). The registry row is dated by
 * the queue's clock (epoch seconds); the leases by the store's own (see
 * {@link StoreWriter.heartbeatJobs}). Guard: a lease is renewed (and a
 * process group recorded) only where the UPDATE still finds the attempt
 * running under `workerId`; the others answer `owned: false`. Writes no
 * ledger row; signals nothing. Raises like
 * {@link Store.write} (`LOCKED`, `INTERNAL` with `detail.storage`).
 */
export function heartbeat(store: Store, workerId: string, attempts: AttemptKey[]): Promise<HeartbeatAnswer> {
  return store.write(
    async (tx) => {
      // Independent writes, issued together: PostgreSQL sends both in one round trip (docs/architecture.md "The driver contract").
      const [{ stopRequested }, leases] = await Promise.all([
        tx.heartbeatWorker(workerId, store.now()),
        tx.heartbeatJobs(workerId, attempts),
      ]);
      return { stopRequested, leases };
    },
    { durable: false },
  );
}
