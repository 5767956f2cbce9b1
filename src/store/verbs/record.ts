/**
 * Recording how attempts ended (docs/architecture.md "Fencing", "Retries and
 * backoff"): read the job and the settings, decide the outcome with the pure
 * {@link decideOutcome} of `src/ops/outcome.ts`, write it guarded by owner and
 * attempt number with its events — one transaction per verb. `complete` also
 * claims the slots the results free in the same commit (docs/architecture.md "The claim").
 */

import type { Job } from "../../model/job.ts";
import { decideOutcome, failedFastOutcome, type Outcome, type ProcessEnd } from "../../ops/outcome.ts";
import { earlierOutcome, lostToDisk, ownOutcomeEvents } from "../../ops/record.ts";
import type { AttemptProcess, ClaimRequest } from "../attempt-types.ts";
import type { Store } from "../store.ts";
import type { StoreWriter } from "../writer.ts";
import { type ClaimedAttempt, toClaimedAttempts } from "./claim.ts";
import { readSettings } from "./settings.ts";

/** An attempt's last non-empty stderr line and its failure signature as stored (see src/ops/failure-signature.ts). */
interface StderrTail {
  lastLine: string;
  /** `<mask version>|<masked line>`: masked by the caller, once per attempt, so triage's GROUP BY yields a row per failure. */
  signature: string;
}

/** The attempt being recorded and the worker that owned it. */
export interface AttemptRef {
  jobId: number;
  attemptNo: number;
  /** The owning worker; the write changes nothing unless it still owns the job. */
  workerId: string;
  /** The attempt's stderr tail, read before the write; null or absent: none (not read, or empty). */
  stderr?: StderrTail | null;
  /** The attempt's process group when no heartbeat recorded it yet (docs/architecture.md "The claim"). */
  process?: AttemptProcess | null;
}

/**
 * Who writes an attempt's end: its own worker (the events carry its id; a
 * repeat of its write finds the first one), a reaper that judged the worker
 * gone (`staleBefore`, epoch seconds: write nothing unless the lease is still
 * older; null: the death is certain), or an operator (events without a worker).
 */
export type RecordedBy =
  | { kind: "owner" }
  | { kind: "reaper"; reaperId: string; staleBefore: number | null }
  | { kind: "operator" };

/** One ended attempt to record by its own worker: how it ended, when (epoch seconds). */
export interface AttemptEnd {
  ref: AttemptRef;
  end: ProcessEnd;
  endedAt: number;
}

/**
 * Records an attempt's end, dated `now` (epoch seconds), in one write
 * transaction. Guard: the job must still be `running`, locked by
 * `ref.workerId`, on `ref.attemptNo` (and, for a reaper with `staleBefore`,
 * its lease older than that), re-checked in the write (`recordAttempt` is
 * fenced in SQL by the same triple). Events: the outcome's (`succeeded`,
 * `failed`, `timed_out`, `reaped`, `interrupted`, `dead`, `canceled`), with
 * detail `{"attempt", "error"?, "retry_in"?}`; wake signals as the driver's
 * `recordAttempt` sends them (a requeue wakes the lane; an end frees a slot).
 * Returns the outcome, or null when the worker no longer owns the attempt
 * (nothing written). Written a second time by its own worker (the first
 * COMMIT's answer was lost), it writes nothing and returns the outcome
 * recorded the first time. Raises like {@link Store.write} (`LOCKED`,
 * `INTERNAL` with `detail.storage`).
 */
export async function recordAttemptEnd(
  store: Store,
  ref: AttemptRef,
  end: ProcessEnd,
  by: RecordedBy = { kind: "owner" },
  now = store.now(),
): Promise<Outcome | null> {
  return await store.write((tx) => recordIn(tx, ref, end, now, by));
}

/**
 * Records several attempts' ends by their worker in ONE write transaction, not
 * synced on its own (a worker's results acknowledge nothing to anyone:
 * docs/architecture.md "Durability"), each decided and fenced on its own as
 * {@link recordAttemptEnd} does. Outcomes match `ends` in order, null for an
 * attempt the worker no longer owned. Raises like {@link Store.write}; then nothing was written.
 */
export async function recordAttemptEnds(store: Store, ends: AttemptEnd[]): Promise<(Outcome | null)[]> {
  return await store.write((tx) => recordAllIn(tx, ends), { durable: false });
}

/**
 * "Complete many": {@link recordAttemptEnds} and, in the same commit when the
 * store can, the claim `claim` of the slots they free (`Store.writeAndClaim`;
 * docs/architecture.md "The claim"): one commit per job while the lane has
 * work. Guard and events: the results' (see {@link recordAttemptEnd}), then the
 * claim's (`claimed`; the lane's pause and slots read by the claim statement).
 * `claimed` is null when the store did not claim (an absent queue). Raises
 * what either raises; then nothing was written.
 */
export async function complete(
  store: Store,
  ends: AttemptEnd[],
  claim: ClaimRequest,
): Promise<{ outcomes: (Outcome | null)[]; claimed: ClaimedAttempt[] | null }> {
  const { result, claimed } = await store.writeAndClaim((tx) => recordAllIn(tx, ends), claim);
  return { outcomes: result, claimed: claimed === null ? null : toClaimedAttempts(claimed) };
}

/** Each of `ends` recorded by its own worker inside `tx`, in order (one connection: never two calls at once). */
async function recordAllIn(tx: StoreWriter, ends: AttemptEnd[]): Promise<(Outcome | null)[]> {
  const out: (Outcome | null)[] = [];
  for (const e of ends) out.push(await recordIn(tx, e.ref, e.end, e.endedAt, { kind: "owner" }));
  return out;
}

/** The write of {@link recordAttemptEnd}, inside `tx`. */
async function recordIn(
  tx: StoreWriter,
  ref: AttemptRef,
  end: ProcessEnd,
  now: number,
  by: RecordedBy,
): Promise<Outcome | null> {
  const eventWorkerId = by.kind === "owner" ? ref.workerId : by.kind === "reaper" ? by.reaperId : null;
  // Two independent reads, awaited together: PostgreSQL sends them in one round trip (docs/architecture.md "The driver contract").
  const [job, settings] = await Promise.all([tx.getJob(ref.jobId), readSettings(tx)]);
  if (!job) return null;
  if (job.state !== "running" || job.locked_by !== ref.workerId || job.last_attempt_no !== ref.attemptNo) {
    // Not ours any more, or ours already: the same result written again after its commit's answer was lost.
    return eventWorkerId === ref.workerId ? await recordedEarlier(tx, job, ref) : null;
  }
  if (by.kind === "reaper" && by.staleBefore !== null && (job.heartbeat_at ?? 0) >= by.staleBefore) return null;
  // A full disk's own budget is counted from the job's history (docs/architecture.md "Storage conditions").
  const counted =
    end.kind === "output_write_failed"
      ? { ...end, lostBefore: (await tx.attemptsOf(ref.jobId)).filter((a) => lostToDisk(a.error)).length }
      : end;
  let outcome = decideOutcome(job, counted, settings, now);
  // A success that came after its batch failed fast and asked it to stop is no pass (docs/architecture.md "Batches").
  if (outcome.jobState === "done" && job.cancel_requested && job.batch !== null) {
    const batch = await tx.getBatch(job.batch);
    if (batch && batch.failed_at !== null) outcome = failedFastOutcome(outcome, batch.name, batch.failed_job_id);
  }
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
    stderrLastLine: ref.stderr?.lastLine ?? null,
    stderrSignature: ref.stderr?.signature ?? null,
    process: ref.process ?? null,
    jobState: outcome.jobState,
    attempts: outcome.attempts,
    crashes: outcome.crashes,
    nextRunAt: outcome.nextRunAt,
    events: [
      ...outcome.events.map((event) => ({ event, workerId: eventWorkerId, detail })),
      ...leftEvent(end, ref.attemptNo, eventWorkerId),
    ],
  });
  if (!written) return null;
  return outcome;
}

/**
 * The `left_running` event of an attempt whose leader left processes running
 * (docs/architecture.md "Leftover processes"), detail `{"attempt", "pids",
 * "killed"}`; none when it left nothing.
 */
function leftEvent(
  end: ProcessEnd,
  attempt: number,
  workerId: string | null,
): { event: "left_running"; workerId: string | null; detail: string }[] {
  const left = end.kind === "exited" || end.kind === "signaled" ? end.left : undefined;
  if (!left || left.pids.length === 0) return [];
  return [
    { event: "left_running", workerId, detail: JSON.stringify({ attempt, pids: left.pids, killed: left.killed }) },
  ];
}

/**
 * The outcome `ref`'s worker already wrote for its attempt, read in `tx`
 * (docs/architecture.md "Fencing"; the decision is {@link earlierOutcome}):
 * null when it wrote none, the job was taken from it.
 */
async function recordedEarlier(tx: StoreWriter, job: Job, ref: AttemptRef): Promise<Outcome | null> {
  const ours = ownOutcomeEvents(await tx.eventsOf(ref.jobId), ref.workerId, ref.attemptNo);
  const attempt = ours.length === 0 ? null : await tx.getAttempt(ref.jobId, ref.attemptNo);
  return earlierOutcome(job, attempt, ours);
}
