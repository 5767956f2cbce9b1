/**
 * What holds a drain open when its worker has nothing to run (docs/architecture.md
 * "Drain"): the lane's running jobs, which are other workers' (the drain has none
 * of its own in flight).
 */
import type { Store } from "../store/store.ts";
import { drainHolders } from "../store/verbs/worker-lanes.ts";
import type { WorkerEvent } from "./api.ts";

/**
 * The `drain_waiting` event for `queue`: its first three running jobs, each with
 * its worker's host and how long the worker has been silent (seconds, on the
 * queue's clock); `reapThreshold` (seconds) is said on a queue shared by hosts,
 * where a silent worker's job is reaped by lease. Null when nothing runs.
 */
export async function whatHoldsTheDrain(
  store: Store,
  queue: string,
  reapThreshold: number,
): Promise<Extract<WorkerEvent, { type: "drain_waiting" }> | null> {
  const running = await drainHolders(store, queue, 3);
  if (running.length === 0) return null;
  const at = store.now();
  return {
    type: "drain_waiting",
    queue,
    leaseSeconds: store.shipsOutput ? reapThreshold : null,
    running: running.map(({ job, worker }) => ({
      jobId: job.id,
      workerId: job.locked_by,
      host: worker?.host ?? null,
      silentSeconds: Math.max(0, at - (job.heartbeat_at ?? at)),
    })),
  };
}
