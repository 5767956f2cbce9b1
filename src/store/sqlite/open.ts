/**
 * Opening a SQLite queue: file and folder permissions, pragmas (docs/architecture.md
 * "The driver contract"), the migration check, and the store whose transaction
 * wrapper maps SQLITE_BUSY to `LOCKED`. Why an open failed is told by errors.ts.
 */

import { Database } from "bun:sqlite";
import { chmodSync, closeSync, constants, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { SpoolError } from "../../contract/errors.ts";
import { EMPTY_QUEUE } from "../empty-queue.ts";
import { FifoLock } from "../fifo-lock.ts";
import { refuseUnsafePath } from "../ownership.ts";
import {
  type ClaimedJob,
  type ClaimRequest,
  type DatedClaim,
  datedClaim,
  INTACT_CHECK_MAX_BYTES,
  type QueryPlan,
  type Store,
  type StoreReader,
  type StoreWriter,
  type Waker,
  type WorkWaker,
  type WriteOptions,
} from "../store.ts";
import {
  BUSY_TIMEOUT_MS,
  deniedFolderError,
  isBusyError,
  mapError,
  mapStorageError,
  mayAccess,
  openFailure,
} from "./errors.ts";
import { explainHotPath } from "./hot-path.ts";
import { checkSchema, migrate, readQueueId, SCHEMA_VERSION } from "./migrations.ts";
import { SqliteQueries } from "./queries.ts";
import { signalWork, watchQueue, watchWork } from "./wake.ts";

/** How long a checkpoint waits for the lock, milliseconds (see {@link SqliteStore.checkpoint}). */
const CHECKPOINT_BUSY_MS = 100;

/**
 * `journal_size_limit` in bytes: after a checkpoint resets the write-ahead log,
 * SQLite truncates the file to at most this, so a burst does not leave a large
 * WAL behind (docs/architecture.md "Storage conditions").
 */
export const JOURNAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024;

/** Size of the queue's write-ahead log in bytes (0 when there is none). */
export function walBytes(path: string): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

/**
 * The `synchronous` pragma of writing connections: `FULL` (every commit synced
 * before it returns), or `NORMAL` when `SPOOLCTL_SYNCHRONOUS=normal` trades
 * durability on power loss for speed (docs/architecture.md "Durability").
 * Raises `INVALID_INPUT` for any other value.
 */
export function synchronousMode(env: Record<string, string | undefined> = process.env): "FULL" | "NORMAL" {
  const raw = (env.SPOOLCTL_SYNCHRONOUS ?? "").trim().toLowerCase();
  if (raw === "" || raw === "full") return "FULL";
  if (raw === "normal") return "NORMAL";
  throw new SpoolError("INVALID_INPUT", "SPOOLCTL_SYNCHRONOUS must be full or normal", {
    remediation:
      "unset it (full: what a command acknowledged survives a power cut), or set SPOOLCTL_SYNCHRONOUS=normal for speed",
    detail: { env: "SPOOLCTL_SYNCHRONOUS" },
  });
}

/** Creates the parent folder (0700 when we create it) and the file (0600), docs/architecture.md "Location". */
function ensureFile(path: string): void {
  const dir = dirname(path);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (existsSync(path)) return;
  try {
    // Exclusive and never through a link: a file someone else slipped in meanwhile is checked, not adopted.
    closeSync(openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600));
  } catch (error) {
    if ((error as { code?: string }).code !== "EEXIST") throw error;
    refuseUnsafePath(path, "database");
    return;
  }
  chmodSync(path, 0o600);
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

/**
 * `PRAGMA journal_mode = WAL`, retried while another opener holds the file:
 * the switch needs an exclusive lock for a moment, and SQLite answers busy at
 * once there instead of waiting out the busy timeout.
 */
function switchToWal(db: Database): { journal_mode: string } {
  const deadline = performance.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      return db.query("PRAGMA journal_mode = WAL").get() as { journal_mode: string };
    } catch (error) {
      if (!isBusyError(error) || performance.now() > deadline) throw error;
      Bun.sleepSync(5);
    }
  }
}

/** Options of {@link openSqliteStore}. */
export interface OpenOptions {
  /** Absolute database path. */
  path: string;
  /** Absolute spool folder path. */
  spoolDir: string;
  /**
   * Create the file (and its folder) when missing. When false and the file does
   * not exist, an empty in-memory queue is returned, so read-only verbs never
   * create files (docs/architecture.md "Location").
   */
  create: boolean;
  /**
   * Open for reading only (verbs that never write): SQLite's read-only flag and
   * no pragma that writes, so reading never changes the file and works on a
   * queue the user may only read. A file whose schema is older than this binary
   * (or an empty file) is opened for writing instead, to migrate it.
   */
  readOnly?: boolean;
}

/**
 * What a queue file that does not exist yet reads as: its transactions answer
 * from the shared empty queue (`EMPTY_QUEUE`); the empty, migrated in-memory
 * database beside it only serves `explainHotPath`.
 */
function emptyStore(opts: OpenOptions): SqliteStore {
  const db = new Database(":memory:");
  migrate(db, ":memory:");
  return new SqliteStore(db, opts.path, opts.spoolDir, false);
}

/**
 * The read-only open of {@link openSqliteStore}. Returns null when the file's
 * schema is older than this binary, or when the file is still empty (a writer
 * has just created it and is about to migrate it): the caller then opens it for
 * writing and migrates it, so a reader that waits (`events --follow`) keeps a
 * connection to the real file rather than to an empty stand-in.
 */
function openReadOnly(opts: OpenOptions): SqliteStore | null {
  let db: Database;
  let fileId: FileId | null;
  try {
    db = new Database(opts.path, { readonly: true });
    // Taken right after the open: what the worker compares the path with later (SqliteStore.replaced).
    fileId = fileIdOf(opts.path);
  } catch (error) {
    throw openFailure(opts.path, error, false);
  }
  let schema: { version: number; queueId: string };
  try {
    schema = mapStorageError(opts.path, () => {
      // Both are per-connection settings: nothing is written to the file.
      db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      db.exec("PRAGMA foreign_keys = ON");
      return checkSchema(db, opts.path);
    });
  } catch (error) {
    db.close(false);
    throw openFailure(opts.path, error, false);
  }
  if (schema.version === SCHEMA_VERSION) {
    const store = new SqliteStore(db, opts.path, opts.spoolDir, true, schema.queueId);
    store.fileId = fileId;
    return store;
  }
  db.close(false);
  return null;
}

/**
 * Opens (and migrates) a queue. Raises `INTERNAL` when the file cannot be opened
 * (naming a permission problem), is newer than this binary or is not a spoolctl
 * queue, `LOCKED` when a migration waits out the busy timeout.
 */
export function openSqliteStore(opts: OpenOptions): SqliteStore {
  const denied = deniedFolderError(opts.path, opts.create || !opts.readOnly);
  if (denied) throw denied;
  if (!opts.create && !existsSync(opts.path)) return emptyStore(opts);
  if (opts.readOnly && !opts.create) {
    const store = openReadOnly(opts);
    if (store) return store;
  }
  let db: Database;
  try {
    ensureFile(opts.path);
    // SQLite silently opens a file it may not write read-only, and the first write would then fail
    // far from here with "attempt to write a readonly database": say it now.
    if (!mayAccess(opts.path, constants.W_OK)) throw new Error("the file is read-only");
    db = new Database(opts.path, { create: false, readwrite: true });
  } catch (error) {
    throw openFailure(opts.path, error, true);
  }
  // Taken right after the open: what the worker compares the path with later (SqliteStore.replaced).
  const fileId = fileIdOf(opts.path);
  let queueId: string;
  let synchronous: "FULL" | "NORMAL" = "FULL";
  try {
    queueId = mapStorageError(opts.path, () => {
      db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      // A newer or foreign file is refused before the WAL switch below, which would rewrite its header.
      const schema = checkSchema(db, opts.path);
      const mode = switchToWal(db);
      if (mode.journal_mode !== "wal") throw new Error(`journal_mode is ${mode.journal_mode}, not wal`);
      // FULL: a commit is on disk before it is acknowledged (docs/architecture.md "Durability").
      synchronous = synchronousMode();
      db.exec(`PRAGMA synchronous = ${synchronous}`);
      db.exec(`PRAGMA journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`);
      db.exec("PRAGMA foreign_keys = ON");
      if (schema.version === SCHEMA_VERSION) return schema.queueId;
      migrate(db, opts.path, schema.version);
      return readQueueId(db); // made by v4, perhaps just now
    });
  } catch (error) {
    db.close(false);
    throw openFailure(opts.path, error, true);
  }
  const store = new SqliteStore(db, opts.path, opts.spoolDir, true, queueId);
  store.synchronous = synchronous;
  store.fileId = fileId;
  return store;
}
