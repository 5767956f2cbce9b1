/**
 * What `triage` and the `retry`/`cancel` pickers read: which states, how
 * many, and the shape of one job's card (its verdict and output tails). The
 * reads are verbs of src/store/verbs/triage.ts; every change they make goes
 * through the write verbs (retry, cancel, delete).
 */
import type { Job, JobState } from "../model/job.ts";
import type { FeedbackData } from "./feedback.ts";
import type { JobSelection } from "./triage-groups.ts";

/** States triage walks, in this order: dead first, then the other failed-looking ones. */
export const TRIAGE_STATES = ["dead", "canceled"] as const satisfies readonly JobState[];

/** Which jobs to look at (the selection flags of triage; see triage-groups.ts). */
export type JobScope = JobSelection;

/** How many jobs one triage session or picker lists at most (a person will not page through more). */
export const PICK_LIMIT = 500;

/** One job as triage shows it: the row and its verdict with output tails. */
export interface TriageCard {
  job: Job;
  feedback: FeedbackData;
}
