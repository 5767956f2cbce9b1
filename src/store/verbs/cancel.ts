/**
 * `cancel` (docs/architecture.md "Cancel"): queued jobs become `canceled` at
 * once; a running one, confirmed, gets `cancel_requested`, which its worker
 * reads on its next heartbeat and answers by killing the job's process group.
 */
import { SpoolError, type Warning } from "../../contract/errors.ts";
import { type CanceledJob, cancelWarnings, checkCancel } from "../../ops/cancel.ts";
import type { HealthContext, WorkerHealth } from "../../ops/worker-health.ts";
import type { Job } from "../model.ts";
import type { Store } from "../store.ts";
import type { StoreWriter } from "../writer.ts";
import { resolveUnique } from "./job-refs.ts";
import { jobWorkerHealth } from "./worker-health.ts";

/**
 * Cancels the jobs `refs` name in one write transaction, all or none:
 * resolves and checks each (`checkCancel`: `NOT_FOUND`, `CONFLICT` for a
 * terminal job, `SAFETY_BLOCK` for a running one without `confirmedRunning`,
 * i.e. `--running --yes`; then nothing changed), judges each running job's
 * worker when `health` is given, then, per job: a queued one by
 * `cancelQueuedJob` (guard `state = 'queued'`; its dependents settled by the
 * driver's job-ended hook) with a `canceled` ledger row `{"from":"queued"}`;
 * a running one by `requestCancel` (guard `state = 'running'`) with a
 * `cancel_requested` row, once. A guard that finds the job changed raises
 * `CONFLICT`. A queued job's cancel wakes every worker (freed slots, settled
 * dependents); a requested one wakes none: its worker reads it on its next
 * heartbeat. A running job yields a `KILL_ASYNC` warning:
 * its worker stops it within a heartbeat. `now`: epoch seconds.
 */
export async function cancelJobs(
  store: Store,
  refs: string[],
  confirmedRunning: boolean,
  now = store.now(),
  health?: HealthContext,
): Promise<{ jobs: CanceledJob[]; warnings: Warning[]; health: Map<number, WorkerHealth> }> {
  const judged = new Map<number, WorkerHealth>();
  const jobs = await store.write(async (tx) => {
    const targets = await resolveUnique(tx, refs);
    for (const job of targets) checkCancel(job, confirmedRunning);
    if (health) {
      for (const job of targets) {
        const h = await jobWorkerHealth(tx, job, health);
        if (h) judged.set(job.id, h);
      }
    }
    const out: CanceledJob[] = [];
    for (const job of targets) out.push(await cancelOne(tx, job, now));
    return out;
  });
  return { jobs, warnings: cancelWarnings(jobs, judged), health: judged };
}

/** Cancels one checked job in the caller's transaction (see {@link cancelJobs}). */
async function cancelOne(tx: StoreWriter, job: Job, now: number): Promise<CanceledJob> {
  if (job.state === "queued") {
    if (!(await tx.cancelQueuedJob(job.id, now)))
      throw new SpoolError("CONFLICT", `job ${job.id} changed state while being canceled`);
    await tx.appendEvent(job.id, "canceled", null, JSON.stringify({ from: "queued" }), now);
    return { job_id: job.id, state: "canceled", was_running: false };
  }
  if (!job.cancel_requested) {
    if (!(await tx.requestCancel(job.id)))
      throw new SpoolError("CONFLICT", `job ${job.id} changed state while being canceled`);
    await tx.appendEvent(
      job.id,
      "cancel_requested",
      null,
      JSON.stringify({ attempt: job.last_attempt_no, worker: job.locked_by }),
      now,
    );
  }
  return { job_id: job.id, state: "running", was_running: true };
}
