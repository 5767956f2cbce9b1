/**
 * What deleting jobs removes (docs/architecture.md "Prune and delete"), shared by the
 * `prune` and `delete` verbs (a helper only verbs import) so the two can
 * never disagree: the rows in the verb's transaction, the output files only
 * after it committed.
 */
import type { Warning } from "../../contract/errors.ts";
import type { Job } from "../../model/job.ts";
import type { StoreReader } from "../reader.ts";
import { filesSize, removeJobOutput } from "../spool.ts";
import type { StoreWriter } from "../writer.ts";

/** Output files whose rows are gone, to remove once the deleting transaction has committed. */
export interface OutputToRemove {
  jobId: number;
  paths: string[];
}

async function outputPaths(tx: StoreReader, job: Job): Promise<string[]> {
  return (await tx.attemptsOf(job.id)).flatMap((a) => [a.stdout_path, a.stderr_path]);
}

/**
 * Deletes jobs' rows (attempts, events, jobs) inside the caller's write
 * transaction and returns their output files, which the caller removes with
 * {@link removeOutputs} only after the commit: a deletion killed or failing
 * midway then leaves no row pointing at a deleted file (at worst files no row
 * names, never read again). The store's guard deletes terminal jobs only, and
 * queued ones with `opts.queued` (the `delete` verb); never a running one.
 */
export async function deleteJobRows(
  tx: StoreWriter,
  jobs: Job[],
  opts: { queued?: boolean } = {},
): Promise<{
  deleted: { jobs: number; attempts: number; events: number; closed: number[] };
  outputs: OutputToRemove[];
}> {
  const outputs: OutputToRemove[] = [];
  for (const job of jobs) outputs.push({ jobId: job.id, paths: await outputPaths(tx, job) });
  const deleted = await tx.deleteJobs(
    jobs.map((j) => j.id),
    opts,
  );
  return { deleted, outputs };
}

/**
 * Removes the output files of deleted jobs (after their rows were committed
 * away). Returns the bytes freed and an `OUTPUT_NOT_REMOVED` warning per job
 * whose files could not all be removed (the rows are gone either way); never raises.
 */
export function removeOutputs(spoolDir: string, outputs: OutputToRemove[]): { freed: number; warnings: Warning[] } {
  let freed = 0;
  const warnings: Warning[] = [];
  for (const { jobId, paths } of outputs) {
    try {
      freed += removeJobOutput(spoolDir, jobId, paths);
    } catch (error) {
      warnings.push({
        code: "OUTPUT_NOT_REMOVED",
        message: `job ${jobId} was deleted but its output files could not all be removed (${(error as Error).message}); remove them by hand: ${paths.join(" ")}`,
      });
    }
  }
  return { freed, warnings };
}

/** What deleting `jobs` would remove: their attempt and ledger rows and their output's size in bytes. Writes nothing. */
export async function previewDeletion(
  tx: StoreReader,
  jobs: Job[],
): Promise<{ attempts: number; events: number; bytes: number }> {
  const counts = await tx.historyCounts(jobs.map((j) => j.id));
  let bytes = 0;
  for (const j of jobs) bytes += filesSize(await outputPaths(tx, j));
  return { ...counts, bytes };
}
