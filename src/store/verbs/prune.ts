/**
 * `prune` (docs/architecture.md "Prune and delete"): terminal jobs that finished longer
 * ago than a cutoff go, their rows in one write transaction (no retry can slip
 * in between), then their output files, so a prune killed midway never leaves
 * a row naming a deleted file. Never queued or running jobs.
 */
import type { Warning } from "../../contract/errors.ts";
import type { PruneData, PruneQuery } from "../../ops/prune.ts";
import type { Store } from "../store.ts";
import { deleteJobRows, previewDeletion, removeOutputs } from "./deletion.ts";

/**
 * Prunes the jobs of `q` (or, `q.dryRun`, previews): the terminal jobs in
 * `q.states` that finished before `now - q.olderThan` (epoch seconds).
 * A dry run is one read snapshot; a prune one write transaction
 * (`pruneCandidates`, then `deleteJobs` of them, whose SQL guard deletes only
 * terminal jobs: a job retried meanwhile is skipped), then the files after the
 * commit. Writes no ledger row (the job's rows go); wakes no worker. Raises
 * `LOCKED`; a file that cannot be removed is an `OUTPUT_NOT_REMOVED` warning,
 * the rows being gone.
 */
export async function pruneJobs(
  store: Store,
  q: PruneQuery,
  now = store.now(),
): Promise<{ data: PruneData; warnings: Warning[] }> {
  const cutoff = now - q.olderThan;
  if (q.states.length === 0) {
    return {
      data: {
        actual: false,
        dry_run: q.dryRun,
        matched: 0,
        deleted_jobs: 0,
        deleted_attempts: 0,
        deleted_events: 0,
        freed_bytes: 0,
      },
      warnings: [],
    };
  }
  if (q.dryRun) {
    const data = await store.read(async (tx): Promise<PruneData> => {
      const jobs = await tx.pruneCandidates(q.states, cutoff);
      const gone = await previewDeletion(tx, jobs);
      return {
        actual: false,
        dry_run: true,
        matched: jobs.length,
        deleted_jobs: jobs.length,
        deleted_attempts: gone.attempts,
        deleted_events: gone.events,
        freed_bytes: gone.bytes,
      };
    });
    return { data, warnings: [] };
  }
  const { matched, deleted, outputs } = await store.write(async (tx) => {
    const jobs = await tx.pruneCandidates(q.states, cutoff);
    return { matched: jobs.length, ...(await deleteJobRows(tx, jobs)) };
  });
  // Rows first (committed), files after: see deleteJobRows.
  const { freed, warnings } = removeOutputs(store.spoolDir, outputs);
  return {
    data: {
      actual: deleted.jobs > 0,
      dry_run: false,
      irreversible: true,
      matched,
      deleted_jobs: deleted.jobs,
      deleted_attempts: deleted.attempts,
      deleted_events: deleted.events,
      freed_bytes: freed,
    },
    warnings,
  };
}
