/**
 * The dependency check of `retry` and `rerun` of named jobs
 * (docs/architecture.md "Dependencies"): which of them cannot be requeued
 * because a need is dead or canceled, or was deleted before it was met.
 */

import type { Job, JobState } from "../../model/job.ts";
import { type BlockedRetry, blockedRetries, lostANeed } from "../../ops/retry-needs.ts";
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
