/**
 * Recording how an attempt ended: decide the outcome ({@link decideOutcome}),
 * write it guarded by owner and attempt number, and append its events — one
 * transaction (docs/architecture.md "Fencing", "Retries and backoff").
 */
import type { Job } from "../store/model.ts";
import type { AttemptProcess, ClaimRequest, Store, StoreWriter } from "../store/store.ts";
import { type ClaimedAttempt, toClaimedAttempts } from "./claim.ts";
import { storedSignature } from "./failure-signature.ts";
import { mapInOrder } from "./in-order.ts";
import { decideOutcome, OUTPUT_WRITE_FAILED, type Outcome, type ProcessEnd } from "./outcome.ts";
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
 * nothing was written (docs/architecture.md "Fencing"). Written a second time
 * by its own worker (the first COMMIT's answer was lost), it writes nothing
 * and returns the outcome recorded the first time.
 */
export async function recordAttemptEnd(
  store: Store,
  ref: AttemptRef,
  end: ProcessEnd,
  now = store.now(),
  eventWorkerId: string | null = ref.workerId,
): Promise<Outcome | null> {
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
export async function recordAttemptEndsAndClaim(
  store: Store,
  ends: AttemptEnd[],
  claim: ClaimRequest,
): Promise<{ outcomes: (Outcome | null)[]; claimed: ClaimedAttempt[] | null }> {
  const { result, claimed } = await store.writeAndClaim((tx) => recordAllIn(tx, ends), claim);
  return { outcomes: result, claimed: claimed === null ? null : toClaimedAttempts(claimed) };
}

/** {@link recordAttemptEndsAndClaim} without the claim. */
export async function recordAttemptEnds(store: Store, ends: AttemptEnd[]): Promise<(Outcome | null)[]> {
  // A worker's results acknowledge nothing to anyone: not synced on their own (docs/architecture.md "Durability").
  return await store.write((tx) => recordAllIn(tx, ends), { durable: false });
}

/** Each of `ends` recorded by its own worker inside `tx`, in order. */
function recordAllIn(tx: StoreWriter, ends: AttemptEnd[]): Promise<(Outcome | null)[]> {
  return mapInOrder(ends, (e) => recordIn(tx, e.ref, e.end, e.endedAt, e.ref.workerId));
}

/** The write of {@link recordAttemptEnd}, inside `tx`. */
async function recordIn(
  tx: StoreWriter,
  ref: AttemptRef,
  end: ProcessEnd,
  now: number,
  eventWorkerId: string | null,
): Promise<Outcome | null> {
  // Two independent reads, awaited together: PostgreSQL sends them in one round trip (docs/architecture.md "The driver contract").
  const [job, settings] = await Promise.all([tx.getJob(ref.jobId), readSettings(tx)]);
  if (!job) return null;
  if (job.state !== "running" || job.locked_by !== ref.workerId || job.last_attempt_no !== ref.attemptNo) {
    // Not ours any more, or ours already: the same result written again after its commit's answer was lost.
    return eventWorkerId === ref.workerId ? await recordedEarlier(tx, job, ref) : null;
  }
  if (ref.staleBefore !== undefined && (job.heartbeat_at ?? 0) >= ref.staleBefore) return null;
  // A full disk's own budget is counted from the job's history (docs/architecture.md "Storage conditions").
  const counted =
    end.kind === "output_write_failed"
      ? { ...end, lostBefore: (await tx.attemptsOf(ref.jobId)).filter((a) => lostToDisk(a.error)).length }
      : end;
  const outcome = decideOutcome(job, counted, settings, now);
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

/** Whether an attempt's error says it was lost to a full disk (its output could not be written). */
export function lostToDisk(error: string | null): boolean {
  return error?.startsWith(`${OUTPUT_WRITE_FAILED}:`) ?? false;
}

/** The attempt number in an outcome event's detail (`{"attempt": N, …}`), or null. */
function attemptOfDetail(detail: string | null): number | null {
  try {
    const parsed = detail === null ? null : JSON.parse(detail);
    return typeof parsed?.attempt === "number" ? parsed.attempt : null;
  } catch {
    return null;
  }
}

/**
 * The outcome `ref`'s worker already wrote for its attempt (docs/architecture.md
 * "Fencing"): a result retried after the answer to its COMMIT was lost finds
 * its own write, recognised by the ledger (outcome events of that attempt by
 * that worker; nobody else writes them under its id), and reports it as
 * recorded instead of as taken away. Null when the worker wrote no outcome
 * for it: the job was taken from it. `jobState` is the state the write set,
 * from its events; the counters are the job's now.
 */
async function recordedEarlier(tx: StoreWriter, job: Job, ref: AttemptRef): Promise<Outcome | null> {
  const ours = (await tx.eventsOf(ref.jobId)).filter(
    (e) => e.worker_id === ref.workerId && e.event !== "claimed" && attemptOfDetail(e.detail) === ref.attemptNo,
  );
  const attempt = ours.length === 0 ? null : await tx.getAttempt(ref.jobId, ref.attemptNo);
  if (!attempt || attempt.state === "running") return null;
  const events = ours.map((e) => e.event);
  const jobState = events.includes("dead")
    ? "dead"
    : events.includes("canceled")
      ? "canceled"
      : events.includes("succeeded")
        ? "done"
        : "queued";
  const retryIn = (JSON.parse(ours[0]!.detail ?? "{}") as { retry_in?: number }).retry_in;
  return {
    attemptState: attempt.state,
    failureReason: attempt.failure_reason,
    exitCode: attempt.exit_code,
    signal: attempt.signal,
    error: attempt.error,
    jobState,
    attempts: job.attempts,
    crashes: job.crashes,
    nextRunAt: job.next_run_at,
    backoffSeconds: retryIn ?? null,
    events,
  };
}
