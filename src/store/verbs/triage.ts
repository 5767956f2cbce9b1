/**
 * What `triage`, `list --group` and the `retry`/`cancel` pickers read
 * (docs/architecture.md "The operations", "Reads"; "Triage"): the jobs to walk
 * through, a job's card, its latest output, and the failure groups. Each verb
 * is one read snapshot on the queue's clock: no guard, no event, no wake.
 * Every change triage makes goes through the write verbs (retry, cancel, delete).
 */

import type { FailureGroupRow, Job, JobState } from "../../model/job.ts";
import { lastNonEmptyLine, MASK_VERSION, STDERR_TAIL_READ } from "../../ops/failure-signature.ts";
import type { FeedbackData } from "../../ops/feedback.ts";
import { type AttemptOutput, STREAMS } from "../../ops/output.ts";
import { PICK_LIMIT, TRIAGE_STATES, type TriageCard } from "../../ops/triage.ts";
import {
  type FailureGroup,
  groupOrder,
  type JobSelection,
  mergeFailureRows,
  selectionFilter,
} from "../../ops/triage-groups.ts";
import type { StoreReader } from "../reader.ts";
import type { SnapshotReader } from "../store.ts";
import { feedbackIn } from "./feedback.ts";
import { attemptOutputIn, pickAttemptIn, streamTailIn } from "./output.ts";
import { closedDependentsIn, regroupDependents } from "./triage-dependents.ts";

/**
 * The jobs `scope` selects in `states`, grouped by state in the order given,
 * each group newest first by when it ended (then by id), so the freshest
 * failure comes first; at most `limit` in all.
 */
export function jobsInStates(
  store: SnapshotReader,
  states: readonly JobState[],
  scope: JobSelection,
  limit = PICK_LIMIT,
): Promise<Job[]> {
  const filter = selectionFilter(scope, store.now());
  return store.read(async (tx) => {
    const out: Job[] = [];
    for (const state of states) {
      if (out.length >= limit) break;
      const rows = await tx.listJobs({ ...filter, states: [state], limit: limit - out.length });
      const ended = (j: Job) => j.finished_at ?? j.created_at;
      out.push(...rows.sort((a, b) => ended(b) - ended(a) || b.id - a.id));
    }
    return out;
  });
}

/**
 * The card of job `id` (its row and verdict with the last `tailBytes` of each
 * stream), read fresh: null when the job is gone or no longer dead or
 * canceled (someone retried or deleted it since the list was read).
 */
export function triageCard(store: SnapshotReader, id: number, tailBytes: number): Promise<TriageCard | null> {
  return store.read(async (tx) => {
    const job = await tx.getJob(id);
    if (!job || !(TRIAGE_STATES as readonly string[]).includes(job.state)) return null;
    const feedback: FeedbackData = (await feedbackIn(tx, job, tailBytes)).data;
    return { job, feedback };
  });
}

/** The latest attempt's stdout and stderr of job `id`, each capped at its last `maxBytes`; null before any attempt. */
export function latestOutput(store: SnapshotReader, id: number, maxBytes: number): Promise<AttemptOutput | null> {
  return store.read(async (tx) => {
    const job = await tx.getJob(id);
    const attempt = job ? await pickAttemptIn(tx, job, null) : null;
    return attempt ? attemptOutputIn(tx, attempt, STREAMS, maxBytes) : null;
  });
}

/** The lines the store could not group by (not recorded): read from each job's last attempt, a bounded read. */
async function readUnrecorded(tx: StoreReader, rows: FailureGroupRow[]): Promise<void> {
  for (const row of rows) {
    if (row.stderr_signature !== null || row.stderr_last_line !== null) continue;
    const job = await tx.getJob(row.job_ids[0]!);
    const attempt = job ? await tx.getAttempt(job.id, job.last_attempt_no) : null;
    const tail = await streamTailIn(tx, attempt, "stderr", STDERR_TAIL_READ);
    row.stderr_last_line = tail.missing ? "" : lastNonEmptyLine(tail.text, tail.partial_first_line);
  }
}

/** The unmasked stderr line of each example job's last attempt ("" when none was recorded or read). */
async function exampleLines(tx: StoreReader, jobs: Job[], rows: FailureGroupRow[]): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (const row of rows)
    if (row.count === 1 && row.stderr_last_line !== null) out.set(row.job_ids[0]!, row.stderr_last_line);
  for (const job of jobs) {
    if (out.has(job.id) || job.last_attempt_no === 0) continue;
    out.set(job.id, (await tx.getAttempt(job.id, job.last_attempt_no))?.stderr_last_line ?? "");
  }
  return out;
}

/**
 * The failure groups of the dead and canceled jobs `sel` selects (`states`
 * narrows to one of the two), sorted dead first, then largest first: the
 * store's GROUP BY (by the signatures workers recorded, so a few rows), the
 * lines recorded without one masked and merged (`mergeFailureRows`), the
 * dependents a failure closed shown under it, and each group's example job.
 * `now`: epoch seconds, for `sel.sinceSeconds`.
 */
export function failureGroups(
  store: SnapshotReader,
  sel: JobSelection,
  states: JobState[] = ["dead", "canceled"],
  now = store.now(),
): Promise<FailureGroup[]> {
  return store.read(async (tx) => {
    const rows = await tx.failureGroups({ ...selectionFilter(sel, now), states }, MASK_VERSION);
    await readUnrecorded(tx, rows);
    // Dependents a failure closed are shown under it, not among the jobs canceled by hand.
    const groups = await regroupDependents(tx, mergeFailureRows(rows));
    // Without canceled jobs in the selection (`--state dead`), the dependents closed are found from the group's jobs.
    if (!states.includes("canceled"))
      for (const g of groups) {
        const closed = await closedDependentsIn(tx, g.job_ids);
        if (closed.length > 0) g.closed_dependents = closed;
      }
    for (const g of groups) g.example.job_id = g.job_ids[0]!;
    const examples = groups.length
      ? await tx.listJobs({ ids: groups.map((g) => g.example.job_id), limit: groups.length })
      : [];
    const argvOf = new Map(examples.map((j) => [j.id, j.argv]));
    const lineOf = await exampleLines(tx, examples, rows);
    return groups
      .map((g) => ({
        ...g,
        example: {
          ...g.example,
          argv: argvOf.get(g.example.job_id) ?? [],
          stderr_line: lineOf.get(g.example.job_id) ?? "",
        },
      }))
      .sort(groupOrder);
  });
}
