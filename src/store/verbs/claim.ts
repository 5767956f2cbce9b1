/**
 * The claim (docs/architecture.md "The claim", "Claim order"): the store's
 * claim moves up to N eligible jobs to `running` with their attempt rows and
 * `claimed` events, in one short transaction of its own (`Store.claimJobs`).
 */

import type { Job } from "../../model/job.ts";
import type { ClaimedJob, ClaimRequest } from "../attempt-types.ts";
import type { Store } from "../store.ts";

/** A job this worker now owns, with the attempt it must run. */
export interface ClaimedAttempt {
  job: Job;
  attemptNo: number;
  /** The attempt's `started_at` as the claim stored it, epoch seconds (its end is dated from it: docs/architecture.md "Clocks"). */
  startedAt: number;
  stdoutPath: string;
  stderrPath: string;
}

/** Who is claiming, and from which lane: a claim request without its size and date. */
export type Claimant = Omit<ClaimRequest, "limit" | "now">;

/**
 * Claims up to `limit` eligible jobs of `who.queue` for `who`, dated `now`
 * (epoch seconds) or, by default, when the claim runs (ClaimRequest.now): one
 * write transaction (`Store.claimJobs`). Guard: the claim statement itself
 * (due, not waiting on needs, the lane not paused, its slots and `who.slots`
 * not taken; PostgreSQL `FOR UPDATE SKIP LOCKED`, the lane row locked first).
 * Events: `claimed` per job. Wakes nobody. None when the lane is empty or at
 * its slots. Raises `LOCKED` under contention.
 */
export async function claimJobs(store: Store, who: Claimant, limit: number, now?: number): Promise<ClaimedAttempt[]> {
  return toClaimedAttempts(await store.claimJobs({ ...who, limit, ...(now === undefined ? {} : { now }) }));
}

/** The store's claimed jobs as the attempts the worker must run. */
export function toClaimedAttempts(claimed: ClaimedJob[]): ClaimedAttempt[] {
  return claimed.map(({ job, attempt }) => ({
    job,
    attemptNo: attempt.attempt_no,
    startedAt: attempt.started_at,
    stdoutPath: attempt.stdout_path,
    stderrPath: attempt.stderr_path,
  }));
}
