/**
 * Opening a SQLite queue: file and folder permissions, pragmas (docs/architecture.md
 * "The driver contract"), the migration check, and the store whose transaction
 * wrapper maps SQLITE_BUSY to `LOCKED` (sqlite-store.ts) made on the
 * connection. Why an open failed is told by errors.ts.
 */
import { Database } from "bun:sqlite";
import { chmodSync, closeSync, constants, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { SpoolError } from "../../contract/errors.ts";
import { refuseUnsafePath } from "../ownership.ts";
import { BUSY_TIMEOUT_MS, deniedFolderError, isBusyError, mapStorageError, mayAccess, openFailure } from "./errors.ts";
import { checkSchema, migrate, readQueueId, SCHEMA_VERSION } from "./migrations.ts";
import { checkPages } from "./page-check.ts";
import { type FileId, fileIdOf, SqliteStore } from "./sqlite-store.ts";

/**
 * `journal_size_limit` in bytes: after a checkpoint resets the write-ahead log,
 * SQLite truncates the file to at most this, so a burst does not leave a large
 * WAL behind (docs/architecture.md "Storage conditions").
 */
const JOURNAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * The `synchronous` pragma of writing connections: `FULL` (every commit synced
 * before it returns), or `NORMAL` when `SPOOLCTL_SYNCHRONOUS=normal` trades
 * durability on power loss for speed (docs/architecture.md "Durability").
 * Raises `INVALID_INPUT` for any other value.
 */
function synchronousMode(env: Record<string, string | undefined> = process.env): "FULL" | "NORMAL" {
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
      const schema = checkSchema(db, opts.path);
      // Every verb that opens the file says it is damaged, before it answers from it (docs/architecture.md "A damaged file").
      checkPages(db, opts.path, opts.spoolDir, false);
      return schema;
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
      // Before anything is written: a write into a damaged file is never acknowledged.
      checkPages(db, opts.path, opts.spoolDir, true);
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
