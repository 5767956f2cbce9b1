/**
 * A worker's own turns of reaping (docs/architecture.md "Reaping",
 * "Orphans"): the reaper of src/worker/reaper.ts run for the loop, its finds
 * told as worker events, what it cannot do now waited out.
 */
import type { WorkerCore } from "./core.ts";
import { killOrphans, reapDeadWorkers } from "./reaper.ts";

/** A worker's turn of reaping: reaps dead workers' jobs (docs/architecture.md "Reaping"); `certainOnly`: only those of workers certainly dead here. */
export async function reapDeadWorkersNow(w: WorkerCore, certainOnly = false): Promise<void> {
  try {
    for (const reaped of await reapDeadWorkers(w.store, w.opts.workerId, w.timing.reapThreshold, {
      certainOnly,
    })) {
      w.summary.reaped++;
      w.emit({ type: "reaped", reaped });
      for (const pgid of reaped.spared)
        w.emit({ type: "orphan_spared", jobId: reaped.jobId, attemptNo: reaped.attemptNo, pgid });
    }
  } catch (error) {
    w.transient(error);
  }
}

/** Kills what dead workers of this queue left running on this host (docs/architecture.md "Orphans"). */
export async function sweepOrphans(w: WorkerCore): Promise<void> {
  try {
    const { killed, spared } = await killOrphans(w.store);
    if (killed.length > 0) w.emit({ type: "orphans", killed });
    for (const group of spared) w.emit({ type: "orphan_spared", ...group });
  } catch (error) {
    w.transient(error);
  }
}
