/**
 * The lane operations (docs/architecture.md "Lanes and slots"): pause,
 * resume, and a fleet-wide slot ceiling, each one write transaction that
 * also counts the lane's jobs for the answer.
 */

import type { LaneCount } from "../../model/job.ts";
import { type LaneSetData, type PauseData, pauseInForce, type ResumeData, workerLanes } from "../../ops/lanes.ts";
import type { StoreReader } from "../reader.ts";
import type { Store } from "../store.ts";

/**
 * Pauses lane `queue` from now on (`pause`), for `forSeconds` seconds (null:
 * until resumed), on the queue's clock (the database's on PostgreSQL). One
 * write transaction: the `pauseLane` upsert of the lane's row, then its
 * queued and running counts. Guard: the claim statement reads the row, so no
 * claim of the lane on any host takes a job once this commits (PostgreSQL:
 * the upsert waits for the claims holding the row). Running jobs go on.
 * Writes no ledger row; wakes every worker.
 */
export async function pauseLane(
  store: Store,
  queue: string,
  forSeconds: number | null,
  reason: string | null,
): Promise<PauseData> {
  const now = store.now();
  return await store.write(async (tx) => {
    const { known, counts } = await lanesInUse(tx);
    const before = (await tx.listLanes()).find((l) => l.queue === queue);
    const row = await tx.pauseLane(queue, now, forSeconds === null ? null : now + forSeconds, reason);
    const { queued, running } = countsOf(counts, queue);
    return {
      queue,
      paused_at: row.paused_at ?? now,
      paused_until: row.paused_until,
      reason: row.pause_reason,
      running,
      queued,
      replaced:
        before && pauseInForce(before, now) ? { reason: before.pause_reason, paused_until: before.paused_until } : null,
      unknown_lane: known.has(queue) ? null : { lanes_in_use: [...known].sort() },
    };
  });
}

/**
 * Ends lane `queue`'s pause (`resume`): one write transaction, the
 * `resumeLane` UPDATE then the lane's queued count; `was_paused` says whether
 * a pause was in force at the queue's clock (false: nothing changed). Writes
 * no ledger row; wakes every worker.
 */
export async function resumeLane(store: Store, queue: string): Promise<ResumeData> {
  return await store.write(async (tx) => {
    const was = await tx.resumeLane(queue, store.now());
    return { queue, was_paused: was !== null, queued: countsOf(await tx.countByStateAndLane(), queue).queued };
  });
}

/**
 * Sets (or, null, clears) lane `queue`'s fleet-wide ceiling of running jobs
 * (`lane set --slots`): one write transaction, the `setLaneSlots` upsert then
 * the lane's running count. Every later claim reads the ceiling in its own
 * statement. Writes no ledger row; wakes every worker.
 */
export async function setLaneSlots(store: Store, queue: string, slots: number | null): Promise<LaneSetData> {
  return await store.write(async (tx) => {
    const { known, counts } = await lanesInUse(tx);
    const row = await tx.setLaneSlots(queue, slots);
    return {
      queue,
      slots: row.slots,
      running: countsOf(counts, queue).running,
      unknown_lane: slots === null || known.has(queue) ? null : { lanes_in_use: [...known].sort() },
    };
  });
}

/**
 * The lanes something names, read in the caller's transaction: jobs of any state, a lane
 * setting, or a registered worker's lanes (`--all-lanes` names none). A pause or a ceiling for
 * a lane outside them is likely a typo, said as `LANE_UNKNOWN`.
 */
async function lanesInUse(tx: StoreReader): Promise<{ known: Set<string>; counts: LaneCount[] }> {
  const counts = await tx.countByStateAndLane();
  const lanes = new Set(counts.map((c) => c.queue));
  for (const l of await tx.listLanes()) lanes.add(l.queue);
  for (const w of await tx.listWorkers(1000)) {
    const served = workerLanes(w.queue);
    if (served !== "all") for (const l of served) lanes.add(l);
  }
  return { known: lanes, counts };
}

/** Queued and running jobs of one lane, from the counts by state and lane. */
function countsOf(counts: LaneCount[], queue: string): { queued: number; running: number } {
  const n = (state: string) => counts.find((c) => c.queue === queue && c.state === state)?.n ?? 0;
  return { queued: n("queued"), running: n("running") };
}
