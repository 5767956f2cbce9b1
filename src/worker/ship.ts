/**
 * Shipping attempt output to a shared database (docs/architecture.md
 * "Output"): while a job runs, its worker copies what the child appended to
 * its stdout/stderr files into the store, at least every second and once more
 * when the attempt ends, so `output`, `feedback`, `triage` and `report` work
 * from any host. Each stream is capped at the `output_cap` setting (bytes);
 * the last chunk then carries the truncation mark. The files stay where the
 * worker ran. Every chunk is fenced by (job, attempt, worker).
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import type { OutputStream } from "../store/reader.ts";
import type { Store } from "../store/store.ts";
import type { ClaimedAttempt } from "../store/verbs/claim.ts";
import { shipOutput } from "../store/verbs/ship.ts";

/** How often running attempts are shipped, milliseconds. */
export const SHIP_INTERVAL_MS = 1000;

/** Largest chunk shipped in one statement, bytes. */
const CHUNK_BYTES = 256 * 1024;

interface Shipping {
  claimed: ClaimedAttempt;
  /** Bytes of each stream shipped so far. */
  offset: Record<OutputStream, number>;
  /** Whether a stream reached the cap (nothing more is shipped). */
  capped: Record<OutputStream, boolean>;
}

const NOTHING = new Uint8Array(0);

/** Reads up to `max` bytes of `path` from `offset`: what the file holds there now; empty when the file is missing. */
function readFrom(path: string, offset: number, max: number): Uint8Array {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return NOTHING;
  }
  try {
    // Sized by what is there: most attempts write nothing, and zeroing a chunk-sized buffer per read is not free.
    const size = Math.min(max, fstatSync(fd).size - offset);
    if (size <= 0) return NOTHING;
    const buffer = Buffer.allocUnsafe(size);
    const n = readSync(fd, buffer, 0, size, offset);
    return buffer.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/** The output shipper of one worker. */
export class OutputShipper {
  private readonly attempts = new Map<string, Shipping>();

  constructor(
    private readonly store: Store,
    private readonly workerId: string,
    /** Bytes of each stream shipped at most. */
    private readonly capBytes: number,
  ) {}

  /** Starts shipping an attempt. */
  track(claimed: ClaimedAttempt): void {
    this.attempts.set(key(claimed), {
      claimed,
      offset: { stdout: 0, stderr: 0 },
      capped: { stdout: false, stderr: false },
    });
  }

  /** Ships what every tracked attempt wrote since the last call. Raises the store's errors (the caller treats them as transient). */
  async shipAll(): Promise<void> {
    for (const shipping of [...this.attempts.values()]) await this.ship(shipping);
  }

  /** Ships the rest of an ended attempt and stops tracking it. */
  async finish(claimed: ClaimedAttempt): Promise<void> {
    const shipping = this.attempts.get(key(claimed));
    if (!shipping) return;
    await this.ship(shipping);
    this.attempts.delete(key(claimed));
  }

  /** Stops tracking an attempt without shipping more (it was lost). */
  forget(claimed: ClaimedAttempt): void {
    this.attempts.delete(key(claimed));
  }

  private async ship(s: Shipping): Promise<void> {
    for (const stream of ["stdout", "stderr"] as const) {
      const path = stream === "stdout" ? s.claimed.stdoutPath : s.claimed.stderrPath;
      while (!s.capped[stream]) {
        const room = this.capBytes - s.offset[stream];
        // One byte past the cap tells whether the stream goes on beyond it.
        const bytes = readFrom(path, s.offset[stream], Math.min(CHUNK_BYTES, room + 1));
        if (bytes.length === 0) break;
        const truncated = bytes.length > room;
        const chunk = truncated ? bytes.subarray(0, room) : bytes;
        const owned = await shipOutput(this.store, {
          jobId: s.claimed.job.id,
          attemptNo: s.claimed.attemptNo,
          workerId: this.workerId,
          stream,
          offset: s.offset[stream],
          bytes: chunk,
          truncated,
        });
        if (!owned) {
          this.attempts.delete(key(s.claimed)); // fenced off: the job is no longer ours
          return;
        }
        s.offset[stream] += chunk.length;
        if (truncated) s.capped[stream] = true;
        if (bytes.length < CHUNK_BYTES) break;
      }
    }
  }
}

function key(claimed: ClaimedAttempt): string {
  return `${claimed.job.id}:${claimed.attemptNo}`;
}
