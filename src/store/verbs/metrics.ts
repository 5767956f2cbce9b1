/**
 * What one scrape reads (docs/architecture.md "The operations", "Metrics"):
 * the counters kept by the schema's triggers, jobs by lane and state, each
 * lane's earliest due job, workers judged, paused lanes and dead jobs by
 * kind, in one read snapshot on the queue's clock. No guard, no event, no wake.
 */
import type { MetricsSnapshot } from "../../ops/metrics.ts";
import type { HealthContext } from "../../ops/worker-health.ts";
import { type JudgeWorker, staleAfter } from "../../ops/workers.ts";
import type { SnapshotReader } from "../store.ts";
import { pausedLanesIn } from "./lane-reads.ts";
import { listWorkers } from "./workers.ts";

/** The snapshot of one scrape; `version` and `driver` go into `spoolctl_build_info`. */
export function metricsSnapshot(
  store: SnapshotReader,
  judge: JudgeWorker,
  health: HealthContext,
  version: string,
  driver: string,
): Promise<MetricsSnapshot> {
  return store.read(async (tx) => {
    const at = store.now();
    const counts = await tx.metricCounts();
    const jobs = await tx.countByStateAndLane();
    const held = await tx.countHeldByLane();
    const earliestDue: MetricsSnapshot["earliestDue"] = [];
    for (const queue of new Set(jobs.filter((j) => j.state === "queued" && j.n > 0).map((j) => j.queue)))
      earliestDue.push({ queue, next_run_at: await tx.nextDueAt(queue) });
    const workers = (await listWorkers(tx, judge, 1000, staleAfter(health))).map((w) => ({
      host: w.host,
      status: w.status,
    }));
    const pausedLanes = (await pausedLanesIn(tx, at)).map((l) => l.queue);
    const deadKinds = await tx.deadJobKinds();
    return { at, version, driver, counts, jobs, held, earliestDue, workers, pausedLanes, deadKinds };
  });
}
