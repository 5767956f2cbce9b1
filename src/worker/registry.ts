/**
 * The workers registry (docs/architecture.md "Heartbeat and lease"): a `work` process registers its
 * identity (host, PID, process start time, boot id) so that reapers can judge
 * its liveness, heartbeats, and reads stop requests from `spoolctl stop`.
 */
import { SpoolError } from "../contract/errors.ts";
import type { WorkerRecord } from "../store/model.ts";
import type { Store } from "../store/store.ts";
import { bootId, HOST, judge, type ProcessIdentity, processStartTime } from "./liveness.ts";
import { type ReapedJob, reapJobsOfDeadWorker } from "./reaper.ts";

/** A fresh worker id: `w-<pid>-<4 hex>`. */
export function newWorkerId(): string {
  return `w-${process.pid}-${Buffer.from(crypto.getRandomValues(new Uint8Array(2))).toString("hex")}`;
}

/** Whether registry row `row` describes this very process (a worker re-registering itself). */
function isSelf(row: WorkerRecord): boolean {
  return (
    row.host === HOST &&
    row.pid === process.pid &&
    row.start_time === processStartTime(process.pid) &&
    row.boot_id === bootId()
  );
}

/**
 * The registry row's process as last registered under `workerId`, judged:
 * null when there is none, it is this process, or it stopped and is not
 * confirmed dead; its identity when it is confirmed dead (stopped or not);
 * `CONFLICT` when it has not stopped and lives (or cannot be judged: another
 * host, an inconclusive look-up). A restarted container's
 * worker often has the same id and the same PID (1) as the one that died: the
 * start time tells them apart (docs/architecture.md "Reaping").
 */
function deadPredecessor(workerId: string, row: WorkerRecord | null): ProcessIdentity | null {
  if (!row || isSelf(row)) return null;
  const who = { host: row.host, pid: row.pid, bootId: row.boot_id, startTime: row.start_time };
  // A row marked stopped may still have running jobs: a worker that exited with results it could not write.
  if (judge(who) === "dead") return who;
  if (row.stopped_at !== null) return null;
  throw new SpoolError("CONFLICT", `worker id ${workerId} is held by a live worker (pid ${row.pid} on ${row.host})`, {
    remediation: "choose another --worker-id, or stop that worker first (spoolctl stop --worker-id ID)",
  });
}

/**
 * Registers this process as `workerId` serving `queue`. Raises `CONFLICT` when a
 * live worker already holds that id. When the id's previous holder is
 * confirmed dead, its running jobs are reaped first (orphans killed, attempts
 * `abandoned`), before its registry row is replaced: once the row describes
 * this process, nothing would speak for the dead one's jobs any more. Returns
 * the jobs reaped.
 */
export async function registerWorker(
  store: Store,
  workerId: string,
  queue: string,
  now = store.now(),
): Promise<ReapedJob[]> {
  const before = deadPredecessor(workerId, await store.read(async (tx) => tx.getWorker(workerId)));
  const reaped = before ? await reapJobsOfDeadWorker(store, workerId, before, workerId) : [];
  await store.write(async (tx) => {
    // Judged again inside the write: another process may have registered meanwhile.
    const row = await tx.getWorker(workerId);
    const dead = deadPredecessor(workerId, row);
    if (dead && (dead.pid !== before?.pid || dead.startTime !== before.startTime)) {
      throw new SpoolError("CONFLICT", `worker id ${workerId} was taken by another process while this one registered`, {
        remediation: "start the worker again, or choose another --worker-id",
      });
    }
    await tx.upsertWorker({
      worker_id: workerId,
      pid: process.pid,
      host: HOST,
      boot_id: bootId(),
      start_time: processStartTime(process.pid),
      queue,
      started_at: now,
      heartbeat_at: now,
      stop_requested: false,
      stopped_at: null,
    });
  });
  return reaped;
}
