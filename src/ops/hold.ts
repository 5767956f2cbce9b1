/**
 * `hold` and `release` (docs/architecture.md "Holding a job"), pueue's stash
 * and enqueue: a held job stays queued (its needs, batch and idempotency key
 * are as before) but no claim takes it until it is released. The checks,
 * pure; the transaction is the `holdJobs` verb (src/store/verbs/hold.ts).
 */
import { SpoolError } from "../contract/errors.ts";
import type { Job } from "../model/job.ts";

/** The verb's name for messages: `hold` when `held`, else `release`. */
export function holdVerb(held: boolean): "hold" | "release" {
  return held ? "hold" : "release";
}

/**
 * Raises `CONFLICT` (exit 5) unless `job` is queued: a running job cannot be
 * held (cancel it), a finished one has nothing left to hold. A queued job
 * already in the wanted state passes (the verb reports it unchanged).
 */
export function checkHoldable(job: Job, held: boolean): void {
  if (job.state === "queued") return;
  const verb = holdVerb(held);
  throw new SpoolError("CONFLICT", `job ${job.id} is ${job.state}; ${verb} acts on queued jobs only`, {
    remediation:
      job.state === "running"
        ? `it has started: to stop it, spoolctl cancel ${job.id} --running --yes`
        : job.state === "done"
          ? `it has finished (spoolctl show ${job.id})`
          : `to queue it again: spoolctl retry ${job.id}`,
    detail: { job_id: job.id, state: job.state },
  });
}
