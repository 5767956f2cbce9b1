/**
 * The workers registry (docs/architecture.md "Heartbeat and lease", "A
 * stopped worker"): a worker's own row — registered, read for a stop request,
 * marked stopped — and the look-up of an id's previous holder.
 */
import type { WorkerRecord } from "../../model/job.ts";
import type { StoreReader } from "../reader.ts";
import type { Store } from "../store.ts";

/** The process a worker registers: its row without the times and flags the registration sets. */
export type WorkerIdentity = Omit<WorkerRecord, "started_at" | "heartbeat_at" | "stop_requested" | "stopped_at">;

/**
 * Registers `worker` (its row replaced: started and heartbeat now by the
 * queue's clock, no stop requested, not stopped), in one durable write
 * transaction. Guard: `mayReplace` is called inside the transaction with the
 * row found under the id at write time and the queue's clock (epoch seconds),
 * and raises (`CONFLICT`) when another process registered or lives there
 * meanwhile; then nothing is written. Writes no ledger row; signals nothing.
 * Raises like {@link Store.write}.
 */
export async function registerWorker(
  store: Store,
  worker: WorkerIdentity,
  mayReplace: (current: WorkerRecord | null, now: number) => void,
): Promise<void> {
  await store.write(async (tx) => {
    mayReplace(await tx.getWorker(worker.worker_id), store.now());
    await tx.upsertWorker({
      ...worker,
      started_at: store.now(),
      heartbeat_at: store.now(),
      stop_requested: false,
      stopped_at: null,
    });
  });
}

/** The row registered under a worker id, and the newest lease of the running jobs its process claimed. */
export interface WorkerIdHolder {
  row: WorkerRecord | null;
  /** Newest `heartbeat_at` (else `locked_at`) of the running jobs of the id claimed by `row.pid`, epoch seconds; null: none. */
  jobBeat: number | null;
}

/**
 * Who holds `workerId` (docs/architecture.md "Heartbeat and lease"): its
 * registry row and the newest lease among the running jobs its process
 * claimed (a job claimed after its last heartbeat), one read snapshot.
 */
export async function workerIdHolder(store: Store, workerId: string): Promise<WorkerIdHolder> {
  return await store.read(async (tx) => {
    const row = await tx.getWorker(workerId);
    return { row, jobBeat: row ? await latestJobBeat(tx, workerId, row.pid) : null };
  });
}

/** The newest lease (epoch seconds) among the running jobs of `workerId` claimed by process `pid`, or null. */
async function latestJobBeat(tx: StoreReader, workerId: string, pid: number): Promise<number | null> {
  const ids = (await tx.runningJobsByWorker()).filter((r) => r.worker_id === workerId).map((r) => r.job_id);
  if (ids.length === 0) return null;
  const jobs = await tx.listJobs({ ids, states: ["running"], limit: ids.length });
  const beats = jobs.filter((j) => j.locked_pid === pid).map((j) => j.heartbeat_at ?? j.locked_at ?? 0);
  return beats.length === 0 ? null : Math.max(...beats);
}

/**
 * Whether `spoolctl stop` asked worker `workerId` to finish and exit
 * (docs/architecture.md "Graceful stop"): its row's `stop_requested`, one read
 * snapshot; false when it has no row.
 */
export async function stopRequested(store: Store, workerId: string): Promise<boolean> {
  return (await store.read(async (tx) => tx.getWorker(workerId)))?.stop_requested ?? false;
}

/**
 * Marks worker `workerId` stopped (it exited cleanly) at the queue's clock,
 * one write transaction, not synced on its own (docs/architecture.md
 * "Durability"). No guard (its own row); writes no ledger row; signals nothing.
 */
export async function workerStopped(store: Store, workerId: string): Promise<void> {
  await store.write(async (tx) => tx.markWorkerStopped(workerId, store.now()), { durable: false });
}
