/**
 * Running a store transaction on PostgreSQL, with the driver's retries.
 *
 * Reads run in `REPEATABLE READ READ ONLY` (one snapshot, as Store.read
 * promises), writes and claims in READ COMMITTED (every decision guarded in
 * its statement or by a row lock: queries.ts, claim.ts). The transaction is
 * run again, callback and all (callbacks touch nothing but the transaction):
 *  - on a serialization failure or deadlock (40001, 40P01), a few times;
 *  - on a unique violation of the active-key index (two `add --key` at
 *    once): the second run finds the job the other one added;
 *  - on a lost or refused connection, but only when it failed before the
 *    COMMIT was sent: a COMMIT whose answer was lost may have committed, so
 *    that one is reported (unreachable), not repeated. A session the server
 *    ended for sitting idle in its transaction (25P03: this process was
 *    stopped inside it) rolled back for certain: run again in any case.
 * What still fails is mapped by errors.ts.
 */
import type { SQL } from "bun";
import { SpoolError } from "../../contract/errors.ts";
import {
  type ErrorContext,
  isActiveKeyViolation,
  isConflict,
  isConnectionError,
  isDriverError,
  isSessionTimeout,
  mapPgError,
} from "./errors.ts";
import { TxEffects } from "./events.ts";
import { type KeptUse, StaleRow } from "./kept-rows.ts";
import { PgQueries } from "./queries.ts";

/** Tries of a transaction that keeps hitting serialization failures or deadlocks. */
const CONFLICT_TRIES = 8;
/** Tries of a transaction whose connection failed before it could commit. */
const CONNECTION_TRIES = 3;
/** Tries of a transaction that lost an idempotency-key race. */
const KEY_TRIES = 3;

/**
 * A transaction's kind: a read-only snapshot, a write, or an unsynced write
 * (`synchronous_commit = off` for that commit alone: a worker's result, which
 * acknowledges nothing to anyone; docs/architecture.md "Durability").
 */
export type TxKind = "read" | "write" | "unsynced";

/**
 * Runs `fn` in one transaction of `kind` on `sql`, retrying as described
 * above. `fn` gets the transaction's queries, and for the driver's own
 * statements (PgStore.writeAndClaim) its connection and effects. `last`, when
 * given, issues one statement of its own (it must not await before issuing
 * it): it is sent with the buffered events and the COMMIT, in one round trip.
 * `kept`, when given, lets a result be decided on the row its claim returned
 * (kept-rows.ts); a {@link StaleRow} raised by the callback runs it again.
 *
 * The transaction runs on a reserved connection with BEGIN and COMMIT of our
 * own, so that both travel with other statements (pipelining): BEGIN with the
 * first statement of `fn`, COMMIT with the last ones. A statement that fails
 * in such a batch aborts the transaction, and the COMMIT behind it then rolls
 * back; its error is what is raised.
 */
export async function runTransaction<T>(
  sql: SQL,
  kind: TxKind,
  channel: string | null,
  ctx: ErrorContext,
  fn: (q: PgQueries, tx: SQL, effects: TxEffects) => Promise<T>,
  last?: (tx: SQL) => Promise<unknown>,
  kept: KeptUse | null = null,
): Promise<T> {
  let conflicts = 0;
  let stale = 0;
  let lostConnections = 0;
  let keyRaces = 0;
  for (;;) {
    // Once the COMMIT is sent, a lost connection may have committed: then it is reported, not rerun.
    let commitSent = false;
    try {
      const tx = await sql.reserve();
      try {
        // An unsynced write says so at its BEGIN: one simple query for both (SET LOCAL holds until COMMIT).
        const begin =
          kind === "read"
            ? tx`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`
            : kind === "unsynced"
              ? tx.unsafe("BEGIN; SET LOCAL synchronous_commit = off").simple()
              : tx`BEGIN`;
        begin.catch(() => {}); // sent now, ahead of fn's first statement; its error is raised below
        const writing = kind !== "read";
        const effects = new TxEffects(writing ? channel : null);
        const out = await fn(new PgQueries(tx, effects, writing, kept), tx, effects);
        await begin;
        const tail = [effects.flush(tx), ...(last ? [last(tx)] : [])];
        commitSent = true;
        await Promise.all([...tail, tx`COMMIT`]);
        return out;
      } catch (error) {
        await tx`ROLLBACK`.catch(() => {}); // after a failed statement (or COMMIT) there may be nothing to roll back
        throw error;
      } finally {
        tx.release();
      }
    } catch (error) {
      // Decided on a kept row that had changed (kept-rows.ts): nothing was written; again, that job read afresh.
      if (error instanceof StaleRow && ++stale < CONFLICT_TRIES) continue;
      if (error instanceof SpoolError || !isDriverError(error)) throw error; // the callback's own error, unchanged
      if (isConflict(error) && ++conflicts < CONFLICT_TRIES) {
        await Bun.sleep(Math.random() * 5 * conflicts);
        continue;
      }
      if (isActiveKeyViolation(error) && ++keyRaces < KEY_TRIES) continue;
      const notCommitted = kind === "read" || !commitSent || isSessionTimeout(error);
      if (isConnectionError(error) && notCommitted && ++lostConnections < CONNECTION_TRIES) {
        await Bun.sleep(100 * 3 ** (lostConnections - 1));
        continue;
      }
      throw mapPgError(ctx, error);
    }
  }
}
