/**
 * How a worker lives through storage conditions (docs/architecture.md "Storage
 * conditions"): results that cannot be written are retried with exponential
 * back-off instead of on every wake (its own failed writes touch the WAL it
 * watches); the same complaint is printed at most every 30 s; claiming pauses
 * while the disk of the database or the spool is full; the write-ahead log is
 * checkpointed when the worker is idle and once a full-disk episode is over.
 */

import type { DiskSpace } from "../model/storage.ts";
import { queueDisks } from "../store/space.ts";
import type { Store } from "../store/store.ts";

/** First pause before a result write is tried again, milliseconds. */
const RECORD_RETRY_MIN_MS = 250;
/** Longest pause between tries of a result write, milliseconds. */
const RECORD_RETRY_MAX_MS = 15_000;
/** The same transient line is printed at most this often, milliseconds. */
const TRANSIENT_LOG_EVERY_MS = 30_000;
/** An idle worker checkpoints the write-ahead log at most this often, milliseconds. */
const IDLE_CHECKPOINT_MS = 5_000;

/** A worker's view of its queue's storage; one per worker. Times are performance.now() milliseconds. */
export class StorageWatch {
  private recordPause = RECORD_RETRY_MIN_MS;
  private recordRetryAt = 0;
  private recordFailing = false;
  private readonly logged = new Map<string, { at: number; suppressed: number }>();
  private fullDisks: DiskSpace[] = [];
  private lastCheckpoint = performance.now();
  private checkpointDue = false;

  constructor(
    private readonly store: Store,
    private readonly say: (message: string) => void,
  ) {}

  /**
   * The line to print for a transient condition, or null when the same line
   * was printed less than {@link TRANSIENT_LOG_EVERY_MS} ago (it is counted,
   * and the next line says how many were held back).
   */
  rateLimit(message: string): string | null {
    const now = performance.now();
    const seen = this.logged.get(message);
    if (seen && now - seen.at < TRANSIENT_LOG_EVERY_MS) {
      seen.suppressed++;
      return null;
    }
    if (this.logged.size > 200) this.logged.clear();
    this.logged.set(message, { at: now, suppressed: 0 });
    return seen && seen.suppressed > 0
      ? `${message} (${seen.suppressed} more like this in ${Math.round((now - seen.at) / 1000)}s)`
      : message;
  }

  /** A result write failed: the next try waits, twice as long as the last one (up to {@link RECORD_RETRY_MAX_MS}). */
  recordFailed(): void {
    this.recordFailing = true;
    this.recordRetryAt = performance.now() + this.recordPause;
    this.recordPause = Math.min(this.recordPause * 2, RECORD_RETRY_MAX_MS);
  }

  /** A result write succeeded: back-off reset; after a failing spell the log is checkpointed. */
  recordSucceeded(): void {
    if (this.recordFailing) this.checkpointDue = true;
    this.recordFailing = false;
    this.recordPause = RECORD_RETRY_MIN_MS;
    this.recordRetryAt = 0;
  }

  /** The next try of a pending result may come at once (a stop was asked for: one last try). */
  retryRecordNow(): void {
    this.recordRetryAt = 0;
  }

  /** Whether a pending result may be tried now. */
  mayRetryRecord(): boolean {
    return performance.now() >= this.recordRetryAt;
  }

  /** Milliseconds until a pending result may be tried again (0: now). */
  msUntilRecordRetry(): number {
    return Math.max(0, this.recordRetryAt - performance.now());
  }

  /**
   * Whether claiming must pause because a disk of the queue is full. Says so
   * when a pause begins and when space is back (then the log is checkpointed).
   */
  claimPaused(): boolean {
    const full = queueDisks(this.store).filter((d) => d.full);
    if (full.length > 0 && this.fullDisks.length === 0) {
      const which = full.map((d) => `the ${d.role} disk (${d.path}, ${formatKiB(d.freeBytes)} free)`).join(" and ");
      this.say(
        `claiming paused: ${which} ${full.length > 1 ? "are" : "is"} full; no job is claimed (and none charged) until space is freed`,
      );
    } else if (full.length === 0 && this.fullDisks.length > 0) {
      this.say("space is back on the queue's disks: claiming again");
      this.checkpointDue = true;
    }
    this.fullDisks = full;
    return full.length > 0;
  }

  /**
   * Checkpoints the write-ahead log when one is due: at once after a
   * full-disk episode, otherwise every {@link IDLE_CHECKPOINT_MS} while the
   * worker is idle. Storage errors are left for the next try.
   */
  async checkpointIfDue(idle: boolean): Promise<void> {
    const now = performance.now();
    if (!this.checkpointDue && !(idle && now - this.lastCheckpoint >= IDLE_CHECKPOINT_MS)) return;
    this.lastCheckpoint = now;
    try {
      if (await this.store.checkpoint()) this.checkpointDue = false;
    } catch {
      // still full or failing: tried again on a later turn
    }
  }
}

function formatKiB(bytes: number): string {
  return `${Math.floor(bytes / 1024)} KiB`;
}
