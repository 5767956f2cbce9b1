/**
 * `prune` (docs/architecture.md "Prune"): delete terminal jobs that finished longer ago than
 * a cutoff — their rows (attempts, events, jobs) in one write transaction, so
 * no retry can slip in between, then their output files — so that a prune
 * killed midway never leaves a row naming a deleted file. Never touches queued
 * or running jobs. A dry run reports what would go and writes nothing. Here:
 * the query and its parsing; the transaction is src/store/verbs/prune.ts.
 */
import { invalidValue } from "../contract/errors.ts";
import { type JobState, TERMINAL_STATES } from "../store/model.ts";
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
