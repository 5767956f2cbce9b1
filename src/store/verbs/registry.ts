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
 * Marks worker `workerId` stopped (it exited cleanly) at the queue's clock,
 * one write transaction, not synced on its own (docs/architecture.md
 * "Durability"). No guard (its own row); writes no ledger row; signals nothing.
 */
export async function workerStopped(store: Store, workerId: string): Promise<void> {
  await store.write(async (tx) => tx.markWorkerStopped(workerId, store.now()), { durable: false });
}

/** What {@link stopsAsked} read: a `spoolctl stop` of the worker, and the attempts whose cancel was asked. */
export interface StopsAsked {
  stopRequested: boolean;
  /** Attempts of `jobIds` still running under the worker whose `cancel_requested` is set. */
  canceled: { jobId: number; attemptNo: number }[];
}

/**
 * Whether worker `workerId` was asked to stop, and which of its running jobs
 * `jobIds` were asked to stop (`cancel --running`, a fail-fast `now`:
 * docs/architecture.md "Cancel"), one read snapshot: its registry row and
 * those jobs by id (the two reads sent together). Read when the worker is
 * woken by an `all` signal, or every 250 ms while it is busy on a store that
 * does not wake busy workers; the heartbeat reads the same requests too.
 */
export async function stopsAsked(store: Store, workerId: string, jobIds: number[]): Promise<StopsAsked> {
  return await store.read(async (tx) => {
    const [worker, jobs] = await Promise.all([
      tx.getWorker(workerId),
      jobIds.length === 0
        ? Promise.resolve([])
        : tx.listJobs({ ids: jobIds, states: ["running"], limit: jobIds.length }),
    ]);
    const canceled = jobs
      .filter((j) => j.cancel_requested && j.locked_by === workerId)
      .map((j) => ({ jobId: j.id, attemptNo: j.last_attempt_no }));
    return { stopRequested: worker?.stop_requested ?? false, canceled };
  });
}
