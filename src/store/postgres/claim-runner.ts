/**
 * Running a claim (claim.ts) with the driver's retries. Conflicts (40001,
 * 40P01) are retried. A lost connection is the hard case: the claim may have
 * committed without our hearing it, and jobs moved to running for a worker
 * that does not know it has them would never be run (their owner is alive, so
 * nobody reaps them) — nor may they be claimed a second time. So after a lost
 * connection the runner asks the database what that claim holds
 * ({@link findClaimed}: the worker's running jobs locked at the claim's
 * `now`) and returns it; only when it holds nothing does it claim again. A
 * claim still uncertain when the retries run out is looked up again before
 * the worker's next claim.
 */
import type { SQL } from "bun";
import { type ClaimedJob, type ClaimRequest, type DatedClaim, datedClaim } from "../attempt-types.ts";
import { claimStatement, findClaimed, lockLane } from "./claim.ts";
import { type ErrorContext, isConflict, isConnectionError, isDriverError, mapPgError } from "./errors.ts";
import { KeptRows } from "./kept-rows.ts";
import { ensureLane } from "./lane-queries.ts";

const CONFLICT_TRIES = 8;
const CONNECTION_TRIES = 3;

/** What a store's claims handed out, and which claims ended uncertain. */
export class ClaimBook {
  private readonly handed = new Set<string>();
  /** Claims whose outcome is unknown (connection lost), oldest first. */
  uncertain: DatedClaim[] = [];
  /** Lanes whose row is known to exist (every claim locks it: claim.ts). */
  readonly ensured = new Set<string>();
  /** Lanes found to have slots of their own (`lane set --slots`): claimed the slotted way from then on. */
  readonly slotted = new Set<string>();
  /** The claimed rows, for results decided without reading them again (kept-rows.ts). */
  readonly kept = new KeptRows();

  /** Whether a claim of `req` runs the slotted way: the claimant's --slots, or the lane's own. */
  isSlotted(req: ClaimRequest): boolean {
    return req.slots !== null || this.slotted.has(req.queue);
  }

  /** Creates the row of `req`'s lane the first time an unslotted claim of this store meets it. */
  async ensureLane(sql: SQL, req: ClaimRequest): Promise<void> {
    if (this.isSlotted(req) || this.ensured.has(req.queue)) return;
    await ensureLane(sql, req.queue);
    this.ensured.add(req.queue);
  }

  /** `job:attempt` pairs already returned (a recovery never returns them again). */
  get handedOut(): Set<string> {
    return this.handed;
  }

  /** Books `req` as a claim that may have committed unheard (the oldest are forgotten past 100). */
  markUncertain(req: DatedClaim): void {
    if (!this.uncertain.includes(req)) this.uncertain.push(req);
    if (this.uncertain.length > 100) this.uncertain.shift();
  }

  /** Books what a claim returned. */
  record(claimed: ClaimedJob[]): void {
    this.kept.keep(claimed);
    for (const c of claimed) this.handed.add(`${c.job.id}:${c.attempt.attempt_no}`);
    if (this.handed.size > 10_000) for (const k of [...this.handed].slice(0, 5_000)) this.handed.delete(k);
  }
}

/** Claims for `req`, retrying conflicts and recovering from lost connections (see above); an undated claim is dated by `now()` as it is sent. */
export async function runClaim(
  sql: SQL,
  req: ClaimRequest,
  now: () => number,
  spoolDir: string,
  channel: string,
  ctx: ErrorContext,
  book: ClaimBook,
): Promise<ClaimedJob[]> {
  let conflicts = 0;
  let lost = 0;
  for (;;) {
    // Dated as it is sent (after the lane lock with --slots), so a wait never backdates its leases.
    let dated: DatedClaim | null = null;
    try {
      // Earlier claims of this worker and lane whose outcome is unknown, this one included after a lost connection.
      for (const earlier of book.uncertain.filter((u) => u.workerId === req.workerId && u.queue === req.queue)) {
        const found = await findClaimed(sql, earlier, book.handedOut);
        book.uncertain = book.uncertain.filter((u) => u !== earlier);
        if (found.length > 0) {
          book.record(found);
          return found;
        }
      }
      await book.ensureLane(sql, req);
      const slotted = book.isSlotted(req);
      const { claimed, laneSlotted } = !slotted
        ? await claimStatement(sql, (dated = datedClaim(req, now)), spoolDir, channel, false)
        : await sql.begin(async (tx) => {
            await lockLane(tx, req.queue);
            return claimStatement(tx, (dated = datedClaim(req, now)), spoolDir, channel, true);
          });
      if (laneSlotted) {
        // The lane has a ceiling of its own (lane set --slots): nothing was claimed; claim again under its lock.
        book.slotted.add(req.queue);
        continue;
      }
      book.record(claimed);
      return claimed;
    } catch (error) {
      if (!isDriverError(error)) throw error;
      if (isConflict(error) && ++conflicts < CONFLICT_TRIES) {
        await Bun.sleep(Math.random() * 5 * conflicts);
        continue;
      }
      if (isConnectionError(error)) {
        if (dated !== null) book.markUncertain(dated); // sent, so perhaps committed
        if (++lost < CONNECTION_TRIES) {
          await Bun.sleep(100 * 3 ** (lost - 1));
          continue;
        }
      }
      throw mapPgError(ctx, error);
    }
  }
}
