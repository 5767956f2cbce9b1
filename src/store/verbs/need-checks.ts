/**
 * The dependency check of `retry` and `rerun` of named jobs
 * (docs/architecture.md "Dependencies"): which of them cannot be requeued
 * because a need is dead or canceled, or was deleted before it was met.
 */

import type { Job, JobState } from "../../model/job.ts";
import { type BlockedRetry, blockedRetries, lostANeed, type RetryBlock } from "../../ops/retry-needs.ts";
import type { StoreReader } from "../reader.ts";
import { closingNeed } from "./triage-dependents.ts";

/**
 * The jobs of `jobs` a retry or rerun cannot requeue, in `tx`'s snapshot: one
 * read of their unmet needs, one of those needs' states, then the pure
 * {@link blockedRetries} decides. A job whose `needs_left` exceeds its unmet
 * edges lost a need (its edge went with a deleted job) and is named with the
 * need its closing recorded, when it did.
 */
export async function blockedByNeeds(tx: StoreReader, jobs: Job[]): Promise<BlockedRetry[]> {
  const waiting = jobs.filter((j) => j.needs_left > 0);
  if (waiting.length === 0) return [];
  const unmet = await tx.unmetNeeds(waiting.map((j) => j.id));
  const lost = new Map<number, number | null>();
  for (const job of waiting) if (lostANeed(job, unmet.get(job.id)?.length ?? 0)) lost.set(job.id, closingNeed(job));
  const needIds = [...new Set([...unmet.values()].flat())];
  const needs = needIds.length > 0 ? await tx.listJobs({ ids: needIds, limit: needIds.length }) : [];
  const stateOf = new Map<number, JobState>(needs.map((j) => [j.id, j.state]));
  return blockedRetries(
    jobs.map((j) => j.id),
    unmet,
    stateOf,
    lost,
  );
}

/** Longest chain of closed needs {@link retryRootIn} follows (a longer one is named where it stops). */
const ROOT_HOPS = 10_000;

/**
 * The job whose retry revives `needId`'s chain (docs/architecture.md
 * "Dependencies"): from a dead or canceled need, down the `need_failed`
 * links its closings recorded, to the deepest job that is dead or canceled
 * and not closed by a need that is still dead or canceled: retrying it
 * revives every job its end closed (`retry` cascades). Null when the chain
 * ends at a job that is gone (deleted): no retry can revive it. In `tx`'s
 * snapshot, one `getJob` per link.
 */
async function retryRootIn(tx: StoreReader, needId: number): Promise<number | null> {
  let at = await tx.getJob(needId);
  for (let hops = 0; at && hops < ROOT_HOPS; hops++) {
    const next = closingNeed(at);
    if (next === null) return at.id;
    const need = await tx.getJob(next);
    if (!need) return null;
    if (need.state !== "dead" && need.state !== "canceled") return at.id;
    at = need;
  }
  return at ? at.id : null;
}

/**
 * Why a retry of `job` would be refused for its needs, and which job to retry
 * instead ({@link retryRootIn}), in `tx`'s snapshot; null when its needs do
 * not block it (docs/architecture.md "Dependencies").
 */
export async function retryBlockIn(tx: StoreReader, job: Job): Promise<RetryBlock | null> {
  if (job.state !== "dead" && job.state !== "canceled") return null;
  const [blocked] = await blockedByNeeds(tx, [job]);
  if (!blocked) return null;
  return { need_id: blocked.need_id, need_state: blocked.need_state, retry: await rootOf(tx, blocked) };
}

/** The job to retry instead of the blocked one `b` ({@link retryRootIn}); null when a need was deleted. */
export async function rootOf(tx: StoreReader, b: BlockedRetry): Promise<number | null> {
  return b.need_state === "deleted" || b.need_id === null ? null : await retryRootIn(tx, b.need_id);
}
