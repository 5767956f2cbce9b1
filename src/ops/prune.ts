/**
 * `prune` (docs/architecture.md "Prune"): delete terminal jobs that finished longer ago than
 * a cutoff — their rows (attempts, events, jobs) in one write transaction, so
 * no retry can slip in between, then their output files — so that a prune
 * killed midway never leaves a row naming a deleted file. Never touches queued
 * or running jobs. A dry run reports what would go and writes nothing.
 */
import { invalidValue, type Warning } from "../contract/errors.ts";
import { type Job, type JobState, TERMINAL_STATES } from "../store/model.ts";
import { filesSize, removeJobOutput } from "../store/spool.ts";
import type { Store, StoreReader, StoreWriter } from "../store/store.ts";
import { parseStates } from "./jobs.ts";

/**
 * `prune --json` data. On a dry run the `deleted_*` counts and `freed_bytes`
 * are what `--yes` would delete, and `actual` is false. Sizes in bytes.
 */
export interface PruneData {
  /** Whether rows and files were really deleted. */
  actual: boolean;
  dry_run: boolean;
  /** Set on an actual prune: what was deleted cannot be recovered. */
  irreversible?: boolean;
  /** Terminal jobs that matched. */
  matched: number;
  deleted_jobs: number;
  deleted_attempts: number;
  deleted_events: number;
  freed_bytes: number;
}

/** What to prune. */
export interface PruneQuery {
  /** Seconds: jobs finished at least this long ago. */
  olderThan: number;
  states: JobState[];
  dryRun: boolean;
}

/**
 * Parses `--state` for prune: terminal states only (QueueCTL's `completed`
 * included); default all three. Raises `INVALID_INPUT` for queued or running.
 */
export function parsePruneStates(raws: string[]): JobState[] {
  if (raws.length === 0) return [...TERMINAL_STATES];
  const { states } = parseStates(raws);
  for (const s of states) {
    if (!TERMINAL_STATES.includes(s))
      throw invalidValue(
        "--state",
        s,
        `a terminal state: ${TERMINAL_STATES.join(", ")} (prune never deletes queued or running jobs)`,
      );
  }
  return states;
}

async function outputPaths(tx: StoreReader, job: Job): Promise<string[]> {
  return (await tx.attemptsOf(job.id)).flatMap((a) => [a.stdout_path, a.stderr_path]);
}

/** Output files whose rows are gone, to remove once the deleting transaction has committed. */
export interface OutputToRemove {
  jobId: number;
  paths: string[];
}

/**
 * Deletes terminal jobs' rows (attempts, events, jobs) inside the caller's
 * write transaction and returns their output files, which the caller removes
 * with {@link removeOutputs} only after the commit: a prune killed or failing
 * midway then leaves no row pointing at a deleted file (at worst files no row
 * names, never read again). Shared by `prune`, triage's delete and the
 * `delete` verb (`opts.queued`: queued jobs may go too; docs/architecture.md "Prune").
 */
export async function deleteJobRows(
  tx: StoreWriter,
  jobs: Job[],
  opts: { queued?: boolean } = {},
): Promise<{ deleted: { jobs: number; attempts: number; events: number }; outputs: OutputToRemove[] }> {
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
 * away). Returns the bytes freed and a warning per job whose files could not
 * all be removed (the rows are gone either way); never raises.
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

/**
 * Prunes (or previews): the rows in one write transaction, then the files
 * (see {@link deleteJobRows}). Raises `LOCKED`; a file that cannot be removed
 * is an `OUTPUT_NOT_REMOVED` warning, the rows being gone.
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
