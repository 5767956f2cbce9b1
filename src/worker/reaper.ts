/**
 * The reaper (SPEC §4 "Reaping", "Orphans"), run by every worker before it
 * claims: a running job with a stale heartbeat is requeued (or dead-lettered)
 * only when its worker is confirmed dead, after its orphaned process group —
 * recognised by PID and start time — has been killed.
 */
import { recordAttemptEnd } from "../ops/record.ts";
import type { Outcome } from "../ops/outcome.ts";
import type { Job } from "../store/model.ts";
import type { Store } from "../store/store.ts";
import { attemptMarker, killGroup } from "./executor.ts";
import { HOST, groupsWithEnv, judge, processStartTime, type ProcessIdentity } from "./liveness.ts";

/** One reaped job, for the worker's log line. */
export interface ReapedJob {
  jobId: number;
  attemptNo: number;
  workerPid: number | null;
  outcome: Outcome;
  /** Whether an orphaned process group was still running and was killed. */
  killedOrphan: boolean;
}

function identityOf(store: Store, job: Job): ProcessIdentity | null {
  const worker = job.locked_by ? store.read((tx) => tx.getWorker(job.locked_by!)) : null;
  // A registry row under the same --worker-id may describe a later incarnation
  // (a restarted worker): it speaks for this job only if it holds the job's PID.
  if (worker && worker.pid === job.locked_pid) return { host: worker.host, pid: worker.pid, bootId: worker.boot_id, startTime: worker.start_time };
  if (job.locked_pid === null) return null;
  // No registry row: only the PID is known, so only "gone" can be concluded.
  return { host: HOST, pid: job.locked_pid, bootId: null, startTime: null };
}

/**
 * Kills what is left of the attempt: its recorded process group if it is still
 * the same process (start time matches), and every group whose processes carry
 * the attempt's marker variable — which covers a worker that died before it
 * recorded the group, and job processes that left the group with setsid. Then
 * the old run cannot overlap the next one.
 */
async function killOrphan(store: Store, job: Job): Promise<boolean> {
  const attempt = store.read((tx) => tx.getAttempt(job.id, job.last_attempt_no));
  if (!attempt) return false;
  const groups = new Set(groupsWithEnv(attemptMarker(store.path, job.id, job.last_attempt_no)));
  if (attempt.pgid && attempt.pgid_start_time !== null && processStartTime(attempt.pgid) === attempt.pgid_start_time) groups.add(attempt.pgid);
  await Promise.all([...groups].map((pgid) => killGroup(pgid)));
  return groups.size > 0;
}

/**
 * Reaps every running job whose heartbeat is older than `thresholdSeconds` and
 * whose worker is confirmed dead. `reaperId` is recorded on the events.
 */
export async function reapDeadWorkers(store: Store, reaperId: string, thresholdSeconds: number): Promise<ReapedJob[]> {
  const cutoff = Date.now() / 1000 - thresholdSeconds;
  const candidates = store.read((tx) => tx.staleRunningJobs(cutoff));
  const reaped: ReapedJob[] = [];
  for (const job of candidates) {
    const who = identityOf(store, job);
    if (!who || judge(who) !== "dead") continue;
    const killedOrphan = await killOrphan(store, job);
    // Re-checked inside the write transaction: same owner and attempt, still stale.
    const outcome = recordAttemptEnd(
      store,
      { jobId: job.id, attemptNo: job.last_attempt_no, workerId: job.locked_by ?? "", staleBefore: Date.now() / 1000 - thresholdSeconds },
      { kind: "worker_crash", error: `worker ${job.locked_by} (pid ${who.pid}) died` },
      Date.now() / 1000,
      reaperId,
    );
    if (outcome) reaped.push({ jobId: job.id, attemptNo: job.last_attempt_no, workerPid: who.pid, outcome, killedOrphan });
  }
  return reaped;
}
