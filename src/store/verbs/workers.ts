/**
 * The workers registry as operators see it (docs/architecture.md "The
 * operations", "Reads"; "Dead workers in the views", "Graceful stop"): the
 * `workers` list, what `stop --wait` polls, and the `stop` request itself.
 */
import { SpoolError } from "../../contract/errors.ts";
import type { WorkerRecord } from "../../model/job.ts";
import { type JudgeWorker, type StaleAfter, type WorkerView, workerViews } from "../../ops/workers.ts";
import type { StoreReader } from "../reader.ts";
import type { SnapshotReader, Store } from "../store.ts";

/**
 * Registry rows, newest heartbeat first (at most `limit`), with their running
 * jobs and status (`workerViews` of src/ops/workers.ts), read inside the
 * caller's transaction: two statements (a helper only verbs import).
 */
export async function listWorkers(
  tx: StoreReader,
  judge: JudgeWorker,
  limit = 100,
  stale?: StaleAfter,
): Promise<WorkerView[]> {
  const running = await tx.runningJobsByWorker();
  return workerViews(running, await tx.listWorkers(limit), judge, stale);
}

/**
 * The registry's rows, newest heartbeat first (at most `limit`), each with its
 * running jobs and status; with `stale`, a silent worker is `stale` or
 * `lease_expired`. One read snapshot: no guard, no event, no wake.
 */
export function workerList(
  store: SnapshotReader,
  judge: JudgeWorker,
  limit = 100,
  stale?: StaleAfter,
): Promise<WorkerView[]> {
  return store.read((tx) => listWorkers(tx, judge, limit, stale));
}

/**
 * What `stop --wait` polls, in one read snapshot: the registry's views and its
 * raw rows (a worker marks itself stopped just before it exits). No guard, no
 * event, no wake.
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

/**
 * Asks live workers to finish their running jobs and exit (`workerId`, or every
 * live one when null); returns the ids asked. One write transaction: the
 * registry is read and each chosen row gets `stop_requested` (its guard: the
 * row is not stopped, in the statement). A worker whose lease expired on
 * another host (`stale` given) is not asked: it will never answer; a `stale`
 * one is (it reads the request when it resumes). No event; no wake signal (a
 * worker reads the flag at its next heartbeat). Raises `NOT_FOUND` for an
 * unknown, stopped or dead `workerId`.
 */
export async function stopWorkers(
  store: Store,
  workerId: string | null,
  judge: JudgeWorker,
  stale?: StaleAfter,
): Promise<string[]> {
  return await store.write(async (tx) => {
    const live = (await listWorkers(tx, judge, 10000, stale)).filter(
      (w) => (w.status === "live" || w.status === "stale") && (workerId === null || w.worker_id === workerId),
    );
    // One statement per worker chosen: the choice rests on process look-ups SQL cannot make.
    const ids: string[] = [];
    for (const w of live) ids.push(...(await tx.requestWorkerStop(w.worker_id)));
    if (workerId !== null && ids.length === 0) {
      throw new SpoolError("NOT_FOUND", `no running worker with id ${JSON.stringify(workerId)}`, {
        remediation: "run: spoolctl workers  (to see worker ids)",
      });
    }
    return ids;
  });
}
