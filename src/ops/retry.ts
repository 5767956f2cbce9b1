/**
 * `retry` (SPEC §4 "Retry"): a dead or canceled job goes back to `queued` with a
 * fresh budget (`attempts` and `crashes` reset, history kept) and a `retried`
 * event. A running job only with `--force`: its attempt is closed as canceled
 * and its ownership cleared, so the old worker's late writes change nothing.
 * Several jobs, or every job matching a filter, are requeued in one
 * transaction: all or none.
 */
import { SpoolError } from "../contract/errors.ts";
import type { Job, JobState } from "../store/model.ts";
import type { Store, StoreWriter } from "../store/store.ts";
import { resolveJob } from "./jobs.ts";
import { canTransition } from "./states.ts";

/** One requeued job, as `retry --json` reports it. */
export interface RetriedJob {
  job_id: number;
  state: "queued";
}

/** States `retry --all` may select. */
export const RETRYABLE_STATES = ["dead", "canceled"] as const satisfies readonly JobState[];

/** Which jobs to retry: named ones, or every job matching a filter (`--all`). */
export type RetryTarget =
  | { refs: string[] }
  | { filter: { states: JobState[]; queue?: string; tags: Record<string, string> } };

/** Remediation of a NOT_FOUND job reference in retry and cancel. */
export const JOB_NOT_FOUND_REMEDIATION = "run: spoolctl status  (to list job ids)";

/** Resolves references inside a transaction, dropping duplicates (two refs naming one job). */
export function resolveUnique(tx: StoreWriter, refs: string[]): Job[] {
  const seen = new Map<number, Job>();
  for (const ref of refs) {
    const job = resolveJob(tx, ref, JOB_NOT_FOUND_REMEDIATION);
    if (!seen.has(job.id)) seen.set(job.id, job);
  }
  return [...seen.values()];
}

/** Raises unless `job` may be retried (with `force` for a running job). */
function checkRetry(tx: StoreWriter, job: Job, force: boolean): void {
  if (job.state === "done") {
    throw new SpoolError("CONFLICT", `job ${job.id} is done (it succeeded); retry requeues dead or canceled jobs`, {
      remediation: `to run its command again, add it anew: spoolctl show ${job.id} shows the command; spoolctl add -- CMD ARGS…`,
      detail: { job_id: job.id, state: job.state },
    });
  }
  if (job.state === "queued") {
    throw new SpoolError("CONFLICT", `job ${job.id} is already queued`, {
      remediation: `run a worker (spoolctl work --drain), or wait for it: spoolctl wait ${job.id}`,
      detail: { job_id: job.id, state: job.state },
    });
  }
  if (job.state === "running" && !force) {
    throw new SpoolError("SAFETY_BLOCK", `job ${job.id} is running (attempt ${job.last_attempt_no} on worker ${job.locked_by}); retrying it abandons that attempt while its process may still run`, {
      remediation: `spoolctl retry ${job.id} --force  (or stop it first: spoolctl cancel ${job.id} --running --yes)`,
      detail: { job_id: job.id, state: job.state },
    });
  }
  if (!canTransition(job.state, "queued")) {
    throw new SpoolError("CONFLICT", `job ${job.id} is ${job.state} and cannot be retried`, { detail: { job_id: job.id, state: job.state } });
  }
  if (job.idempotency_key !== null) {
    const holder = tx.findActiveJobByKey(job.idempotency_key);
    if (holder && holder.id !== job.id) {
      throw new SpoolError("CONFLICT", `job ${job.id}'s key ${JSON.stringify(job.idempotency_key)} now belongs to active job ${holder.id}; requeueing both would break the key`, {
        remediation: `wait for job ${holder.id} (spoolctl wait ${holder.id}) or cancel it, then retry job ${job.id}`,
        detail: { job_id: job.id, holder_id: holder.id },
      });
    }
  }
}

/** Requeues one checked job and appends its `retried` event. */
function requeue(tx: StoreWriter, job: Job, now: number): RetriedJob {
  const detail: Record<string, unknown> = { from: job.state };
  if (job.state === "running") {
    // Close the attempt for its worker: its heartbeat and result are then refused
    // (they are guarded by locked_by and last_attempt_no, SPEC §4).
    tx.closeAttempt({
      jobId: job.id,
      attemptNo: job.last_attempt_no,
      state: "canceled",
      failureReason: "canceled",
      error: "abandoned by retry --force",
      now,
    });
    detail.forced = true;
    detail.abandoned_attempt = job.last_attempt_no;
    detail.worker = job.locked_by;
  }
  if (!tx.requeueJob(job.id, job.state, now)) {
    throw new SpoolError("CONFLICT", `job ${job.id} changed state while being retried`, { detail: { job_id: job.id } });
  }
  tx.appendEvent(job.id, "retried", null, JSON.stringify(detail), now);
  return { job_id: job.id, state: "queued" };
}

/**
 * Retries jobs in one `BEGIN IMMEDIATE` transaction. Raises `NOT_FOUND`,
 * `CONFLICT` (done, queued, or key now held by another job), `SAFETY_BLOCK`
 * (running without `force`); then nothing changed.
 */
export function retryJobs(store: Store, target: RetryTarget, opts: { force: boolean }, now = Date.now() / 1000): RetriedJob[] {
  return store.write((tx) => {
    const jobs =
      "refs" in target
        ? resolveUnique(tx, target.refs)
        : tx.listJobs({ ...target.filter, limit: Number.MAX_SAFE_INTEGER }).filter((j) => (RETRYABLE_STATES as readonly string[]).includes(j.state)).reverse();
    for (const job of jobs) checkRetry(tx, job, opts.force);
    return jobs.map((job) => requeue(tx, job, now));
  });
}
