/**
 * The reaper (SPEC §4 "Reaping", "Orphans"), run by every worker before it
 * claims: a running job with a stale heartbeat is requeued (or dead-lettered)
 * only when its worker is confirmed dead, after its orphaned process group —
 * recognised by PID and start time — has been killed.
 */
import { readFileSync, readdirSync, readlinkSync, realpathSync } from "node:fs";
import { recordAttemptEnd } from "../ops/record.ts";
import type { Outcome } from "../ops/outcome.ts";
import type { Job } from "../store/model.ts";
import type { Store } from "../store/store.ts";
import { killGroup } from "./executor.ts";
import { HOST, judge, processStartTime, type ProcessIdentity } from "./liveness.ts";

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
  if (worker) return { host: worker.host, pid: worker.pid, bootId: worker.boot_id, startTime: worker.start_time };
  if (job.locked_pid === null) return null;
  // No registry row: only the PID is known, so only "gone" can be concluded.
  return { host: HOST, pid: job.locked_pid, bootId: null, startTime: null };
}

/**
 * The process groups of the processes that hold any of `paths` open (Linux:
 * `/proc/PID/fd`). An attempt's output files are its own, so whoever holds them
 * open is that attempt's child or one of its descendants.
 */
function groupsHolding(paths: string[]): number[] {
  if (process.platform !== "linux") return [];
  const targets = new Set<string>();
  for (const path of paths) {
    try {
      targets.add(realpathSync(path));
    } catch {
      // never created: the child never started
    }
  }
  if (targets.size === 0) return [];
  const pgidOf = (pid: string) => {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
  };
  const holds = (pid: string, fd: string) => {
    try {
      return targets.has(readlinkSync(`/proc/${pid}/fd/${fd}`));
    } catch {
      return false; // closed meanwhile
    }
  };
  const own = pgidOf("self");
  const groups = new Set<number>();
  for (const name of readdirSync("/proc")) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    try {
      if (!readdirSync(`/proc/${name}/fd`).some((fd) => holds(name, fd))) continue;
      const pgid = pgidOf(name);
      if (pgid > 1 && pgid !== own) groups.add(pgid);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return [...groups];
}

/**
 * Kills the attempt's process group if it is still the same process (start time
 * matches). When no group was recorded — the worker died between spawning the
 * child and writing its group — the groups holding the attempt's output files
 * open are killed instead, so that the orphan cannot overlap the next run.
 */
async function killOrphan(store: Store, job: Job): Promise<boolean> {
  const attempt = store.read((tx) => tx.getAttempt(job.id, job.last_attempt_no));
  if (!attempt) return false;
  if (!attempt.pgid || attempt.pgid_start_time === null) {
    const groups = groupsHolding([attempt.stdout_path, attempt.stderr_path]);
    await Promise.all(groups.map((pgid) => killGroup(pgid)));
    return groups.length > 0;
  }
  if (processStartTime(attempt.pgid) !== attempt.pgid_start_time) return false;
  await killGroup(attempt.pgid);
  return true;
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
