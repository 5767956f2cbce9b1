/**
 * `rerun` (docs/architecture.md "Rerun"): a finished job (done, dead or
 * canceled) runs again as a new attempt of the same job, its attempts and
 * ledger kept, its budgets fresh as on a retry.
 */
import { SpoolError } from "../../contract/errors.ts";
import type { RerunData } from "../../describe/schemas-operator.ts";
import { checkRerun, rerunKeyConflict } from "../../ops/rerun.ts";
import { blockedError } from "../../ops/retry-needs.ts";
import type { Store } from "../store.ts";
import { keyHolder, resolveJob } from "./job-refs.ts";
import { blockedByNeeds, rootOf } from "./need-checks.ts";

/**
 * Reruns the job `ref` names (an id, an idempotency key or `last`) in one
 * write transaction: reads it, refuses a queued or running one (`CONFLICT`),
 * refuses when another active job holds its idempotency key
 * (`IDEMPOTENCY_CONFLICT`), then `rerunJob`, guarded in its UPDATE by
 * `state IN ('done','dead','canceled')` (and by the unique index of active
 * keys, which raises `IDEMPOTENCY_CONFLICT` should a holder commit
 * meanwhile). The job is due at `now` (epoch seconds); the driver appends a
 * `retried` ledger row `{"from":…,"rerun":true}` and wakes every worker. A
 * job waiting on a need that is dead or canceled, or was deleted before it
 * was met, is refused (`CONFLICT`, named): requeued it would wait for ever.
 * A dead or canceled job revives the dependents its failure closed
 * (`reviveDependents`, down the chain; `revived`), as `retry` does.
 * Raises `NOT_FOUND` for an unknown reference and `CONFLICT` when the job
 * changed state meanwhile; then nothing changed.
 */
export async function rerunJob(store: Store, ref: string, now = store.now()): Promise<RerunData> {
  return await store.write(async (tx) => {
    const job = await resolveJob(tx, ref);
    checkRerun(job);
    const [blocked] = await blockedByNeeds(tx, [job]);
    if (blocked) throw blockedError(blocked, "rerun", await rootOf(tx, blocked));
    const holder = await keyHolder(tx, job);
    if (holder) throw rerunKeyConflict(job, holder);
    const from = await tx.rerunJob(job.id, now, now);
    if (from === null) {
      throw new SpoolError("CONFLICT", `job ${job.id} changed state while being rerun; nothing changed`, {
        remediation: `spoolctl show ${job.id}`,
        detail: { job_id: job.id },
      });
    }
    // A failed need run again revives the dependents its failure closed, as retry does.
    const revived = from === "done" ? [] : await tx.reviveDependents([job.id], now);
    // The UPDATE's guard only matches a finished job, so `from` is one of the schema's three states.
    return {
      job_id: job.id,
      state: "queued",
      from: from as RerunData["from"],
      next_attempt_no: job.last_attempt_no + 1,
      ...(revived.length > 0 ? { revived: [...revived].sort((a, b) => a - b) } : {}),
    };
  });
}
