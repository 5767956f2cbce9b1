/**
 * Reading attempts' output (docs/architecture.md "The operations", "Reads";
 * "Output"): which attempt a reference names, each stream's tail from its file
 * or from the copy its worker shipped into a shared database, and the chunks
 * `output --follow` reads. Each verb is one read snapshot: no guard, no event,
 * no wake. The `…In` helpers compose row reads inside a verb's transaction and
 * are for the verbs of this folder only.
 */
import { SpoolError } from "../../contract/errors.ts";
import type { Attempt, Job } from "../../model/job.ts";
import { type AttemptOutput, readTail, type StreamName, type StreamView, tailView } from "../../ops/output.ts";
import type { HealthContext, WorkerHealth } from "../../ops/worker-health.ts";
import type { OutputStream, ShippedOutput, StoreReader } from "../reader.ts";
import type { SnapshotReader } from "../store.ts";
import { resolveJob } from "./job-refs.ts";
import { jobWorkerHealth } from "./worker-health.ts";

/**
 * The attempt to show: `attemptNo`, or the latest (null when the job has no
 * attempt yet). Raises `NOT_FOUND` for an attempt that does not exist.
 */
export async function pickAttemptIn(tx: StoreReader, job: Job, attemptNo: number | null): Promise<Attempt | null> {
  if (attemptNo !== null) {
    const attempt = await tx.getAttempt(job.id, attemptNo);
    if (!attempt) {
      throw new SpoolError("NOT_FOUND", `job ${job.id} has no attempt ${attemptNo} (it has ${job.last_attempt_no})`, {
        remediation: `run: spoolctl show ${job.id}  (to list its attempts)`,
      });
    }
    return attempt;
  }
  return job.last_attempt_no > 0 ? await tx.getAttempt(job.id, job.last_attempt_no) : null;
}

/**
 * The last `maxBytes` of one stream of an attempt: from its file when this host
 * has it, else from the output its worker shipped into a shared database
 * (docs/architecture.md "Output"), with a truncation marker when the worker's
 * `output_cap` cut the stream.
 */
export async function streamTailIn(
  tx: StoreReader,
  attempt: Attempt | null,
  stream: StreamName,
  maxBytes: number,
): Promise<StreamView> {
  const path = attempt === null ? null : stream === "stdout" ? attempt.stdout_path : attempt.stderr_path;
  const local = readTail(path, maxBytes);
  if (!local.missing || attempt === null) return local;
  const head = await tx.readAttemptOutput(attempt.job_id, attempt.attempt_no, stream, 0, 0);
  if (head === null) return local;
  const from = Math.max(0, head.size - maxBytes);
  // One byte more, before the window: whether the window starts a line (ops/output.ts tailView).
  const before = from > 0 ? 1 : 0;
  const shipped = await tx.readAttemptOutput(
    attempt.job_id,
    attempt.attempt_no,
    stream,
    from - before,
    maxBytes + before,
  );
  const bytes = shipped?.bytes ?? new Uint8Array(0);
  const view = tailView(path, bytes.subarray(before), from, head.size, before === 0 || bytes[0] === 0x0a);
  if (!head.truncated) return view;
  const marker = `\n[spoolctl: output truncated at ${head.size} bytes (the output_cap setting)]\n`;
  return { ...view, text: view.binary ? "" : view.text + marker, truncated: true };
}

/** The output of one attempt, each requested stream capped at `maxBytes` (its tail), inside `tx`. */
export async function attemptOutputIn(
  tx: StoreReader,
  attempt: Attempt,
  streams: readonly StreamName[],
  maxBytes: number,
): Promise<AttemptOutput> {
  const out: AttemptOutput = { job_id: attempt.job_id, attempt_no: attempt.attempt_no, state: attempt.state };
  for (const s of streams) out[s] = await streamTailIn(tx, attempt, s, maxBytes);
  return out;
}

/**
 * The job `ref` names and its attempt `attemptNo` (null: the latest; null in
 * the result before any attempt). Raises `INVALID_INPUT`/`NOT_FOUND` for the
 * reference (as `resolveJob` of job-refs.ts) and `NOT_FOUND` for the attempt.
 */
export function jobAttempt(
  store: SnapshotReader,
  ref: string,
  attemptNo: number | null,
): Promise<{ job: Job; attempt: Attempt | null }> {
  return store.read(async (tx) => {
    const job = await resolveJob(tx, ref);
    return { job, attempt: await pickAttemptIn(tx, job, attemptNo) };
  });
}

/** The output of `attempt`, each of `streams` capped at its last `maxBytes` (see {@link streamTailIn}). */
export function attemptOutput(
  store: SnapshotReader,
  attempt: Attempt,
  streams: readonly StreamName[],
  maxBytes: number,
): Promise<AttemptOutput> {
  return store.read((tx) => attemptOutputIn(tx, attempt, streams, maxBytes));
}

/**
 * The attempt row as it is now (null when its job was deleted) and, while
 * its job runs, how its worker is judged with `health` (docs/architecture.md
 * "Dead workers in the views"): `output --follow`'s look between reads.
 */
export function attemptNowWithHealth(
  store: SnapshotReader,
  jobId: number,
  attemptNo: number,
  health: HealthContext,
): Promise<{ attempt: Attempt | null; health: WorkerHealth | null }> {
  return store.read(async (tx) => {
    const [attempt, job] = await Promise.all([tx.getAttempt(jobId, attemptNo), tx.getJob(jobId)]);
    const judged =
      job && attempt?.state === "running" && job.last_attempt_no === attemptNo
        ? await jobWorkerHealth(tx, job, health)
        : null;
    return { attempt, health: judged };
  });
}

/** The attempt row as it is now (null when its job was deleted). */
export function attemptNow(store: SnapshotReader, jobId: number, attemptNo: number): Promise<Attempt | null> {
  return store.read((tx) => tx.getAttempt(jobId, attemptNo));
}

/**
 * At most `maxBytes` of the output an attempt's worker shipped into a shared
 * database, from byte `offset` of `stream` (null when none was shipped).
 */
export function shippedOutput(
  store: SnapshotReader,
  attempt: Pick<Attempt, "job_id" | "attempt_no">,
  stream: OutputStream,
  offset: number,
  maxBytes: number,
): Promise<ShippedOutput | null> {
  return store.read((tx) => tx.readAttemptOutput(attempt.job_id, attempt.attempt_no, stream, offset, maxBytes));
}

/** A job and its latest attempt (null before the first; `job` null when there is no such job). */
export function latestAttempt(
  store: SnapshotReader,
  jobId: number,
): Promise<{ job: Job | null; attempt: Attempt | null }> {
  return store.read(async (tx) => {
    const job = await tx.getJob(jobId);
    const attempt = job && job.last_attempt_no > 0 ? await tx.getAttempt(jobId, job.last_attempt_no) : null;
    return { job, attempt };
  });
}
