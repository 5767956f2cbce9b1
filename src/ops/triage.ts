/**
 * What `triage` and the `retry`/`cancel` pickers read: the jobs to
 * walk through, and one job's card (its verdict and output tails). Every change
 * they make goes through the verbs' own operations (retry, cancel, delete).
 */
import type { Job, JobState } from "../store/model.ts";
import type { Store } from "../store/store.ts";
import { type FeedbackData, jobFeedback } from "./feedback.ts";
import { type AttemptOutput, attemptOutput, pickAttempt, STREAMS } from "./output.ts";
import { type JobSelection, selectionFilter } from "./triage-groups.ts";

/** States triage walks, in this order: dead first, then the other failed-looking ones. */
export const TRIAGE_STATES = ["dead", "canceled"] as const satisfies readonly JobState[];

/** Which jobs to look at (the selection flags of triage; see triage-groups.ts). */
export type JobScope = JobSelection;

/** How many jobs one triage session or picker lists at most (a person will not page through more). */
export const PICK_LIMIT = 500;

/**
 * Jobs in `states`, grouped by state in the order given, each group newest
 * first by when it ended (then by id), so the freshest failure comes first.
 */
export async function jobsInStates(
  store: Store,
  states: readonly JobState[],
  scope: JobScope,
  limit = PICK_LIMIT,
): Promise<Job[]> {
  const filter = selectionFilter(scope, store.now());
  return await store.read(async (tx) => {
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

/** One job as triage shows it: the row and its verdict with output tails. */
export interface TriageCard {
  job: Job;
  feedback: FeedbackData;
}

/**
 * The card of job `id`, read fresh: null when the job is gone or no longer
 * dead or canceled (someone retried or deleted it since the list was read).
 */
export async function triageCard(store: Store, id: number, tailBytes: number): Promise<TriageCard | null> {
  const job = await store.read(async (tx) => await tx.getJob(id));
  if (!job || !(TRIAGE_STATES as readonly string[]).includes(job.state)) return null;
  return { job, feedback: (await jobFeedback(store, String(id), tailBytes)).data };
}

/** The latest attempt's stdout and stderr, each capped at its last `maxBytes`; null before any attempt. */
export async function latestOutput(store: Store, id: number, maxBytes: number): Promise<AttemptOutput | null> {
  return await store.read(async (tx) => {
    const job = await tx.getJob(id);
    const attempt = job ? await pickAttempt(tx, job, null) : null;
    return attempt ? attemptOutput(tx, attempt, [...STREAMS], maxBytes) : null;
  });
}
