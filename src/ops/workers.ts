/**
 * The workers registry as operators see it (`workers`, `stop`; docs/architecture.md
 * "Heartbeat and lease", "Graceful stop"): how a row is judged live, and the
 * views of the rows a verb read. The reads and the stop request are
 * operations of src/store/verbs/workers.ts.
 */

import type { WorkerView } from "../describe/schemas-rows.ts";
import type { WorkerRecord } from "../model/job.ts";

/**
 * How a registry row is judged (docs/architecture.md "Dead workers in the
 * views"): `live`; `stale` (heartbeat older than 3 intervals but within the
 * lease, or a process of this host that lives: stopped with SIGSTOP, or
 * stuck); `lease_expired` (its lease expired by the queue's clock and its process
 * cannot be seen alive: another host's worker, as the reaper judges it);
 * `stopped` (exited cleanly) or `dead` (confirmed gone on this host).
 */
type WorkerStatus = WorkerView["status"];

// Defined once, as the JSON Schema `spoolctl schema` prints.
export type { WorkerView };

/** Liveness of a registry row, decided by the caller (process look-ups are I/O). */
export type JudgeWorker = (worker: WorkerRecord) => "alive" | "dead" | "unknown";

/**
 * When a worker's heartbeat is too old to call it live (docs/architecture.md
 * "Dead workers in the views"): `now` (the queue's clock, epoch seconds),
 * `seconds` (older: `stale`) and `leaseSeconds` (older, and not seen alive on
 * this host: `lease_expired`; the reap threshold).
 */
export interface StaleAfter {
  now: number;
  seconds: number;
  leaseSeconds: number;
}

/** The ages at which the views call a worker `stale` or `lease_expired`, from a health context (times in seconds). */
export function staleAfter(health: { now: number; staleSeconds: number; leaseSeconds: number }): StaleAfter {
  return { now: health.now, seconds: health.staleSeconds, leaseSeconds: health.leaseSeconds };
}

/** The status of a row not stopped, from its process verdict and heartbeat age (rule at {@link WorkerStatus}). */
function judgeStatus(w: WorkerRecord, verdict: ReturnType<JudgeWorker>, stale?: StaleAfter): WorkerStatus {
  if (verdict === "dead") return "dead";
  const age = stale ? stale.now - w.heartbeat_at : 0;
  if (stale && age > stale.leaseSeconds && verdict !== "alive") return "lease_expired";
  return stale && age > stale.seconds ? "stale" : "live";
}

/**
 * The views of registry rows (`rows`, newest heartbeat first, as read), each
 * with its running jobs from `running` (one entry per running job and its
 * owner); with `stale`, a silent worker is `stale` or `lease_expired`.
 */
export function workerViews(
  running: readonly { worker_id: string; job_id: number }[],
  rows: readonly WorkerRecord[],
  judge: JudgeWorker,
  stale?: StaleAfter,
): WorkerView[] {
  const byWorker = new Map<string, number[]>();
  for (const { worker_id, job_id } of running) {
    const list = byWorker.get(worker_id);
    if (list)
      list.push(job_id); // push, not copy: one worker may run thousands of jobs
    else byWorker.set(worker_id, [job_id]);
  }
  return rows.map((w) => ({
    worker_id: w.worker_id,
    pid: w.pid,
    host: w.host,
    queue: w.queue,
    status: w.stopped_at !== null ? "stopped" : judgeStatus(w, judge(w), stale),
    started_at: w.started_at,
    heartbeat_at: w.heartbeat_at,
    stopped_at: w.stopped_at,
    stop_requested: w.stop_requested,
    running_jobs: byWorker.get(w.worker_id) ?? [],
  }));
}
