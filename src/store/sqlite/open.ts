/**
 * Opening a SQLite queue: file and folder permissions, pragmas (SPEC §4), the
 * migration runner, and the transaction wrapper that maps SQLITE_BUSY to `LOCKED`.
 */
import { Database } from "bun:sqlite";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { SpoolError } from "../../contract/errors.ts";
import type { Store, StoreReader, StoreWriter } from "../store.ts";
import { migrate, refuseIfNewer } from "./migrations.ts";
import { SqliteQueries } from "./queries.ts";

/** busy_timeout in milliseconds (SPEC §4). */
export const BUSY_TIMEOUT_MS = 5000;

/** Whether an error is SQLite's "database is locked/busy". */
export function isBusyError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"));
}

function lockedError(path: string): SpoolError {
  return new SpoolError("LOCKED", `the queue ${path} stayed locked by another writer for ${BUSY_TIMEOUT_MS / 1000}s`, {
    remediation: "retry in a moment; if it persists, look for a process holding the queue open (spoolctl workers)",
  });
}

/** Runs `fn`, turning SQLITE_BUSY into `LOCKED`. */
function mapBusy<T>(path: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (isBusyError(error)) throw lockedError(path);
    throw error;
  }
}

/** Creates the parent folder (0700 when we create it) and the file (0600), SPEC §3. */
function ensureFile(path: string): void {
  const dir = dirname(path);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!existsSync(path)) {
    closeSync(openSync(path, "a", 0o600));
    chmodSync(path, 0o600);
  }
}

/** The SQLite driver's {@link Store}. */
export class SqliteStore implements Store {
  private readonly queries: SqliteQueries;

  constructor(
    private readonly db: Database,
    readonly path: string,
    readonly spoolDir: string,
  ) {
    this.queries = new SqliteQueries(db);
  }

  read<T>(fn: (tx: StoreReader) => T): T {
    return this.transaction("BEGIN", fn);
  }

  write<T>(fn: (tx: StoreWriter) => T): T {
    return this.transaction("BEGIN IMMEDIATE", fn);
  }

  /** Runs `fn` between `begin` and COMMIT; rolls back when it throws. */
  private transaction<T>(begin: "BEGIN" | "BEGIN IMMEDIATE", fn: (tx: SqliteQueries) => T): T {
    return mapBusy(this.path, () => {
      this.db.exec(begin);
      try {
        const out = fn(this.queries);
        this.db.exec("COMMIT");
        return out;
      } catch (error) {
        if (this.db.inTransaction) this.db.exec("ROLLBACK");
        throw error;
      }
    });
  }

  close(): void {
    this.db.close(false);
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
   * create files ("parent folders are created on first write", SPEC §4).
   */
  create: boolean;
}

/**
 * Opens (and migrates) a queue. Raises `INTERNAL` when the file cannot be opened
 * or is newer than this binary, `LOCKED` when a migration waits out the busy timeout.
 */
export function openSqliteStore(opts: OpenOptions): SqliteStore {
  let db: Database;
  try {
    if (!opts.create && !existsSync(opts.path)) {
      db = new Database(":memory:");
      migrate(db, ":memory:");
      return new SqliteStore(db, opts.path, opts.spoolDir);
    }
    ensureFile(opts.path);
    db = new Database(opts.path, { create: false, readwrite: true });
  } catch (error) {
    if (error instanceof SpoolError) throw error;
    throw new SpoolError("INTERNAL", `cannot open the queue ${opts.path}: ${(error as Error).message}`, {
      remediation: "check that the path is a writable SQLite file, or pass another --db",
    });
  }
  try {
    mapBusy(opts.path, () => {
      db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      // A newer file is refused before the WAL switch below, which would rewrite its header.
      refuseIfNewer(db, opts.path);
      // Switching to WAL needs an exclusive lock briefly; the busy handler covers it.
      const mode = db.query("PRAGMA journal_mode = WAL").get() as { journal_mode: string };
      if (mode.journal_mode !== "wal") throw new Error(`journal_mode is ${mode.journal_mode}, not wal`);
      db.exec("PRAGMA synchronous = NORMAL");
      db.exec("PRAGMA foreign_keys = ON");
      migrate(db, opts.path);
    });
  } catch (error) {
    db.close(false);
    if (error instanceof SpoolError) throw error;
    throw new SpoolError("INTERNAL", `cannot open the queue ${opts.path}: ${(error as Error).message}`, {
      remediation: "check that the file is a spoolctl queue (spoolctl doctor), or pass another --db",
    });
  }
  return new SqliteStore(db, opts.path, opts.spoolDir);
}
