/**
 * The reaper's operations (docs/architecture.md "Reaping", "Orphans"): the
 * reads that find running jobs whose worker may be gone, each one snapshot
 * with the attempt rows the orphan sweep needs, and the write that requeues
 * or dead-letters such a job. Judging a worker (PID, start time, lease) stays
 * in the worker (`src/worker/reaper.ts`): it looks at this host's processes.
 */

import type { Attempt, Job, WorkerRecord } from "../../model/job.ts";
import type { Outcome } from "../../ops/outcome.ts";
import type { StoreReader } from "../reader.ts";
import type { Store } from "../store.ts";
import { type AttemptRef, recordAttemptEnd } from "./record.ts";

/** A running job the reaper may judge, with its worker's registry row and its current attempt. */
export interface ReapCandidate {
  job: Job;
  /** Whether its lease is older than the threshold asked for. */
  stale: boolean;
  /** Its worker's registry row; null: none (or no owner). */
  worker: WorkerRecord | null;
  /** The attempt `job.last_attempt_no`; null when missing. */
  attempt: Attempt | null;
}

/**
 * The running jobs worth judging, one read snapshot: those whose lease is
 * older than `thresholdSeconds` (judged by the database's clock), and the
 * others whose worker's registry row says `host` (only there can a death be
 * certain before the lease runs out); stale ones first. Statements: the stale
 * jobs, the running jobs by worker, one row per worker, the local jobs (one
 * statement), one attempt per job.
 */
export async function reapCandidates(store: Store, thresholdSeconds: number, host: string): Promise<ReapCandidate[]> {
  return await store.read(async (tx) => {
    const stale = await tx.staleRunningJobs(thresholdSeconds);
    const staleIds = new Set(stale.map((j) => j.id));
    const fresh = (await tx.runningJobsByWorker()).filter((r) => !staleIds.has(r.job_id));
    const ids = [...new Set([...fresh.map((r) => r.worker_id), ...stale.flatMap((j) => j.locked_by ?? [])])];
    const rows = new Map(await Promise.all(ids.map(async (id) => [id, await tx.getWorker(id)] as const)));
    const localIds = fresh.filter((r) => rows.get(r.worker_id)?.host === host).map((r) => r.job_id);
    const local =
      localIds.length === 0 ? [] : await tx.listJobs({ ids: localIds, states: ["running"], limit: localIds.length });
    const jobs = [...stale.map((job) => ({ job, stale: true })), ...local.map((job) => ({ job, stale: false }))];
    const attempts = await Promise.all(jobs.map(({ job }) => tx.getAttempt(job.id, job.last_attempt_no)));
    return jobs.map((c, i) => ({
      ...c,
      worker: c.job.locked_by ? (rows.get(c.job.locked_by) ?? null) : null,
      attempt: attempts[i] ?? null,
    }));
  });
}

/** The running jobs of `workerId` inside `tx`, ids ascending: one statement for the ids, one for the rows. */
async function runningJobsIn(tx: StoreReader, workerId: string): Promise<Job[]> {
  const ids = (await tx.runningJobsByWorker()).filter((r) => r.worker_id === workerId).map((r) => r.job_id);
  if (ids.length === 0) return [];
  const jobs = await tx.listJobs({ ids, states: ["running"], limit: ids.length });
  return jobs.sort((a, b) => a.id - b.id);
}

/**
 * The jobs `workerId` runs as the store sees them (running, locked by it), ids
 * ascending, one read snapshot: for a worker that gives back jobs its lost
 * claim took (docs/architecture.md "The claim").
 */
export async function runningJobsOf(store: Store, workerId: string): Promise<Job[]> {
  return await store.read((tx) => runningJobsIn(tx, workerId));
}

/**
 * The running jobs of `workerId` claimed by process `pid`, ids ascending, each
 * with its current attempt (null: missing), one read snapshot: what a worker
 * registering under a dead holder's id reaps (docs/architecture.md "Reaping").
 */
export async function runningAttemptsOf(
  store: Store,
  workerId: string,
  pid: number,
): Promise<{ job: Job; attempt: Attempt | null }[]> {
  return await store.read(async (tx) => {
    const jobs = (await runningJobsIn(tx, workerId)).filter((j) => j.locked_pid === pid);
    const attempts = await Promise.all(jobs.map((job) => tx.getAttempt(job.id, job.last_attempt_no)));
    return jobs.map((job, i) => ({ job, attempt: attempts[i] ?? null }));
  });
}

/**
 * A job with one of its attempts (`attemptNo`, or its current one when
 * "last") and its owner's registry row (null: no owner, or no row), one read
 * snapshot; null when the job does not exist. For the orphan sweep and a
 * cancel of a job whose worker died (docs/architecture.md "Orphans", "Cancel").
 */
export async function attemptOwner(
  store: Store,
  jobId: number,
  attemptNo: number | "last",
): Promise<{ job: Job; attempt: Attempt | null; worker: WorkerRecord | null } | null> {
  return await store.read(async (tx) => {
    const job = await tx.getJob(jobId);
    if (!job) return null;
    const [attempt, worker] = await Promise.all([
      tx.getAttempt(jobId, attemptNo === "last" ? job.last_attempt_no : attemptNo),
      job.locked_by === null ? null : tx.getWorker(job.locked_by),
    ]);
    return { job, attempt, worker };
  });
}

/**
 * Reaps one attempt whose worker is gone (docs/architecture.md "Reaping"): the
 * `recordAttemptEnd` write (src/store/verbs/record.ts) of a `worker_crash`
 * ending with `error`, by `reaper.reaperId`, dated by the queue's clock now.
 * One write transaction. Guard: the job still running under `ref.workerId` on
 * `ref.attemptNo` and, with `staleBefore` (epoch seconds; null: the death is
 * certain), its lease still older than that. Events: `reaped` (detail
 * `{"attempt", "error", "retry_in"?}`), then `dead` when the crash budget is
 * spent, `canceled` when a cancel was asked; a requeue wakes the lane. Null
 * when the job moved on meanwhile (nothing written).
 */
export async function reap(
  store: Store,
  ref: AttemptRef,
  error: string,
  reaper: { reaperId: string; staleBefore: number | null },
): Promise<Outcome | null> {
  return await recordAttemptEnd(store, ref, { kind: "worker_crash", error }, { kind: "reaper", ...reaper });
}
