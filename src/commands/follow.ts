/**
 * Following a running attempt's output (`output --follow`, docs/architecture.md
 * "Output"): yields the
 * bytes of its stdout/stderr files as they grow, until the attempt is no longer
 * running; then the last bytes and the final attempt row. An attempt that has
 * already ended yields what exists and returns at once. A queued job's first
 * attempt is waited for ({@link awaitFirstAttempt}). Each look is one read verb
 * of src/store/verbs/output.ts.
 */
import { closeSync, openSync, readSync } from "node:fs";
import type { Attempt, Job } from "../model/job.ts";
import type { StreamName } from "../ops/output.ts";
import type { Store } from "../store/store.ts";
import { attemptNow, attemptNowWithHealth, latestAttempt, shippedOutput } from "../store/verbs/output.ts";
import { healthContext } from "./workers.ts";

/** New bytes of one stream. */
export interface FollowChunk {
  stream: StreamName;
  bytes: Uint8Array;
}

const CHUNK = 64 * 1024;

/**
 * Reads a stream from an offset onwards: from its file when this host has it
 * (the file may not exist yet), else from the copy its worker ships into a
 * shared database. Shipped bytes are a prefix of the file, at the same offsets.
 * Shared with `output --follow --all` (follow-all.ts).
 */
export class Tail {
  private fd: number | null = null;
  offset = 0;

  constructor(
    readonly stream: StreamName,
    private readonly path: string,
    private readonly store: Store,
    private readonly attempt: Attempt,
  ) {}

  /** The bytes written since the last call, in chunks of at most 64 KiB. */
  async *read(): AsyncGenerator<FollowChunk> {
    if (this.fd === null) {
      try {
        this.fd = openSync(this.path, "r");
      } catch {
        // Not created yet, removed, or written on another host.
        if (this.store.shipsOutput) yield* this.readShipped();
        return;
      }
    }
    for (;;) {
      const buffer = Buffer.alloc(CHUNK);
      const n = readSync(this.fd, buffer, 0, CHUNK, this.offset);
      if (n <= 0) return;
      this.offset += n;
      yield { stream: this.stream, bytes: buffer.subarray(0, n) };
      if (n < CHUNK) return;
    }
  }

  private async *readShipped(): AsyncGenerator<FollowChunk> {
    for (;;) {
      const { job_id, attempt_no } = this.attempt;
      const shipped = await shippedOutput(this.store, { job_id, attempt_no }, this.stream, this.offset, CHUNK);
      if (!shipped || shipped.bytes.length === 0) return;
      this.offset += shipped.bytes.length;
      yield { stream: this.stream, bytes: shipped.bytes };
      if (shipped.bytes.length < CHUNK) return;
    }
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

/** How often a follower judges the followed attempt's worker (ms): a dead worker or host is said within this. */
const HEALTH_EVERY_MS = 1000;

/**
 * Follows attempt `attemptNo` of job `jobId`, polling every `pollMs`. Returns
 * the attempt row as it ended (or as it was, when it was not running). About
 * every second it judges the attempt's worker as the views do
 * (docs/architecture.md "Dead workers in the views"), and calls `onWorker`
 * with its fate once each time that changes (a worker or host that died, a
 * lease that expired), so that a follower is not silent while nothing moves.
 */
export async function* followAttempt(
  store: Store,
  attempt: Attempt,
  streams: StreamName[],
  pollMs = 100,
  onWorker: (fate: string) => void = () => {},
): AsyncGenerator<FollowChunk, Attempt> {
  const tails = streams.map(
    (s) => new Tail(s, s === "stdout" ? attempt.stdout_path : attempt.stderr_path, store, attempt),
  );
  let judgedAt = performance.now();
  let told = "";
  try {
    for (;;) {
      // The state is read before the bytes: once it says the attempt ended, the
      // read that follows sees everything the process wrote.
      let now: Attempt;
      if (performance.now() - judgedAt >= HEALTH_EVERY_MS) {
        judgedAt = performance.now();
        const seen = await attemptNowWithHealth(store, attempt.job_id, attempt.attempt_no, healthContext(store));
        now = seen.attempt ?? attempt;
        const state = seen.health?.worker_state ?? "live";
        const key = state === "live" || state === "stale" ? "" : state;
        if (key !== told && seen.health) onWorker(seen.health.fate);
        told = key;
      } else now = (await attemptNow(store, attempt.job_id, attempt.attempt_no)) ?? attempt;
      for (const tail of tails) yield* tail.read();
      if (now.state !== "running") return now;
      await Bun.sleep(pollMs);
    }
  } finally {
    for (const tail of tails) tail.close();
  }
}

/** Every byte of one stream an attempt's worker shipped into a shared database, in chunks (nothing when none was shipped). */
export async function* shippedChunks(store: Store, attempt: Attempt, stream: StreamName): AsyncGenerator<FollowChunk> {
  let offset = 0;
  for (;;) {
    const shipped = await shippedOutput(store, attempt, stream, offset, CHUNK);
    if (!shipped || shipped.bytes.length === 0) return;
    offset += shipped.bytes.length;
    yield { stream, bytes: shipped.bytes };
  }
}

/** How {@link awaitFirstAttempt} ended: the attempt that started, or the job as it was when it stopped being queued (null: deleted). */
export type FirstAttempt = { attempt: Attempt } | { attempt: null; job: Job | null };

/**
 * Waits for a queued job's first attempt (`output --follow` of a job that has
 * not run yet, docs/architecture.md "Output"): reads the job after every
 * commit the queue's watcher reports (`store.watch()`, with a poll of
 * `pollMs` milliseconds behind it) and returns the attempt as soon as one
 * exists; the claim writes the job's state and its attempt row in one
 * transaction, so a job seen running has its attempt. Returns without one
 * when the job stops being queued otherwise (canceled, deleted). Never
 * returns while it stays queued: the caller's Ctrl-C ends the wait. With
 * `after`, the attempt awaited is the first numbered above it (the next
 * attempt of a job whose attempt `after` was reaped).
 */
export async function awaitFirstAttempt(store: Store, jobId: number, pollMs = 1000, after = 0): Promise<FirstAttempt> {
  const waker = store.watch();
  try {
    for (;;) {
      const seen = await latestAttempt(store, jobId);
      if (seen.attempt && seen.attempt.attempt_no > after) return { attempt: seen.attempt };
      if (seen.job?.state !== "queued") return { attempt: null, job: seen.job };
      await waker.wait(pollMs);
    }
  } finally {
    waker.close();
  }
}
