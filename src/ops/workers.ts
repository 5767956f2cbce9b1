/**
 * The workers registry as operators see it (`workers`, `stop`; docs/architecture.md
 * "Heartbeat and lease", "Graceful stop"): who is
 * live, what each runs, and asking workers to stop through the registry.
 */

import { SpoolError } from "../contract/errors.ts";
import type { WorkerRecord } from "../store/model.ts";
import type { SnapshotReader, Store, StoreReader } from "../store/store.ts";
import { mapInOrder } from "./in-order.ts";

/**
 * How a registry row is judged (docs/architecture.md "Dead workers in the
 * views"): `live`; `stale` (heartbeat older than 3 intervals but within the
 * lease, or a process of this host that lives: stopped with SIGSTOP, or
 * stuck); `lease_expired` (its lease expired by the queue's clock and its process
 * cannot be seen alive: another host's worker, as the reaper judges it);
 * `stopped` (exited cleanly) or `dead` (confirmed gone on this host).
 */
export type WorkerStatus = "live" | "stale" | "lease_expired" | "stopped" | "dead";

/** One worker as `workers --json` reports it; times are epoch seconds. */
export interface WorkerView {
  worker_id: string;
  pid: number;
  host: string;
  queue: string;
  status: WorkerStatus;
  started_at: number;
  heartbeat_at: number;
  stopped_at: number | null;
  stop_requested: boolean;
  running_jobs: number[];
}

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

/** {@link listWorkers} in one snapshot. */
export function workersOf(
  store: SnapshotReader,
  judge: JudgeWorker,
  limit = 100,
  stale?: StaleAfter,
): Promise<WorkerView[]> {
  return store.read((tx) => listWorkers(tx, judge, limit, stale));
}

/**
 * What `stop --wait` polls, in one snapshot: the registry's views and its raw
 * rows (a worker marks itself stopped just before it exits).
 */
export function stopProgress(
  store: SnapshotReader,
  judge: JudgeWorker,
  stale: StaleAfter,
): Promise<{ views: WorkerView[]; records: WorkerRecord[] }> {
  return store.read(async (tx) => ({
    views: await listWorkers(tx, judge, 10000, stale),
    records: await tx.listWorkers(10000),
  }));
}

/** Lists registry rows, newest heartbeat first, with their running jobs; with `stale`, a silent worker is `stale` or `lease_expired`. */
export async function listWorkers(
  tx: StoreReader,
  judge: JudgeWorker,
  limit = 100,
  stale?: StaleAfter,
): Promise<WorkerView[]> {
  const running = new Map<string, number[]>();
  for (const { worker_id, job_id } of await tx.runningJobsByWorker()) {
    const list = running.get(worker_id);
    if (list)
      list.push(job_id); // push, not copy: one worker may run thousands of jobs
    else running.set(worker_id, [job_id]);
  }
  return (await tx.listWorkers(limit)).map((w) => ({
    worker_id: w.worker_id,
    pid: w.pid,
    host: w.host,
    queue: w.queue,
    status: w.stopped_at !== null ? "stopped" : judgeStatus(w, judge(w), stale),
    started_at: w.started_at,
    heartbeat_at: w.heartbeat_at,
    stopped_at: w.stopped_at,
    stop_requested: w.stop_requested,
    running_jobs: running.get(w.worker_id) ?? [],
  }));
}

/**
 * Asks live workers to finish their running jobs and exit (one, or every live
 * one when `workerId` is null). A worker whose lease expired on another host
 * (`stale` given) is not asked: it will never answer. Raises `NOT_FOUND` for
 * an unknown, stopped or dead id.
 */
export async function requestStop(
  store: Store,
  workerId: string | null,
  judge: JudgeWorker,
  stale?: StaleAfter,
): Promise<string[]> {
  return await store.write(async (tx) => {
    // A stale worker (stopped, stuck) still reads the request when it resumes.
    const live = (await listWorkers(tx, judge, 10000, stale)).filter(
      (w) => (w.status === "live" || w.status === "stale") && (workerId === null || w.worker_id === workerId),
    );
    const ids = (await mapInOrder(live, (w) => tx.requestWorkerStop(w.worker_id))).flat();
    if (workerId !== null && ids.length === 0) {
      throw new SpoolError("NOT_FOUND", `no running worker with id ${JSON.stringify(workerId)}`, {
        remediation: "run: spoolctl workers  (to see worker ids)",
      });
    }
    return ids;
  });
}
