/**
 * The workers registry (docs/architecture.md "Heartbeat and lease"): a `work` process registers its
 * identity (host, PID, process start time, boot id) so that reapers can judge
 * its liveness, heartbeats, and reads stop requests from `spoolctl stop`.
 */
import { SpoolError } from "../contract/errors.ts";
import type { Store } from "../store/store.ts";
import { HOST, bootId, judge, processStartTime } from "./liveness.ts";

/** A fresh worker id: `w-<pid>-<4 hex>`. */
export function newWorkerId(): string {
  return `w-${process.pid}-${Buffer.from(crypto.getRandomValues(new Uint8Array(2))).toString("hex")}`;
}

/**
 * Registers this process as `workerId` serving `queue`. Raises `CONFLICT` when a
 * live worker already holds that id.
 */
export async function registerWorker(store: Store, workerId: string, queue: string, now = store.now()): Promise<void> {
  await store.write(async (tx) => {
    const existing = await tx.getWorker(workerId);
    if (existing && existing.stopped_at === null && existing.pid !== process.pid) {
      const alive = judge({ host: existing.host, pid: existing.pid, bootId: existing.boot_id, startTime: existing.start_time });
      if (alive !== "dead") {
        throw new SpoolError("CONFLICT", `worker id ${workerId} is held by a live worker (pid ${existing.pid} on ${existing.host})`, {
          remediation: "choose another --worker-id, or stop that worker first (spoolctl stop --worker-id ID)",
        });
      }
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
}
