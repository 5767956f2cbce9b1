/**
 * Recording how an attempt ended: decide the outcome ({@link decideOutcome}),
 * write it guarded by owner and attempt number, and append its events — one
 * transaction (docs/architecture.md "Fencing", "Retries and backoff").
 */
import type { AttemptProcess, ClaimRequest, Store, StoreWriter } from "../store/store.ts";
import { toClaimedAttempts, type ClaimedAttempt } from "./claim.ts";
import { storedSignature } from "./failure-signature.ts";
import { decideOutcome, type Outcome, type ProcessEnd } from "./outcome.ts";
import { mapInOrder } from "./in-order.ts";
import { readSettings } from "./settings.ts";

/** The attempt being recorded and the worker that owned it. */
export interface AttemptRef {
  jobId: number;
  attemptNo: number;
  /** The owning worker; the write changes nothing unless it still owns the job. */
  workerId: string;
  /** Reaping only: write nothing unless the heartbeat is still older than this (epoch seconds). */
  staleBefore?: number;
  /** The attempt's last non-empty stderr line, read before the write (see failure-signature.ts); absent: not read. */
  stderrLastLine?: string | null;
  /** The attempt's process group when no heartbeat recorded it yet (docs/architecture.md "The claim"). */
  process?: AttemptProcess | null;
}

/**
 * Records an attempt's end. Returns the outcome, or null when the worker no
 * longer owns the attempt (canceled, force-retried or reaped meanwhile): then
 * nothing was written (docs/architecture.md "Fencing").
 */
export async function recordAttemptEnd(store: Store, ref: AttemptRef, end: ProcessEnd, now = store.now(), eventWorkerId: string | null = ref.workerId): Promise<Outcome | null> {
  return await store.write((tx) => recordIn(tx, ref, end, now, eventWorkerId));
}

/** One ended attempt to record: who owned it, how it ended, when (epoch seconds). */
export interface AttemptEnd {
  ref: AttemptRef;
  end: ProcessEnd;
  endedAt: number;
}

/**
 * Records several attempts' ends in ONE transaction (a worker's results that
 * came in together: one commit for all), each decided and fenced on its own as
 * {@link recordAttemptEnd} does, and claims for `claim` (the slots they free)
 * in the same commit when the store can (Store.writeAndClaim;
 * docs/architecture.md "The claim"). `outcomes` match `ends` in order, null
 * for an attempt the worker no longer owned; `claimed` is null when the store
 * did not claim. Raises what either raises; then nothing was written.
 */
export async function recordAttemptEndsAndClaim(store: Store, ends: AttemptEnd[], claim: ClaimRequest): Promise<{ outcomes: (Outcome | null)[]; claimed: ClaimedAttempt[] | null }> {
  const { result, claimed } = await store.writeAndClaim((tx) => mapInOrder(ends, (e) => recordIn(tx, e.ref, e.end, e.endedAt, e.ref.workerId)), claim);
  return { outcomes: result, claimed: claimed === null ? null : toClaimedAttempts(claimed) };
}

/** {@link recordAttemptEndsAndClaim} without the claim. */
export async function recordAttemptEnds(store: Store, ends: AttemptEnd[]): Promise<(Outcome | null)[]> {
  return await store.write((tx) => mapInOrder(ends, (e) => recordIn(tx, e.ref, e.end, e.endedAt, e.ref.workerId)));
}

/** The write of {@link recordAttemptEnd}, inside `tx`. */
async function recordIn(tx: StoreWriter, ref: AttemptRef, end: ProcessEnd, now: number, eventWorkerId: string | null): Promise<Outcome | null> {
  // Two independent reads, awaited together: PostgreSQL sends them in one round trip (docs/architecture.md "The driver contract").
  const [job, settings] = await Promise.all([tx.getJob(ref.jobId), readSettings(tx)]);
  if (!job || job.state !== "running" || job.locked_by !== ref.workerId || job.last_attempt_no !== ref.attemptNo) return null;
  if (ref.staleBefore !== undefined && (job.heartbeat_at ?? 0) >= ref.staleBefore) return null;
  const outcome = decideOutcome(job, end, settings, now);
  const detail = JSON.stringify({
    attempt: ref.attemptNo,
    ...(outcome.error ? { error: outcome.error } : {}),
    ...(outcome.backoffSeconds !== null ? { retry_in: outcome.backoffSeconds } : {}),
  });
  const written = await tx.recordAttempt({
    jobId: ref.jobId,
    attemptNo: ref.attemptNo,
    workerId: ref.workerId,
    now,
    attemptState: outcome.attemptState,
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    error: outcome.error,
    failureReason: outcome.failureReason,
    stderrLastLine: ref.stderrLastLine ?? null,
    // Masked here, once per attempt, so that triage's GROUP BY yields a row per failure.
    stderrSignature: ref.stderrLastLine == null ? null : storedSignature(ref.stderrLastLine),
    process: ref.process ?? null,
    jobState: outcome.jobState,
    attempts: outcome.attempts,
    crashes: outcome.crashes,
    nextRunAt: outcome.nextRunAt,
    events: outcome.events.map((event) => ({ event, workerId: eventWorkerId, detail })),
  });
  if (!written) return null;
  return outcome;
}
