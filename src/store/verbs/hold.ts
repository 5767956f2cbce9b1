/**
 * `hold` and `release` (docs/architecture.md "Holding a job"): a queued job
 * held is passed over by every claim until released; it stays queued.
 */
import { SpoolError } from "../../contract/errors.ts";
import type { HeldJob } from "../../describe/schemas-edits.ts";
import { checkHoldable, holdVerb } from "../../ops/hold.ts";
import type { Store } from "../store.ts";
import { type JobTarget, targetJobs, writeOrDryRun } from "./job-targets.ts";

/**
 * Holds (`held` true) or releases the jobs `target` names (references, or
 * every match of a filter: `hold --all`) in one write transaction, all or
 * none: resolves and checks each (`NOT_FOUND`; `CONFLICT` for one that is not
 * queued — running, or finished — then nothing changed), then flips the flag
 * of those not already so with one guarded statement (`setHeld`, guard
 * `state = 'queued'`). A job the guard finds claimed meanwhile raises
 * `CONFLICT` and the transaction rolls back. Each job changed gets a `held` or
 * `released` ledger row; a job already in the wanted state is reported with
 * `changed: false` and no row. A release wakes every worker; a hold none.
 * `now`: epoch seconds. With `dryRun` the same transaction runs and is rolled
 * back (`--dry-run`).
 */
export async function holdJobs(
  store: Store,
  target: JobTarget,
  held: boolean,
  now = store.now(),
  dryRun = false,
): Promise<HeldJob[]> {
  const verb = holdVerb(held);
  return await writeOrDryRun(store, dryRun, async (tx) => {
    const targets = await targetJobs(tx, target, verb);
    for (const job of targets) checkHoldable(job, held);
    const wanted = targets.filter((j) => j.held !== held).map((j) => j.id);
    const changed = new Set(wanted.length ? await tx.setHeld(wanted, held) : []);
    const lost = wanted.find((id) => !changed.has(id));
    if (lost !== undefined)
      throw new SpoolError(
        "CONFLICT",
        `job ${lost} started while being ${held ? "held" : "released"}; nothing changed`,
        {
          remediation: `re-read it (spoolctl show ${lost}) and decide again`,
          detail: { job_id: lost },
        },
      );
    for (const job of targets)
      if (changed.has(job.id)) await tx.appendEvent(job.id, held ? "held" : "released", null, null, now);
    return targets.map((j) => ({ job_id: j.id, held, changed: changed.has(j.id) }));
  });
}
