/**
 * `retry` (docs/architecture.md "Retry"): a dead or canceled job goes back to `queued` with a
 * fresh budget (`attempts` and `crashes` reset, history kept) and a `retried`
 * event. A running job only with `--force`: its attempt is closed as canceled
 * and its ownership cleared, so the old worker's late writes change nothing.
 * Several jobs, or every job matching a filter, are requeued in one
 * transaction: all or none.
 */

import { invalidValue, SpoolError, type Warning } from "../contract/errors.ts";
import type { Job, JobFilter, JobState } from "../store/model.ts";
import type { JobSettingsChange, Store, StoreWriter } from "../store/store.ts";
import { ENV_KEY } from "./add.ts";
import { mapInOrder } from "./in-order.ts";
import { queuedJobHint, resolveJob } from "./jobs.ts";
import { LIMITS } from "./limits.ts";
import { type BlockedRetry, blockedByNeeds, blockedError, reviveIn } from "./retry-needs.ts";
import { canTransition } from "./states.ts";
import { parseInteger, parsePairs, parseTimeout } from "./values.ts";

/** One requeued job, as `retry --json` reports it; `changed` only when the retry changed settings (`--timeout`, `--max-retries`, `--env`). */
export interface RetriedJob {
  job_id: number;
  state: "queued";
  changed?: RetriedWithOverrides["changed"];
  /** Dependents its failure had closed, queued again with it (docs/architecture.md "Dependencies"); absent when none. */
  revived?: number[];
}

/** States `retry --all` may select. */
export const RETRYABLE_STATES = ["dead", "canceled"] as const satisfies readonly JobState[];

/** Which jobs to retry: named ones, or every job matching a filter (`--all`). */
export type RetryTarget = { refs: string[] } | { filter: Omit<JobFilter, "limit"> & { states: JobState[] } };

/** Resolves references inside a transaction, dropping duplicates (two refs naming one job). */
export async function resolveUnique(tx: StoreWriter, refs: string[]): Promise<Job[]> {
  const seen = new Map<number, Job>();
  for (const ref of refs) {
    const job = await resolveJob(tx, ref);
    if (!seen.has(job.id)) seen.set(job.id, job);
  }
  return [...seen.values()];
}

/** Raises unless `job` may be retried (with `force` for a running job). */
function checkRetry(job: Job, force: boolean): void {
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
 * The active job that holds `job`'s idempotency key, other than `job` itself,
 * read inside the retry's own transaction: a job requeued earlier in the same
 * transaction counts (docs/architecture.md "Idempotency": one active job per
 * key, for retry as for add). Null when the key is free or the job has none.
 */
export async function keyHolder(tx: StoreWriter, job: Job): Promise<Job | null> {
  if (job.idempotency_key === null) return null;
  const holder = await tx.findActiveJobByKey(job.idempotency_key);
  return holder && holder.id !== job.id ? holder : null;
}

/**
 * `IDEMPOTENCY_CONFLICT` (exit 5) for a retry of `job` while `holder` holds
 * its key: an active job, or (`inRequest`) one this same retry requeues.
 */
function keyConflict(job: Job, holder: Job, inRequest = false): SpoolError {
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

/**
 * Requeues one checked job and appends its `retried` event (`extra` joins the event's detail).
 * A running job (`--force`) comes due `forcedHoldoffSeconds` later, not at once: its old
 * worker sees the loss at its next heartbeat and stops the process within the kill grace,
 * and until then a new attempt would run beside the old one (docs/architecture.md "Retry").
 */
async function requeue(
  tx: StoreWriter,
  job: Job,
  now: number,
  extra: Record<string, unknown> = {},
  forcedHoldoffSeconds = 0,
): Promise<RetriedJob> {
  const detail: Record<string, unknown> = { from: job.state, ...extra };
  let dueAt = now;
  if (job.state === "running") {
    // Close the attempt for its worker: its heartbeat and result are then refused
    // (they are guarded by locked_by and last_attempt_no, docs/architecture.md "Fencing").
    await tx.closeAttempt({
      jobId: job.id,
      attemptNo: job.last_attempt_no,
      state: "canceled",
      failureReason: "canceled",
      error: "abandoned by retry --force",
      now,
    });
    detail.forced = true;
    detail.abandoned_attempt = job.last_attempt_no;
    detail.worker = job.locked_by;
    dueAt = now + forcedHoldoffSeconds;
    detail.due_at = dueAt;
  }
  if (!(await tx.requeueJob(job.id, job.state, dueAt))) {
    throw new SpoolError("CONFLICT", `job ${job.id} changed state while being retried`, { detail: { job_id: job.id } });
  }
  await tx.appendEvent(job.id, "retried", null, JSON.stringify(detail), now);
  return { job_id: job.id, state: "queued" };
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
}

/**
 * Retries jobs in one write transaction (docs/architecture.md "Retry"), one
 * after another, each checked against the keys the transaction holds so far,
 * so that no two active jobs ever share an idempotency key:
 *  - named jobs (`refs`) are all or nothing: `NOT_FOUND`, `CONFLICT` (done,
 *    queued), `SAFETY_BLOCK` (running without `force`) or
 *    `IDEMPOTENCY_CONFLICT` (its key is held by an active job, or by another
 *    job of the same request) and nothing changed;
 *  - a filter (`--all`) requeues, per key, only the newest matching job whose
 *    key is free, and reports the others in `skipped`.
 * The store refuses a requeue that would make a second active job with a key
 * (IDEMPOTENCY_CONFLICT) whoever calls it: the rule cannot be bypassed.
 * A forced job (running) comes due `forcedHoldoffSeconds` (seconds) after `now`,
 * the time its old worker needs to see the loss and stop its process.
 * With `dryRun` the same transaction runs and is rolled back: the outcome is
 * what the retry would do (or the error it would raise), and nothing changed.
 */
export async function retryJobs(
  store: Store,
  target: RetryTarget,
  opts: {
    force: boolean;
    forcedHoldoffSeconds?: number;
    dryRun?: boolean;
    overrides?: RetryOverrides;
    /** Revive the dependents each retried job's failure closed (default true; `--no-cascade`: false). */
    cascade?: boolean;
  },
  now = store.now(),
): Promise<RetryOutcome> {
  const overrides = opts.overrides && hasOverrides(opts.overrides) ? opts.overrides : null;
  if (overrides && opts.force) {
    throw new SpoolError(
      "INVALID_INPUT",
      "--force cannot be combined with --timeout, --max-retries or --env: a running job's settings are not changed under it",
      {
        remediation: "stop it first (spoolctl cancel ID --running --yes), then retry it with the new settings",
      },
    );
  }
  try {
    return await store.write(async (tx) => {
      const outcome = await retryIn(tx, target, opts.force, now, overrides, opts.forcedHoldoffSeconds ?? 0);
      if (opts.cascade !== false) await reviveIn(tx, target, outcome, now);
      if (opts.dryRun) throw new DryRunDone(outcome); // rolls the transaction back
      return outcome;
    });
  } catch (error) {
    if (error instanceof DryRunDone) return error.outcome;
    throw error;
  }
}

/** Carries a dry run's outcome out of the write transaction it rolls back. */
class DryRunDone extends Error {
  constructor(readonly outcome: RetryOutcome) {
    super("dry run");
  }
}

/** Whether `o` changes anything (an empty env changes nothing). */
function hasOverrides(o: RetryOverrides): boolean {
  return (
    o.timeoutSeconds !== undefined ||
    o.maxRetries !== undefined ||
    (o.env !== undefined && Object.keys(o.env).length > 0)
  );
}

/**
 * The body of {@link retryJobs}, inside its transaction. Every job is checked
 * ({@link checkRetry}) and its key looked up once, then requeued, with its
 * settings changed first when `overrides` asks ({@link requeueChecked}).
 */
async function retryIn(
  tx: StoreWriter,
  target: RetryTarget,
  force: boolean,
  now: number,
  overrides: RetryOverrides | null,
  forcedHoldoffSeconds: number,
): Promise<RetryOutcome> {
  if ("refs" in target) {
    const jobs = await resolveUnique(tx, target.refs);
    for (const job of jobs) checkRetry(job, force);
    const [blocked] = await blockedByNeeds(tx, jobs);
    if (blocked) throw blockedError(blocked);
    const requeued = new Set<number>();
    return {
      jobs: await mapInOrder(jobs, async (job) => {
        const holder = await keyHolder(tx, job);
        if (holder) throw keyConflict(job, holder, requeued.has(holder.id));
        requeued.add(job.id);
        return requeueChecked(tx, job, now, overrides, forcedHoldoffSeconds);
      }),
      skipped: [],
    };
  }
  // Newest first, so that of several jobs sharing a key the newest is the one requeued.
  const matches = (await tx.listJobs({ ...target.filter, limit: Number.MAX_SAFE_INTEGER })).filter((j) =>
    (RETRYABLE_STATES as readonly string[]).includes(j.state),
  );
  const keys = matches.flatMap((j) => (j.idempotency_key === null ? [] : [j.idempotency_key]));
  const active = keys.length > 0 ? await tx.findActiveJobsByKeys(keys) : new Map<string, Job>();
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
  chosen.reverse();
  const blocked = await blockedByNeeds(tx, chosen);
  if (blocked.length > 0) {
    const out = new Set(blocked.map((b) => b.job_id));
    chosen.splice(0, chosen.length, ...chosen.filter((j) => !out.has(j.id)));
  }
  const jobs =
    overrides === null
      ? await requeueAll(tx, chosen, now)
      : await mapInOrder(chosen, (job) => requeueChecked(tx, job, now, overrides, 0));
  return { jobs, skipped: skipped.reverse(), ...(blocked.length > 0 ? { blocked } : {}) };
}

/**
 * Requeues checked dead or canceled jobs (oldest first) with one statement and
 * appends each one's `retried` event: the batch form of {@link requeue} for
 * `retry --all`. Raises `CONFLICT` when one of them changed state meanwhile.
 */
async function requeueAll(tx: StoreWriter, jobs: Job[], now: number): Promise<RetriedJob[]> {
  if (jobs.length === 0) return [];
  const requeued = new Set(
    await tx.requeueJobs(
      jobs.map((j) => j.id),
      [...RETRYABLE_STATES],
      now,
    ),
  );
  const lost = jobs.find((j) => !requeued.has(j.id));
  if (lost) {
    throw new SpoolError("CONFLICT", `job ${lost.id} changed state while being retried`, {
      detail: { job_id: lost.id },
    });
  }
  for (const job of jobs) await tx.appendEvent(job.id, "retried", null, JSON.stringify({ from: job.state }), now);
  return jobs.map((j) => ({ job_id: j.id, state: "queued" }));
}

/** The warnings of a {@link RetryOutcome}: one `IDEMPOTENCY_KEY_HELD` per skipped job. */
export function retryWarnings(outcome: RetryOutcome): Warning[] {
  const held = outcome.skipped.map((s) => ({
    code: "IDEMPOTENCY_KEY_HELD" as const,
    message: `job ${s.job_id} was not retried: its key ${JSON.stringify(s.key)} belongs to job ${s.holder_id}, which is active now (spoolctl wait ${s.holder_id}, then spoolctl retry ${s.job_id})`,
  }));
  const blocked = (outcome.blocked ?? []).map((b) => ({
    code: "NEED_NOT_RETRIED" as const,
    message: `job ${b.job_id} was not retried: it needs job ${b.need_id}, which is ${b.need_state}; retry job ${b.need_id} and it is revived with it`,
  }));
  return [...held, ...blocked];
}

/** Run settings a retry may change on the way (`triage`): absent fields stay as they are. */
export interface RetryOverrides {
  timeoutSeconds?: number;
  maxRetries?: number;
  /** Variables to set (added or replaced); the job's other variables stay. */
  env?: Record<string, string>;
}

/**
 * Parses overrides as a person types them, with the rules and bounds of `add`
 * (docs/architecture.md "Adding a job"), so a retried job can hold nothing `add` would refuse. Raises
 * `INVALID_INPUT` naming the field.
 */
export function parseRetryOverrides(input: { timeout?: string; maxRetries?: string; env?: string[] }): RetryOverrides {
  const out: RetryOverrides = {};
  if (input.timeout !== undefined) out.timeoutSeconds = parseTimeout("timeout", input.timeout);
  if (input.maxRetries !== undefined)
    out.maxRetries = parseInteger("max-retries", input.maxRetries, LIMITS.max_retries.min, LIMITS.max_retries.max);
  if (input.env !== undefined) {
    const env = parsePairs("env", input.env, ENV_KEY, "a variable name ([A-Za-z_][A-Za-z0-9_]*)");
    if (Object.values(env).some((v) => v.includes("\0"))) throw invalidValue("env", "…", "values without NUL bytes");
    out.env = env;
  }
  return out;
}

/** A job retried with changed settings; `changed` lists what changed (env by key only: values stay out of the ledger). */
export interface RetriedWithOverrides extends RetriedJob {
  changed: {
    timeout_seconds?: { from: number; to: number };
    max_retries?: { from: number; to: number };
    env_set?: string[];
  };
}

/**
 * Requeues one job {@link retryIn} checked (state and key), first changing
 * its settings when `overrides` asks; the `retried` event's detail then says
 * what changed. Raises `INVALID_INPUT` when the merged env would exceed its
 * limit, `CONFLICT` when the job changed state meanwhile.
 */
async function requeueChecked(
  tx: StoreWriter,
  job: Job,
  now: number,
  overrides: RetryOverrides | null,
  forcedHoldoffSeconds: number,
): Promise<RetriedJob> {
  if (overrides === null) return requeue(tx, job, now, {}, forcedHoldoffSeconds);
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
  if (Object.keys(changes).length > 0 && !(await tx.updateJobSettings(job.id, job.state, changes))) {
    throw new SpoolError("CONFLICT", `job ${job.id} changed state while being retried`, { detail: { job_id: job.id } });
  }
  return { ...(await requeue(tx, job, now, Object.keys(changed).length ? { changed } : {})), changed };
}

/**
 * Changes the timeout, retry budget and/or env of dead or canceled jobs and
 * requeues them, in ONE transaction (triage's "retry with …", `retry ID…
 * --timeout …`): {@link retryJobs} with `overrides`, all or nothing, with the
 * key rule of named jobs (two of them sharing a key is
 * `IDEMPOTENCY_CONFLICT`); each job's `changed` says what changed. Raises
 * like `retryJobs`, or `INVALID_INPUT` when a merged env would exceed its
 * limit; then nothing changed.
 */
export async function retryWithOverrides(
  store: Store,
  refs: string[],
  overrides: RetryOverrides,
  now = store.now(),
): Promise<RetriedWithOverrides[]> {
  const { jobs } = await retryJobs(store, { refs }, { force: false, overrides }, now);
  return jobs.map((j) => ({ ...j, changed: j.changed ?? {} }));
}
