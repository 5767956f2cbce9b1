/**
 * Captured output of attempts (`output`, `feedback`; docs/architecture.md "Output"): which attempt,
 * and each stream's path, size and text (the tail when it is large).
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { invalidValue, SpoolError } from "../contract/errors.ts";
import type { Attempt, Job } from "../store/model.ts";
import type { SnapshotReader, StoreReader } from "../store/store.ts";
import { resolveJob } from "./jobs.ts";

/** The two streams. */
export const STREAMS = ["stdout", "stderr"] as const;
/** One stream name. */
export type StreamName = (typeof STREAMS)[number];

/** One stream of one attempt. `size_bytes` is the file's size; `text` its tail when `truncated`. */
export interface StreamView {
  path: string | null;
  missing: boolean;
  size_bytes: number;
  text: string;
  truncated: boolean;
}

/** One attempt's output. */
export interface AttemptOutput {
  job_id: number;
  attempt_no: number;
  state: Attempt["state"];
  stdout?: StreamView;
  stderr?: StreamView;
}

/** Reads at most the last `maxBytes` of a file. */
export function readTail(path: string | null, maxBytes: number): StreamView {
  if (path === null) return { path, missing: true, size_bytes: 0, text: "", truncated: false };
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return { path, missing: true, size_bytes: 0, text: "", truncated: false };
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return { path, missing: false, size_bytes: size, text: buffer.toString("utf8"), truncated: size > length };
  } finally {
    closeSync(fd);
  }
}

/**
 * Picks the attempt to show: `attemptNo`, or the latest. Returns null when the
 * job has no attempts yet. Raises `NOT_FOUND` for an attempt that does not exist.
 */
/** The job `ref` names and its attempt `attemptNo` (null: the latest), in one snapshot. Raises `NOT_FOUND`. */
export function jobAttempt(
  store: SnapshotReader,
  ref: string,
  attemptNo: number | null,
): Promise<{ job: Job; attempt: Attempt | null }> {
  return store.read(async (tx) => {
    const job = await resolveJob(tx, ref);
    return { job, attempt: await pickAttempt(tx, job, attemptNo) };
  });
}

/** {@link attemptOutput} in one snapshot. */
export function attemptOutputOf(
  store: SnapshotReader,
  attempt: Attempt,
  streams: StreamName[],
  maxBytes: number,
): ReturnType<typeof attemptOutput> {
  return store.read((tx) => attemptOutput(tx, attempt, streams, maxBytes));
}

export async function pickAttempt(tx: StoreReader, job: Job, attemptNo: number | null): Promise<Attempt | null> {
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

/** Parses `--stream`: stdout, stderr or both. */
export function parseStream(raw: string | undefined): StreamName[] {
  if (raw === undefined || raw === "both") return [...STREAMS];
  if (raw === "stdout" || raw === "stderr") return [raw];
  throw invalidValue("--stream", raw, "stdout, stderr or both");
}

/**
 * The last `maxBytes` of one stream of an attempt: from its file when this host
 * has it, else from the output its worker shipped into a shared database
 * (docs/architecture.md "Output"), with a truncation marker when the worker's
 * `output_cap` cut the stream.
 */
export async function streamTail(
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
  const shipped = await tx.readAttemptOutput(attempt.job_id, attempt.attempt_no, stream, from, maxBytes);
  const text = Buffer.from(shipped?.bytes ?? new Uint8Array(0)).toString("utf8");
  const marker = head.truncated
    ? `\n[spoolctl: output truncated at ${head.size} bytes (the output_cap setting)]\n`
    : "";
  return { path, missing: false, size_bytes: head.size, text: text + marker, truncated: from > 0 || head.truncated };
}

/** The output of one attempt, each requested stream capped at `maxBytes` (its tail). */
export async function attemptOutput(
  tx: StoreReader,
  attempt: Attempt,
  streams: StreamName[],
  maxBytes: number,
): Promise<AttemptOutput> {
  const out: AttemptOutput = { job_id: attempt.job_id, attempt_no: attempt.attempt_no, state: attempt.state };
  for (const s of streams) out[s] = await streamTail(tx, attempt, s, maxBytes);
  return out;
}
