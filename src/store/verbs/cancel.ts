/**
 * `cancel` (docs/architecture.md "Cancel"): queued jobs become `canceled` at
 * once; a running one, confirmed, gets `cancel_requested`, which its worker
 * reads on its next heartbeat and answers by killing the job's process group.
 */
import { SpoolError, type Warning } from "../../contract/errors.ts";
import type { Job } from "../../model/job.ts";
import { type CanceledJob, cancelWarnings, checkCancel } from "../../ops/cancel.ts";
import type { HealthContext, WorkerHealth } from "../../ops/worker-health.ts";
import type { Store } from "../store.ts";
import type { StoreWriter } from "../writer.ts";
import { type JobTarget, targetJobs, writeOrDryRun } from "./job-targets.ts";
import { dependentsByRoot } from "./triage-dependents.ts";
import { jobWorkerHealth } from "./worker-health.ts";

/**
 * Cancels the jobs `target` names (references, or every match of a filter:
 * `cancel --all`) in one write transaction, all or none:
 * resolves and checks each (`checkCancel`: `NOT_FOUND`, `CONFLICT` for a
 * terminal job, `SAFETY_BLOCK` for a running one without `confirmedRunning`,
 * i.e. `--running --yes`; then nothing changed), judges each running job's
 * worker when `health` is given, then changes them all with one statement
 * (`cancelMany`): queued ones become `canceled` (guard `state = 'queued'`;
 * their dependents settled by the driver's job-ended hook), each with a
 * `canceled` ledger row `{"from":"queued"}`; running ones get
 * `cancel_requested` (guard `state = 'running'`), with a `cancel_requested`
 * row, once. A job the guard finds changed raises `CONFLICT` (nothing
 * changed: the transaction rolls back). Queued jobs canceled wake every
 * worker (freed slots, settled dependents); a request wakes none: its worker
 * reads it on its next heartbeat. Each queued job canceled lists in `closed`
 * the dependents its end closed (`need_failed`, down the chain;
 * docs/architecture.md "Dependencies"). A running job yields a `KILL_ASYNC` warning:
 * its worker stops it within a heartbeat. `now`: epoch seconds. With
 * `dryRun` the same transaction runs and is rolled back (`cancel --dry-run`).
 */
export async function cancelJobs(
  store: Store,
  target: JobTarget,
  confirmedRunning: boolean,
  now = store.now(),
  health?: HealthContext,
  dryRun = false,
): Promise<{ jobs: CanceledJob[]; warnings: Warning[]; health: Map<number, WorkerHealth> }> {
  const judged = new Map<number, WorkerHealth>();
  const jobs = await writeOrDryRun(store, dryRun, async (tx) => {
    const targets = await targetJobs(tx, target, "cancel");
    for (const job of targets) checkCancel(job, confirmedRunning);
    if (health) {
      for (const job of targets) {
        const h = await jobWorkerHealth(tx, job, health);
        if (h) judged.set(job.id, h);
      }
    }
    return cancelAll(tx, targets, now);
  });
  return { jobs, warnings: cancelWarnings(jobs, judged), health: judged };
}

/** Cancels checked jobs in the caller's transaction, one statement for all (see {@link cancelJobs}). */
async function cancelAll(tx: StoreWriter, targets: Job[], now: number): Promise<CanceledJob[]> {
  const queued = targets.filter((j) => j.state === "queued").map((j) => j.id);
  // A running job already asked to stop is not asked (nor logged) twice.
  const asked = targets.filter((j) => j.state === "running" && !j.cancel_requested);
  const done = await tx.cancelMany(
    queued,
    asked.map((j) => j.id),
    now,
  );
  const changed = new Set([...done.canceled, ...done.requested]);
  const lost = [...queued, ...asked.map((j) => j.id)].find((id) => !changed.has(id));
  if (lost !== undefined) throw new SpoolError("CONFLICT", `job ${lost} changed state while being canceled`);
  const closedBy = await dependentsByRoot(tx, done.closed, new Set(done.canceled));
  // Ledger rows in the order the jobs were named, as one job at a time wrote them.
  for (const job of targets) {
    if (job.state === "queued") await tx.appendEvent(job.id, "canceled", null, '{"from":"queued"}', now);
    else if (!job.cancel_requested) {
      const detail = JSON.stringify({ attempt: job.last_attempt_no, worker: job.locked_by });
      await tx.appendEvent(job.id, "cancel_requested", null, detail, now);
    }
  }
  return targets.map((job) => {
    if (job.state !== "queued") return { job_id: job.id, state: "running", was_running: true };
    const closed = closedBy.get(job.id);
    return { job_id: job.id, state: "canceled", was_running: false, ...(closed ? { closed } : {}) };
  });
}
