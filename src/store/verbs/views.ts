/**
 * Reads of the web view's screens that no verb prints (docs/architecture.md
 * "The web view"): the finished-jobs chart and the dependency graph. Each is
 * one read snapshot; no guard, no event, no wake.
 */
import type { Job } from "../../model/job.ts";
import type { NeedEdge } from "../reader.ts";
import type { SnapshotReader } from "../store.ts";

/** Finished jobs per bucket: `start` in epoch seconds, counts by outcome. */
interface TimelineBucket {
  start: number;
  done: number;
  dead: number;
  canceled: number;
}

/** The chart of {@link finishedTimeline}: `buckets` oldest first, each `bucket_seconds` long, the last ending now. */
export interface Timeline {
  bucket_seconds: number;
  buckets: TimelineBucket[];
}

/**
 * Jobs that ended over the last `spanSeconds` on the queue's clock, in
 * `count` buckets (oldest first), from the jobs' `finished_at` on
 * idx_jobs_finished: a job retried and ended again counts where it ended last.
 */
export function finishedTimeline(store: SnapshotReader, spanSeconds: number, count: number): Promise<Timeline> {
  const bucketSeconds = spanSeconds / count;
  return store.read(async (tx) => {
    const since = store.now() - spanSeconds;
    const buckets: TimelineBucket[] = Array.from({ length: count }, (_, i) => ({
      start: since + i * bucketSeconds,
      done: 0,
      dead: 0,
      canceled: 0,
    }));
    for (const cell of await tx.finishedTimeline(since, bucketSeconds)) {
      const bucket = buckets[Math.min(Number(cell.bucket), count - 1)];
      if (bucket) bucket[cell.state] += Number(cell.n);
    }
    return { bucket_seconds: bucketSeconds, buckets };
  });
}

/** The newest ledger row's id (0 when none): where a live view's cursor starts. */
export function ledgerHead(store: SnapshotReader): Promise<number> {
  return store.read((tx) => tx.lastEventId());
}

/** A dependency graph: its jobs and its edges (`job_id` needs `need_id`). */
export interface NeedGraph {
  jobs: Job[];
  edges: NeedEdge[];
  /** Whether jobs were left out at `maxJobs`. */
  truncated: boolean;
}

/**
 * The needs up and dependents down from `seeds` (job ids), `depth` steps
 * each way, at most `maxJobs` jobs, in one snapshot: for the graph of a job
 * (`seeds` = the job) or a batch (`seeds` = its jobs).
 */
export function needGraph(store: SnapshotReader, seeds: number[], depth: number, maxJobs: number): Promise<NeedGraph> {
  return store.read(async (tx) => {
    const ids = new Set(seeds.slice(0, maxJobs));
    const edges = new Map<string, NeedEdge>();
    let frontier = [...ids];
    let truncated = seeds.length > maxJobs;
    for (let step = 0; step < depth && frontier.length > 0; step++) {
      const next: number[] = [];
      for (const e of await tx.needEdges(frontier)) {
        const edge = { job_id: Number(e.job_id), need_id: Number(e.need_id) };
        for (const id of [edge.job_id, edge.need_id]) {
          if (ids.has(id)) continue;
          if (ids.size >= maxJobs) {
            truncated = true;
            continue;
          }
          ids.add(id);
          next.push(id);
        }
        if (ids.has(edge.job_id) && ids.has(edge.need_id)) edges.set(`${edge.job_id}>${edge.need_id}`, edge);
      }
      frontier = next;
    }
    const jobs = ids.size ? await tx.listJobs({ ids: [...ids], limit: ids.size }) : [];
    return { jobs, edges: [...edges.values()], truncated };
  });
}
