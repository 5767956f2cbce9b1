/**
 * `retry` (docs/architecture.md "Retry"): dead or canceled jobs go back to
 * `queued` with fresh budgets (history kept) and a `retried` ledger row; a
 * running one only with `force`, its attempt closed as canceled and its
 * ownership cleared, so the old worker's late writes change nothing. The
 * decisions (which job may go, which key holder wins, which need blocks, what
 * settings change) are the pure planners of `src/ops/retry.ts` and
 * `src/ops/retry-needs.ts`; this file reads, decides and writes in one
 * transaction.
 */
import { SpoolError } from "../../contract/errors.ts";
import type { Job, JobState } from "../../model/job.ts";
import type { RetryOverrides } from "../../ops/job-spec.ts";
import {
  checkRetry,
  hasOverrides,
  keyConflict,
  planRetryAll,
  planSettingsChange,
  RETRYABLE_STATES,
  type RetriedJob,
  type RetriedWithOverrides,
  type RetryOutcome,
  type RetryTarget,
} from "../../ops/retry.ts";
import { type BlockedRetry, blockedError, blockedRetries } from "../../ops/retry-needs.ts";
import type { RetryNeedRow } from "../bulk-rows.ts";
import type { Store } from "../store.ts";
import type { StoreWriter } from "../writer.ts";
import { keyHolder, resolveUnique } from "./job-refs.ts";
import { writeOrDryRun } from "./job-targets.ts";
import { blockedByNeeds, rootOf } from "./need-checks.ts";
import { closedDependentsIn } from "./triage-dependents.ts";

/** How to retry (see {@link retryJobs}). */
export interface RetryOptions {
  /** Take running jobs too (`--force`); never with `overrides`. */
  force: boolean;
  /** Seconds a forced job waits before it is due: its old worker's time to see the loss and stop. */
  forcedHoldoffSeconds?: number;
  /** Run and roll back: the outcome (or the error) of the retry, nothing changed. */
  dryRun?: boolean;
  overrides?: RetryOverrides;
  /** Revive the dependents each retried job's failure closed (default true; `--no-cascade`: false). */
  cascade?: boolean;
}

/**
 * Retries jobs in one write transaction, each checked against the keys the
 * transaction holds so far, so that no two active jobs ever share an
 * idempotency key (docs/architecture.md "Idempotency"):
 *  - named jobs (`refs`) are all or nothing: `NOT_FOUND`, `CONFLICT` (done,
 *    queued, or a need dead or canceled), `SAFETY_BLOCK` (running without
 *    `force`) or `IDEMPOTENCY_CONFLICT` (its key held by an active job, or by
 *    another job of the same request), and nothing changed;
 *  - a filter (`--all`) requeues, per key, only the newest matching job whose
 *    key is free (the others in `skipped`), and leaves out (`blocked`) a job
 *    whose need is dead or canceled and not retried with it.
 * Guards: a named job's requeue is an UPDATE guarded by the state it was read
 * in (`CONFLICT` when it changed meanwhile); `--all` without overrides is one
 * UPDATE per state with the filter and the guard in its WHERE (a job that left
 * dead or canceled meanwhile is left out); the unique index of active keys
 * refuses a second active job with one key (`IDEMPOTENCY_CONFLICT`) whoever
 * writes it. Events: a `retried` row per job (`{"from":…}`, plus what a forced
 * retry abandoned or what overrides changed), and the revived dependents'
 * rows (`cascade`). Wakes every worker. A forced
 * job comes due `forcedHoldoffSeconds` after `now` (epoch seconds). With
 * `dryRun` the same transaction runs and is rolled back.
 */
export async function retryJobs(
  store: Store,
  target: RetryTarget,
  opts: RetryOptions,
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
  return writeOrDryRun(store, opts.dryRun === true, async (tx) => {
    const outcome =
      "refs" in target
        ? await retryNamed(tx, target.refs, opts.force, now, overrides, opts.forcedHoldoffSeconds ?? 0)
        : await retryMatching(tx, target.filter, now, overrides);
    if (opts.cascade !== false) await revive(tx, "refs" in target, outcome, now);
    else await leftClosed(tx, "refs" in target, outcome);
    return outcome;
  });
}

/**
 * Changes the timeout, retry budget and/or env of dead or canceled jobs and
 * requeues them, in ONE transaction (triage's "retry with …", `retry ID…
 * --timeout …`): {@link retryJobs} of named jobs with `overrides`, all or
 * nothing; each job's `changed` says what changed. Raises like `retryJobs`,
 * or `INVALID_INPUT` when a merged env would exceed its limit; then nothing changed.
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

/** Named jobs: resolved, all checked, then requeued one by one, each key checked against those requeued before it. */
async function retryNamed(
  tx: StoreWriter,
  refs: string[],
  force: boolean,
  now: number,
  overrides: RetryOverrides | null,
  forcedHoldoffSeconds: number,
): Promise<RetryOutcome> {
  const jobs = await resolveUnique(tx, refs);
  for (const job of jobs) checkRetry(job, force);
  const [blocked] = await blockedByNeeds(tx, jobs);
  if (blocked) throw blockedError(blocked, "retry", await rootOf(tx, blocked));
  const requeued = new Set<number>();
  const out: RetriedJob[] = [];
  for (const job of jobs) {
    const holder = await keyHolder(tx, job);
    if (holder) throw keyConflict(job, holder, requeued.has(holder.id));
    requeued.add(job.id);
    out.push(await requeueChecked(tx, job, now, overrides, forcedHoldoffSeconds));
  }
  return { jobs: out, skipped: [] };
}

/**
 * `--all`: the matching dead or canceled jobs less those {@link planRetryAll}
 * skips for their key and those blocked by a need. Without overrides it acts
 * in SQL: it reads only the keyed matches and the dead needs of the matches,
 * decides, and requeues the rest with one UPDATE per state (`requeueMatching`,
 * guard and filter in its WHERE), not by reading every job first.
 */
async function retryMatching(
  tx: StoreWriter,
  filter: Extract<RetryTarget, { filter: unknown }>["filter"],
  now: number,
  overrides: RetryOverrides | null,
): Promise<RetryOutcome> {
  if (overrides !== null) return retryMatchingWith(tx, filter, now, overrides);
  const keyed = await tx.keyedRetryMatches(filter);
  const plan = planRetryAll(keyed, await activeHolders(tx, keyed));
  const skipped = new Set(plan.skipped.map((s) => s.job_id));
  const blocked = blockedAmongMatches(await tx.retryNeedRows(filter), skipped);
  const ids = await tx.requeueMatching(filter, [...skipped, ...blocked.map((b) => b.job_id)], now);
  const jobs: RetriedJob[] = ids.map((id) => ({ job_id: id, state: "queued" }));
  return { jobs, skipped: plan.skipped, ...(blocked.length > 0 ? { blocked } : {}) };
}

/** The active jobs holding the keys of `jobs`, by key. */
async function activeHolders(tx: StoreWriter, jobs: Job[]): Promise<Map<string, Job>> {
  const keys = jobs.flatMap((j) => (j.idempotency_key === null ? [] : [j.idempotency_key]));
  return keys.length > 0 ? tx.findActiveJobsByKeys(keys) : new Map<string, Job>();
}

/**
 * {@link blockedRetries} over `retryNeedRows`: the retried set is every
 * matching need `planRetryAll` did not skip, and a skipped job is not judged.
 */
function blockedAmongMatches(rows: RetryNeedRow[], skipped: Set<number>): BlockedRetry[] {
  const unmet = new Map<number, number[]>();
  const stateOf = new Map<number, JobState>();
  const lost = new Map<number, number | null>();
  const retried: number[] = [];
  for (const r of rows) {
    if (r.need_id === null || r.need_state === "deleted") {
      if (!skipped.has(r.job_id)) lost.set(r.job_id, null);
      continue;
    }
    stateOf.set(r.need_id, r.need_state);
    if (r.need_matches && !skipped.has(r.need_id)) retried.push(r.need_id);
    if (!skipped.has(r.job_id)) unmet.set(r.job_id, [...(unmet.get(r.job_id) ?? []), r.need_id]);
  }
  return blockedRetries(retried, unmet, stateOf, lost);
}

/** `--all` with overrides: each matching job read, its settings changed, then requeued ({@link requeueChecked}). */
async function retryMatchingWith(
  tx: StoreWriter,
  filter: Extract<RetryTarget, { filter: unknown }>["filter"],
  now: number,
  overrides: RetryOverrides,
): Promise<RetryOutcome> {
  // Newest first, so that of several jobs sharing a key the newest is the one requeued.
  const matches = (await tx.listJobs({ ...filter, limit: Number.MAX_SAFE_INTEGER })).filter((j) =>
    (RETRYABLE_STATES as readonly string[]).includes(j.state),
  );
  const plan = planRetryAll(matches, await activeHolders(tx, matches));
  const blocked = await blockedByNeeds(tx, plan.chosen);
  const out = new Set(blocked.map((b) => b.job_id));
  const chosen = blocked.length > 0 ? plan.chosen.filter((j) => !out.has(j.id)) : plan.chosen;
  const jobs: RetriedJob[] = [];
  for (const job of chosen) jobs.push(await requeueChecked(tx, job, now, overrides, 0));
  return { jobs, skipped: plan.skipped, ...(blocked.length > 0 ? { blocked } : {}) };
}

/**
 * Revives the dependents the failure of each retried job had closed
 * (`reviveDependents`): named jobs one by one, so each reports its own;
 * `--all` at once, into `outcome.revived`.
 */
async function revive(tx: StoreWriter, named: boolean, outcome: RetryOutcome, now: number): Promise<void> {
  if (named) {
    for (const job of outcome.jobs) {
      const revived = await tx.reviveDependents([job.job_id], now);
      if (revived.length > 0) job.revived = revived;
    }
    return;
  }
  if (outcome.jobs.length === 0) return;
  const revived = await tx.reviveDependents(
    outcome.jobs.map((j) => j.job_id),
    now,
  );
  if (revived.length > 0) outcome.revived = revived.sort((a, b) => a - b);
}

/**
 * `--no-cascade`: the dependents each retried job's failure closed, which
 * stay closed (down the chain), named on the job (named jobs) or once for
 * all (`--all`), so that the retry says what it left (docs/architecture.md "Retry").
 */
async function leftClosed(tx: StoreWriter, named: boolean, outcome: RetryOutcome): Promise<void> {
  if (named) {
    for (const job of outcome.jobs) {
      const left = await closedDependentsIn(tx, [job.job_id]);
      if (left.length > 0) job.left_closed = left;
    }
    return;
  }
  if (outcome.jobs.length === 0) return;
  const left = await closedDependentsIn(
    tx,
    outcome.jobs.map((j) => j.job_id),
  );
  if (left.length > 0) outcome.left_closed = left;
}

/**
 * Requeues one checked job, first changing its settings when `overrides` asks
 * (`updateJobSettings`, guarded by its state); the `retried` row then says
 * what changed. Raises `CONFLICT` when the job changed state meanwhile.
 */
async function requeueChecked(
  tx: StoreWriter,
  job: Job,
  now: number,
  overrides: RetryOverrides | null,
  forcedHoldoffSeconds: number,
): Promise<RetriedJob> {
  if (overrides === null) return requeue(tx, job, now, {}, forcedHoldoffSeconds);
  const { changes, changed } = planSettingsChange(job, overrides);
  if (Object.keys(changes).length > 0 && !(await tx.updateJobSettings(job.id, job.state, changes))) {
    throw new SpoolError("CONFLICT", `job ${job.id} changed state while being retried`, { detail: { job_id: job.id } });
  }
  return { ...(await requeue(tx, job, now, Object.keys(changed).length ? { changed } : {})), changed };
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
