/**
 * Claiming the next job (SPEC §4 "Claim order"): the store's one claim
 * statement, the attempt row and the `claimed` event, in one transaction.
 */
import type { Job } from "../store/model.ts";
import { attemptOutputPaths } from "../store/spool.ts";
import type { Store } from "../store/store.ts";

/** A job this worker now owns, with the attempt it must run. */
export interface ClaimedAttempt {
  job: Job;
  attemptNo: number;
  stdoutPath: string;
  stderrPath: string;
}

/** Who is claiming, and from which lane. */
export interface Claimant {
  queue: string;
  workerId: string;
  workerPid: number;
  /** Fleet-wide running ceiling of the lane, or null. */
  slots: number | null;
}

/** Claims the next eligible job, or returns null. Raises `LOCKED` under contention. */
export function claimNext(store: Store, who: Claimant, now = Date.now() / 1000): ClaimedAttempt | null {
  return store.write((tx) => {
    const job = tx.claimNext({ ...who, now });
    if (!job) return null;
    const attemptNo = job.last_attempt_no;
    const paths = attemptOutputPaths(store.spoolDir, job.id, attemptNo);
    tx.insertAttempt({
      job_id: job.id,
      attempt_no: attemptNo,
      state: "running",
      worker_id: who.workerId,
      worker_pid: who.workerPid,
      started_at: now,
      stdout_path: paths.stdout,
      stderr_path: paths.stderr,
    });
    tx.appendEvent(job.id, "claimed", who.workerId, `attempt ${attemptNo}`, now);
    return { job, attemptNo, stdoutPath: paths.stdout, stderrPath: paths.stderr };
  });
}
