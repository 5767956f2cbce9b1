/**
 * `prune` (docs/architecture.md "Prune and delete"): delete terminal jobs that finished longer ago than
 * a cutoff — their rows (attempts, events, jobs) in one write transaction, so
 * no retry can slip in between, then their output files — so that a prune
 * killed midway never leaves a row naming a deleted file. Never touches queued
 * or running jobs. A dry run reports what would go and writes nothing. Here:
 * the query and its parsing; the transaction is src/store/verbs/prune.ts.
 */
import { invalidValue } from "../contract/errors.ts";
import type { PruneData } from "../describe/schemas-jobs.ts";
import { type JobState, TERMINAL_STATES } from "../model/job.ts";
import { parseStates } from "./jobs.ts";

// Defined once, as the JSON Schemas `spoolctl schema` prints.
export type { PruneData };

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
