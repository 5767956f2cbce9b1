/**
 * `retry` (docs/architecture.md "Retry"): a dead or canceled job goes back to `queued` with a
 * fresh budget (`attempts` and `crashes` reset, history kept) and a `retried`
 * event. A running job only with `--force`: its attempt is closed as canceled
 * and its ownership cleared, so the old worker's late writes change nothing.
 * The checks and planners, pure; the transaction is the `retryJobs` verb
 * (src/store/verbs/retry.ts). Parsing overrides is ./job-spec.ts.
 */

import { invalidValue, SpoolError, type Warning } from "../contract/errors.ts";
import type { RetriedJob } from "../describe/schemas-operator.ts";
import type { Job, JobFilter, JobSettingsChange, JobState } from "../model/job.ts";
import { LIMITS } from "../model/limits.ts";
import type { RetryOverrides } from "./job-spec.ts";
import { queuedJobHint } from "./jobs.ts";
import { type BlockedRetry, blockedWarningText } from "./retry-needs.ts";
import { canTransition } from "./states.ts";

// Defined once, as the JSON Schema `spoolctl schema` prints.
export type { RetriedJob };

/** States `retry --all` may select. */
export const RETRYABLE_STATES = ["dead", "canceled"] as const satisfies readonly JobState[];

/** Which jobs to retry: named ones, or every job matching a filter (`--all`). */
export type RetryTarget = { refs: string[] } | { filter: Omit<JobFilter, "limit"> & { states: JobState[] } };

/** Raises unless `job` may be retried (with `force` for a running job): `CONFLICT` (done, queued), `SAFETY_BLOCK` (running without `force`). */
export function checkRetry(job: Job, force: boolean): void {
  if (job.state === "done") {
    throw new SpoolError("CONFLICT", `job ${job.id} is done (it succeeded); retry requeues dead or canceled jobs`, {
      remediation: `to run it again as a new attempt of the same job: spoolctl rerun ${job.id}`,
      detail: { job_id: job.id, state: job.state },
    });
  }
  if (job.state === "queued") {
    throw new SpoolError("CONFLICT", `job ${job.id} is already queued`, {
      remediation: queuedJobHint(job),
      detail: { job_id: job.id, state: job.state },
    });
  }
  if (job.state === "running" && !force) {
    throw new SpoolError(
      "SAFETY_BLOCK",
      `job ${job.id} is running (attempt ${job.last_attempt_no} on worker ${job.locked_by}); retrying it abandons that attempt while its process may still run`,
      {
        remediation: `spoolctl retry ${job.id} --force  (or stop it first: spoolctl cancel ${job.id} --running --yes)`,
        detail: { job_id: job.id, state: job.state },
      },
    );
  }
  if (!canTransition(job.state, "queued")) {
    throw new SpoolError("CONFLICT", `job ${job.id} is ${job.state} and cannot be retried`, {
      detail: { job_id: job.id, state: job.state },
    });
  }
}

/**
 * `IDEMPOTENCY_CONFLICT` (exit 5) for a retry of `job` while `holder` holds
 * its key: an active job, or (`inRequest`) one this same retry requeues.
 */
export function keyConflict(job: Job, holder: Job, inRequest = false): SpoolError {
  const key = JSON.stringify(job.idempotency_key);
  const message = inRequest
    ? `jobs ${holder.id} and ${job.id} share the key ${key}; requeueing both would make two active jobs with one key; nothing was retried`
    : `job ${job.id}'s key ${key} belongs to active job ${holder.id}; requeueing job ${job.id} too would make two active jobs with one key; nothing was retried`;
  const remediation = inRequest
    ? `retry one of them (spoolctl retry ${job.id}); retry --all picks the newest of each key`
    : `wait for job ${holder.id} (spoolctl wait ${holder.id}) or cancel it, then retry job ${job.id}`;
  return new SpoolError("IDEMPOTENCY_CONFLICT", message, {
    remediation,
    detail: { job_id: job.id, holder_id: holder.id, key: job.idempotency_key },
  });
}

/** A job `retry --all` left alone because another active job holds its idempotency key. */
export interface SkippedRetry {
  job_id: number;
  key: string;
  holder_id: number;
}

/** What {@link retryJobs} did: the jobs requeued, oldest first, and those skipped (`--all` only). */
export interface RetryOutcome {
  jobs: RetriedJob[];
  skipped: SkippedRetry[];
  /** Jobs `--all` left alone because a need they must wait for is dead or canceled and was not retried with them. */
  blocked?: BlockedRetry[];
  /** Every dependent revived, ascending (`--all`; named jobs carry theirs in `jobs[i].revived`). */
  revived?: number[];
  /** With `--no-cascade`: every dependent left closed, ascending (`--all`; named jobs carry theirs in `jobs[i].left_closed`). */
  left_closed?: number[];
}

/** Whether `o` changes anything (an empty env changes nothing). */
export function hasOverrides(o: RetryOverrides): boolean {
  return (
    o.timeoutSeconds !== undefined ||
    o.maxRetries !== undefined ||
    (o.env !== undefined && Object.keys(o.env).length > 0)
  );
}

/** The warnings of a {@link RetryOutcome}: one `IDEMPOTENCY_KEY_HELD` per skipped job. */
export function retryWarnings(outcome: RetryOutcome): Warning[] {
  const held = outcome.skipped.map((s) => ({
    code: "IDEMPOTENCY_KEY_HELD" as const,
    message: `job ${s.job_id} was not retried: its key ${JSON.stringify(s.key)} belongs to job ${s.holder_id}, which is active now (spoolctl wait ${s.holder_id}, then spoolctl retry ${s.job_id})`,
  }));
  const blocked = (outcome.blocked ?? []).map((b) => ({
    code: "NEED_NOT_RETRIED" as const,
    message: blockedWarningText(b),
  }));
  return [...held, ...blocked];
}

/** A job retried with changed settings; `changed` lists what changed (env by key only: values stay out of the ledger). */
export type RetriedWithOverrides = RetriedJob & { changed: NonNullable<RetriedJob["changed"]> };

/**
 * What `retry --all` requeues of `matches` (the matching jobs, newest first):
 * per idempotency key only the newest job whose key no active job holds
 * (`active`, by key) nor a newer match took; the others are `skipped`, naming
 * the holder. Raises like {@link checkRetry} for a match that is not dead or
 * canceled. Returns `chosen` oldest first and `skipped` oldest first.
 */
export function planRetryAll(matches: Job[], active: Map<string, Job>): { chosen: Job[]; skipped: SkippedRetry[] } {
  const chosen: Job[] = [];
  const skipped: SkippedRetry[] = [];
  const taken = new Map<string, number>();
  for (const job of matches) {
    checkRetry(job, false);
    const key = job.idempotency_key;
    const holderId = key === null ? undefined : (taken.get(key) ?? active.get(key)?.id);
    if (key !== null && holderId !== undefined) {
      skipped.push({ job_id: job.id, key, holder_id: holderId });
      continue;
    }
    if (key !== null) taken.set(key, job.id);
    chosen.push(job);
  }
  return { chosen: chosen.reverse(), skipped: skipped.reverse() };
}

/**
 * The settings change a retry with `overrides` makes to `job`, and what it
 * reports as changed (env by key only: values stay out of the ledger). Raises
 * `INVALID_INPUT` when the merged env would exceed its limit.
 */
export function planSettingsChange(
  job: Job,
  overrides: RetryOverrides,
): { changes: JobSettingsChange; changed: RetriedWithOverrides["changed"] } {
  const changes: JobSettingsChange = {};
  const changed: RetriedWithOverrides["changed"] = {};
  if (overrides.timeoutSeconds !== undefined) {
    changes.timeout_seconds = overrides.timeoutSeconds;
    changed.timeout_seconds = { from: job.timeout_seconds, to: overrides.timeoutSeconds };
  }
  if (overrides.maxRetries !== undefined) {
    changes.max_retries = overrides.maxRetries;
    changed.max_retries = { from: job.max_retries, to: overrides.maxRetries };
  }
  if (overrides.env !== undefined && Object.keys(overrides.env).length > 0) {
    const env = { ...job.env, ...overrides.env };
    if (Object.keys(env).length > LIMITS.env.max)
      throw invalidValue("env", `${Object.keys(env).length} variables`, `at most ${LIMITS.env.max}`);
    changes.env = env;
    changed.env_set = Object.keys(overrides.env).sort();
  }
  return { changes, changed };
}
