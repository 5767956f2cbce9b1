/**
 * The SQLite driver's {@link Store}, once its file is open: one connection
 * whose transaction wrapper runs one transaction at a time, maps SQLITE_BUSY
 * to `LOCKED` and wakes workers after COMMIT; the claim, checkpoints, the
 * intact check and the replaced-file check (docs/architecture.md "The driver
 * contract", "Storage conditions"). Opening the file is open.ts.
 */
import type { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import { SpoolError } from "../../contract/errors.ts";
import { type ClaimedJob, type ClaimRequest, type DatedClaim, datedClaim } from "../attempt-types.ts";
import { EMPTY_QUEUE } from "../empty-queue.ts";
import { FifoLock } from "../fifo-lock.ts";
import type { StoreReader } from "../reader.ts";
import {
  INTACT_CHECK_MAX_BYTES,
  type QueryPlan,
  type Store,
  type Waker,
  type WorkWaker,
  type WriteOptions,
} from "../store.ts";
import type { StoreWriter } from "../writer.ts";
import { BUSY_TIMEOUT_MS, mapError, mapStorageError } from "./errors.ts";
import { explainHotPath } from "./hot-path.ts";
import { readQueueId } from "./migrations.ts";
import { SqliteQueries } from "./queries.ts";
import { signalWork, watchQueue, watchWork } from "./wake.ts";

/** How long a checkpoint waits for the lock, milliseconds (see {@link SqliteStore.checkpoint}). */
const CHECKPOINT_BUSY_MS = 100;

/** Size of the queue's write-ahead log in bytes (0 when there is none). */
function walBytes(path: string): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

/** The SQLite driver's {@link Store}. */
export class SqliteStore implements Store {
  readonly driver = "sqlite" as const;
  /** One host: readers find the output files where the worker wrote them. */
  readonly shipsOutput = false;
  private readonly queries: SqliteQueries;
  private readonly lock = new FifoLock();
  readonly queueId: string;

  constructor(
    private readonly db: Database,
    readonly location: string,
    readonly spoolDir: string,
    readonly exists: boolean,
    /** The queue's id when the opener read it already (its schema probe); else read here. */
    queueId?: string,
  ) {
    this.queries = new SqliteQueries(db);
    this.queueId = queueId ?? (exists ? readQueueId(db) : "");
  }

  now(): number {
    return Date.now() / 1000;
  }

  // A file that does not exist reads as the empty queue every driver shares (../empty-queue.ts).
  read<T>(fn: (tx: StoreReader) => Promise<T>): Promise<T> {
    return this.exists ? this.transaction("BEGIN", fn) : fn(EMPTY_QUEUE);
  }

  write<T>(fn: (tx: StoreWriter) => Promise<T>, opts: WriteOptions = {}): Promise<T> {
    if (!this.exists) return fn(EMPTY_QUEUE);
    return this.transaction("BEGIN IMMEDIATE", fn, opts.durable ?? true);
  }

  /** Not durable: a claim lost to a power cut leaves the job queued, and the attempt it started died with the machine anyway. */
  claimJobs(req: ClaimRequest): Promise<ClaimedJob[]> {
    if (!this.exists) return Promise.resolve([]);
    return this.transaction("BEGIN IMMEDIATE", async (tx) => tx.claim(this.dated(req), this.spoolDir), false);
  }

  writeAndClaim<T>(
    fn: (tx: StoreWriter) => Promise<T>,
    req: ClaimRequest,
  ): Promise<{ result: T; claimed: ClaimedJob[] | null }> {
    if (!this.exists) return fn(EMPTY_QUEUE).then((result) => ({ result, claimed: [] }));
    // One commit for both: the result is written first, so the claim sees the slot it freed.
    // Not synced on its own (docs/architecture.md "Durability"): a result lost to a power cut re-runs its job.
    return this.transaction(
      "BEGIN IMMEDIATE",
      async (tx) => {
        const result = await fn(tx);
        return { result, claimed: tx.claim(this.dated(req), this.spoolDir) };
      },
      false,
    );
  }

  /** `req` dated now unless it has a time (called inside the transaction: after BEGIN IMMEDIATE got the lock). */
  private dated(req: ClaimRequest): DatedClaim {
    return datedClaim(req, () => this.now());
  }

  watch(): Waker {
    return watchQueue(this.location);
  }

  watchWork(queue: string | readonly string[], opts: { freed?: boolean } = {}): WorkWaker {
    return watchWork(this.spoolDir, queue, opts.freed ?? true);
  }

  explainHotPath(): Promise<QueryPlan[]> {
    return this.lock.run(async () => explainHotPath(this.db));
  }

  /** The `synchronous` level this connection was opened with (FULL unless SPOOLCTL_SYNCHRONOUS=normal). */
  synchronous: "FULL" | "NORMAL" = "NORMAL";
  private currentSync: "FULL" | "NORMAL" | null = null;

  /** Sets `synchronous` for the next commit (outside a transaction, where SQLite allows the change). */
  private syncFor(durable: boolean): void {
    const want = durable ? this.synchronous : "NORMAL";
    if (want === this.currentSync) return;
    this.db.exec(`PRAGMA synchronous = ${want}`);
    this.currentSync = want;
  }

  betweenWrites<T>(fn: () => T | Promise<T>): Promise<T> {
    return this.lock.run(async () => fn());
  }

  checkpoint(): Promise<boolean> {
    return this.lock.run(async () => {
      if (!this.exists || walBytes(this.location) === 0) return true;
      // Never stall the caller behind a long reader: a later idle turn tries again.
      this.db.exec(`PRAGMA busy_timeout = ${CHECKPOINT_BUSY_MS}`);
      try {
        const row = mapStorageError(
          this.location,
          () => this.db.query("PRAGMA wal_checkpoint(TRUNCATE)").get() as { busy: number },
        );
        return row.busy === 0;
      } catch (error) {
        if (error instanceof SpoolError && error.code === "LOCKED") return false;
        throw error;
      } finally {
        this.db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      }
    });
  }

  /** Runs `fn` between `begin` and COMMIT, alone on the connection; rolls back when it throws. */
  private transaction<T>(
    begin: "BEGIN" | "BEGIN IMMEDIATE",
    fn: (tx: SqliteQueries) => Promise<T>,
    durable = true,
  ): Promise<T> {
    return this.lock.run(async () => {
      if (begin !== "BEGIN") this.syncFor(durable);
      mapStorageError(this.location, () => this.db.exec(begin));
      const work = this.queries.work;
      try {
        const out = await fn(this.queries);
        mapStorageError(this.location, () => this.db.exec("COMMIT"));
        // After COMMIT: a woken worker must find what it was woken for.
        if (!work.empty) signalWork(this.spoolDir, work);
        return out;
      } catch (error) {
        if (this.db.inTransaction) this.db.exec("ROLLBACK");
        throw mapError(this.location, error);
      } finally {
        work.clear();
      }
    });
  }

  async checkIntact(): Promise<void> {
    if (!this.exists) return;
    let size = 0;
    try {
      size = statSync(this.location).size + walBytes(this.location);
    } catch {
      return; // gone: the verb's own read says what it finds
    }
    if (size > INTACT_CHECK_MAX_BYTES) return;
    const problems = await this.lock.run(async () =>
      mapStorageError(this.location, () => this.db.query("PRAGMA quick_check(1)").all() as { quick_check: string }[]),
    );
    const found = problems.map((r) => r.quick_check).find((m) => m !== "ok");
    if (found === undefined) return;
    // One line: SQLite starts with "*** in database main ***" and a line break.
    const problem = found
      .replace(/\*\*\* in database \w+ \*\*\*\s*/g, "")
      .replace(/\s*\n\s*/g, "; ")
      .trim();
    throw new SpoolError("QUEUE_CORRUPT", `the queue file ${this.location} is damaged: ${problem}`, {
      detail: { path: this.location, sqlite_code: null },
    });
  }

  /** (device, inode) of the file this store opened; null for a queue that did not exist (nothing to lose). */
  fileId: FileId | null = null;

  replaced(): SpoolError | null {
    if (this.fileId === null) return null;
    const now = fileIdOf(this.location);
    if (now !== null && now.dev === this.fileId.dev && now.ino === this.fileId.ino) return null;
    const what =
      now === null
        ? `the queue file ${this.location} was deleted or moved away while this process had it open`
        : `the queue file ${this.location} was replaced by another file (moved or copied into place) while this process had it open`;
    return new SpoolError("QUEUE_REPLACED", what, {
      detail: { path: this.location, deleted: now === null },
    });
  }

  async close(): Promise<void> {
    await this.lock.run(async () => this.db.close(false));
  }
}

/** A file's identity: device and inode numbers. */
export interface FileId {
  dev: number;
  ino: number;
}

/** The (device, inode) of the file at `path` (following links, as SQLite opens it), or null when there is none. */
export function fileIdOf(path: string): FileId | null {
  try {
    const st = statSync(path);
    return { dev: st.dev, ino: st.ino };
  } catch {
    return null;
  }
}
