/**
 * `prune` (docs/architecture.md "Prune"): delete terminal jobs that finished longer ago than
 * a cutoff — their output files first, then their rows (attempts, events,
 * jobs) — in one write transaction, so no retry can slip in between. Never
 * touches queued or running jobs. A dry run reports what would go and writes
 * nothing.
 */
import { SpoolError, invalidValue } from "../contract/errors.ts";
import { TERMINAL_STATES, type Job, type JobState } from "../store/model.ts";
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
    if (!TERMINAL_STATES.includes(s)) throw invalidValue("--state", s, `a terminal state: ${TERMINAL_STATES.join(", ")} (prune never deletes queued or running jobs)`);
  }
  return states;
}

async function outputPaths(tx: StoreReader, job: Job): Promise<string[]> {
  return (await tx.attemptsOf(job.id)).flatMap((a) => [a.stdout_path, a.stderr_path]);
}

/**
 * Deletes terminal jobs inside the caller's write transaction: their output
 * files first, then their rows (attempts, events, jobs), so that a file that
 * cannot be removed leaves every row in place (the transaction rolls back).
 * Shared by `prune` and triage's delete. `again` completes the remediation.
 * Raises `INTERNAL` when a file cannot be removed.
 */
export async function deleteWithOutput(tx: StoreWriter, spoolDir: string, jobs: Job[], again: string): Promise<{ freed: number; deleted: { jobs: number; attempts: number; events: number } }> {
  let freed = 0;
  for (const job of jobs) {
    try {
      freed += removeJobOutput(spoolDir, job.id, await outputPaths(tx, job));
    } catch (error) {
      throw new SpoolError("INTERNAL", `cannot remove the output of job ${job.id}: ${(error as Error).message}; no rows were deleted`, {
        remediation: `check the spool folder's permissions, then ${again}`,
      });
    }
  }
  return { freed, deleted: await tx.deleteJobs(jobs.map((j) => j.id)) };
}

/** Prunes (or previews). Raises `LOCKED`, or `INTERNAL` when a file cannot be removed (rows then stay). */
export async function pruneJobs(store: Store, q: PruneQuery, now = store.now()): Promise<PruneData> {
  const cutoff = now - q.olderThan;
  if (q.states.length === 0) {
    return { actual: false, dry_run: q.dryRun, matched: 0, deleted_jobs: 0, deleted_attempts: 0, deleted_events: 0, freed_bytes: 0 };
  }
  if (q.dryRun) {
    return await store.read(async (tx) => {
      const jobs = await tx.pruneCandidates(q.states, cutoff);
      const counts = await tx.historyCounts(jobs.map((j) => j.id));
      let bytes = 0;
      for (const j of jobs) bytes += filesSize(await outputPaths(tx, j));
      return { actual: false, dry_run: true, matched: jobs.length, deleted_jobs: jobs.length, deleted_attempts: counts.attempts, deleted_events: counts.events, freed_bytes: bytes };
    });
  }
  return await store.write(async (tx) => {
    const jobs = await tx.pruneCandidates(q.states, cutoff);
    const { freed, deleted } = await deleteWithOutput(tx, store.spoolDir, jobs, "run prune again");
    return {
      actual: deleted.jobs > 0,
      dry_run: false,
      irreversible: true,
      matched: jobs.length,
      deleted_jobs: deleted.jobs,
      deleted_attempts: deleted.attempts,
      deleted_events: deleted.events,
      freed_bytes: freed,
    };
  });
}
