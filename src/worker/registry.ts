/**
 * The workers registry (docs/architecture.md "Heartbeat and lease"): a `work` process registers its
 * identity (host, PID, process start time, boot id) so that reapers can judge
 * its liveness, heartbeats, and reads stop requests from `spoolctl stop`.
 */
import { SpoolError } from "../contract/errors.ts";
import type { WorkerRecord } from "../model/job.ts";
import type { Store } from "../store/store.ts";
import { registerWorker, workerIdHolder } from "../store/verbs/registry.ts";
import {
  bootId,
  foreignPidSpace,
  HOST,
  judge,
  type ProcessIdentity,
  pidNamespace,
  processStartTime,
  reapableByLease,
} from "./liveness.ts";
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
    row.boot_id === bootId() &&
    (row.pid_ns ?? null) === pidNamespace()
  );
}

/**
 * The previous holder of a worker id: `dead` (confirmed) or `expired` (its
 * lease ran out where it cannot be judged): replaceable; `held`: it cannot be
 * judged and its lease still runs.
 */
interface Predecessor {
  kind: "dead" | "expired" | "held";
  who: ProcessIdentity;
  /** Its last heartbeat, epoch seconds (the queue's clock). */
  heartbeatAt: number;
}

/**
 * The registry row's process as last registered under `workerId`, judged
 * (docs/architecture.md "Heartbeat and lease", "Reaping"): null when there is
 * none, it is this process, or it stopped and is not confirmed dead; `dead`
 * when it is confirmed dead (stopped or not); `expired` when it cannot be
 * judged from here (another host, another PID namespace, an inconclusive
 * look-up) and its heartbeat is older than `expiredBefore` (epoch seconds, the
 * queue's clock): its lease ran out, so the id is free wherever it ran;
 * `held` when it cannot be judged and its lease still runs; `CONFLICT` when
 * it is alive here. A restarted
 * container's worker often has the same id and the same PID (1) as the one
 * that died: the start time and PID namespace tell them apart.
 */
function predecessor(
  workerId: string,
  row: WorkerRecord | null,
  expiredBefore: number,
  sharedQueue: boolean,
): Predecessor | null {
  if (!row || isSelf(row)) return null;
  const who = {
    host: row.host,
    pid: row.pid,
    bootId: row.boot_id,
    startTime: row.start_time,
    pidNs: row.pid_ns ?? null,
  };
  // A row marked stopped may still have running jobs: a worker that exited with results it could not write.
  const verdict = judge(who);
  const heartbeatAt = row.heartbeat_at;
  if (verdict === "dead") return { kind: "dead", who, heartbeatAt };
  if (row.stopped_at !== null) return null;
  // No watchdog guarded its runs (a SQLite worker of the machine's first namespace): its lease proves nothing.
  if (verdict === "unknown" && foreignPidSpace(who) && !reapableByLease(who, sharedQueue))
    throw unguarded(workerId, who);
  if (verdict === "unknown") return { kind: row.heartbeat_at < expiredBefore ? "expired" : "held", who, heartbeatAt };
  throw heldBy(workerId, who);
}

/** `CONFLICT`: `workerId` is held by the live worker `who`; the remediation names `stop` for it. */
function heldBy(workerId: string, who: ProcessIdentity): SpoolError {
  const where = ` on ${who.host}${who.host === HOST && foreignPidSpace(who) ? ", in another PID namespace" : ""}`;
  return new SpoolError("CONFLICT", `worker id ${workerId} is held by a live worker (pid ${who.pid}${where})`, {
    remediation: `choose another --worker-id, or stop that worker first: spoolctl stop --worker-id ${workerId}`,
    detail: { worker_id: workerId, pid: who.pid, host: who.host },
  });
}

/**
 * `CONFLICT`: `workerId` was last held by `who`, a SQLite worker of the
 * machine's first PID namespace seen from another one: it kept no watchdog, so
 * its jobs may run on after it and only a worker of its namespace may judge it
 * (docs/architecture.md "Reaping").
 */
function unguarded(workerId: string, who: ProcessIdentity): SpoolError {
  return new SpoolError(
    "CONFLICT",
    `worker id ${workerId} was last held by pid ${who.pid} on ${who.host}, which cannot be judged from here and kept no watchdog (a SQLite worker outside any container): its jobs may outlive it, so its lease proves nothing`,
    {
      remediation: `start this worker where pid ${who.pid} on ${who.host} can be looked at (outside any container), or choose another --worker-id`,
      detail: { worker_id: workerId, pid: who.pid, host: who.host },
    },
  );
}

/**
 * Waits while `workerId` is `held` (docs/architecture.md "Heartbeat and
 * lease"): a holder that cannot be judged from here but whose lease — its
 * row's, or that of a job it claimed after its last heartbeat — still runs: a
 * container restarted under the same id and host name, whose predecessor is in
 * another PID namespace. It is polled about once a second: a renewed
 * heartbeat means it lives (`CONFLICT`); an expired lease frees the id.
 * `say` is told once what the wait is for. Returns the final judgement.
 */
async function untilNotHeld(
  store: Store,
  workerId: string,
  leaseSeconds: number,
  say: (message: string) => void,
): Promise<Predecessor | null> {
  let seen: number | null = null;
  for (;;) {
    const { row, jobBeat } = await workerIdHolder(store, workerId);
    const judged = predecessor(workerId, row, store.now() - leaseSeconds, store.shipsOutput);
    if (judged?.kind === "expired" && jobBeat !== null && jobBeat >= store.now() - leaseSeconds) judged.kind = "held"; // a job it claimed after its last heartbeat: wait for that lease too
    if (judged?.kind !== "held") return judged;
    if (seen !== null && judged.heartbeatAt !== seen) throw heldBy(workerId, judged.who);
    const left = Math.max(judged.heartbeatAt, jobBeat ?? 0) + leaseSeconds - store.now();
    if (seen === null)
      say(
        `worker id ${workerId} was last held by pid ${judged.who.pid} on ${judged.who.host}, which cannot be judged from here; waiting up to ${Math.ceil(left)}s for its lease to expire (a renewal means it lives: CONFLICT)`,
      );
    seen = judged.heartbeatAt;
    await Bun.sleep(Math.max(10, Math.min(1000, left * 1000 + 10)));
  }
}

/**
 * Registers this process as `workerId` serving `queue`. Raises `CONFLICT` when a
 * live worker already holds that id; waits (bounded by `leaseSeconds`, see
 * {@link untilNotHeld}) while a holder it cannot judge keeps a lease. When the id's previous holder is
 * confirmed dead, or its lease (`leaseSeconds`, by the queue's clock) expired
 * where it cannot be judged, its running jobs are reaped first (orphans
 * killed, attempts `abandoned`; an expired holder's only once their own lease
 * expired), before its registry row is replaced: once the row describes this
 * process, nothing would speak for the old one's jobs any more. Returns the
 * jobs reaped.
 */
export async function registerThisWorker(
  store: Store,
  workerId: string,
  queue: string,
  leaseSeconds: number,
  say: (message: string) => void = () => {},
): Promise<ReapedJob[]> {
  const before = await untilNotHeld(store, workerId, leaseSeconds, say);
  const reaped = before
    ? await reapJobsOfDeadWorker(store, workerId, before.who, workerId, before.kind === "expired" ? leaseSeconds : null)
    : [];
  await registerWorker(
    store,
    {
      worker_id: workerId,
      pid: process.pid,
      host: HOST,
      boot_id: bootId(),
      start_time: processStartTime(process.pid),
      pid_ns: pidNamespace(),
      queue,
    },
    (current, now) => {
      // Judged again inside the write: another process may have registered meanwhile.
      const dead = predecessor(workerId, current, now - leaseSeconds, store.shipsOutput);
      if (
        dead &&
        (dead.kind === "held" || dead.who.pid !== before?.who.pid || dead.who.startTime !== before.who.startTime)
      ) {
        throw new SpoolError(
          "CONFLICT",
          `worker id ${workerId} was taken by another process while this one registered`,
          { remediation: "start the worker again, or choose another --worker-id" },
        );
      }
    },
  );
  return reaped;
}
