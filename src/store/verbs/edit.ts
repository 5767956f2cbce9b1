/**
 * `edit` and `priority` (docs/architecture.md "Editing a job"): a queued or
 * held job's command and run settings changed before it starts.
 */
import { SpoolError } from "../../contract/errors.ts";
import type { Job, JobEdit } from "../../model/job.ts";
import { changedFields, checkEditable } from "../../ops/edit.ts";
import type { Store } from "../store.ts";
import { resolveJob } from "./job-refs.ts";

/**
 * Changes job `ref` by `edit` (or by what `plan(job)` returns, read in the
 * same transaction: `--env` merges into the job's own variables) in one write
 * transaction: resolves it (`NOT_FOUND`), checks it (`CONFLICT`, exit 5, when it
 * is no longer queued, or when `seenAttempt` — the attempt number the $EDITOR
 * was shown — differs: it ran meanwhile), then writes with one statement
 * guarded by `state = 'queued'` (`editQueuedJob`); a claim that won the race
 * makes it `CONFLICT` too, nothing changed. Writes one `edited` ledger row
 * `{"changed":[fields]}` when a field changed (none when every value was
 * already so). Wakes every worker. Returns the job as written and the fields
 * changed. `now`: epoch seconds.
 */
export async function editJob(
  store: Store,
  ref: string,
  plan: JobEdit | ((job: Job) => JobEdit),
  seenAttempt?: number,
  now = store.now(),
): Promise<{ job: Job; changed: (keyof JobEdit)[] }> {
  return await store.write(async (tx) => {
    const job = await resolveJob(tx, ref);
    checkEditable(job, seenAttempt);
    const edit = typeof plan === "function" ? plan(job) : plan;
    const changed = changedFields(job, edit);
    if (changed.length === 0) return { job, changed };
    const after = await tx.editQueuedJob(job.id, Object.fromEntries(changed.map((k) => [k, edit[k]])));
    if (!after)
      throw new SpoolError("CONFLICT", `job ${job.id} started while being edited; nothing changed`, {
        remediation: `re-read it (spoolctl show ${job.id})`,
        detail: { job_id: job.id },
      });
    await tx.appendEvent(job.id, "edited", null, JSON.stringify({ changed }), now);
    return { job: after, changed };
  });
}
