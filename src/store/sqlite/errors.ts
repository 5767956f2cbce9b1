/**
 * SQLite's failures as the {@link SpoolError}s they mean (docs/architecture.md
 * "The driver contract", "A damaged file"): busy as `LOCKED`, a full disk or an
 * I/O error as a storage condition, a damaged file as `QUEUE_CORRUPT`; and why
 * a queue file could not be opened (a folder, a read-only file system, a
 * permission on the file or a folder on its way), which SQLite itself only
 * words as "unable to open database file".
 */
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { SpoolError } from "../../contract/errors.ts";

/** busy_timeout in milliseconds (docs/architecture.md "The driver contract"). */
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

/**
 * Runs `fn`, turning SQLITE_BUSY into `LOCKED`, and a full disk or an I/O error
 * into `INTERNAL` with `detail.storage` ("full" | "io"), which a worker treats
 * as a condition to wait out rather than a bug (docs/architecture.md "The driver
 * contract": a worker keeps running).
 */
export function mapStorageError<T>(path: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw mapError(path, error);
  }
}

/** SQLite's error as the {@link SpoolError} it means (see {@link mapStorageError}); other errors unchanged. */
export function mapError(path: string, error: unknown): unknown {
  if (isBusyError(error)) return lockedError(path);
  const damaged = corruptError(path, error);
  if (damaged) return damaged;
  const code = (error as { code?: unknown })?.code;
  if (code === "SQLITE_FULL") {
    return new SpoolError("INTERNAL", `the disk holding the queue ${path} is full`, {
      remediation: "free some space on that disk; nothing was written",
      detail: { storage: "full", driver_code: code },
    });
  }
  if (typeof code === "string" && code.startsWith("SQLITE_IOERR")) {
    return new SpoolError("INTERNAL", `I/O error on the queue ${path} (${code})`, {
      remediation: "check the disk holding the queue (space, permissions, health); then run: spoolctl doctor",
      detail: { storage: "io", driver_code: code },
    });
  }
  return error;
}

/**
 * `QUEUE_CORRUPT` (exit 3) for SQLite's "database disk image is malformed"
 * (SQLITE_CORRUPT…) and "file is not a database" (SQLITE_NOTADB: a damaged
 * header, or a file that never was one), whichever verb meets it
 * (docs/architecture.md "A damaged file"); null for any other error.
 */
export function corruptError(path: string, error: unknown): SpoolError | null {
  const code = (error as { code?: unknown })?.code;
  if (typeof code !== "string" || !(code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB")) return null;
  const what =
    code === "SQLITE_NOTADB"
      ? `the queue file ${path} is not a SQLite database (its header is damaged, or --db names another kind of file)`
      : `the queue file ${path} is damaged: ${(error as Error).message}`;
  return new SpoolError("QUEUE_CORRUPT", what, { detail: { path, sqlite_code: code } });
}

/** Whether `path` exists and is a folder. */
function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Whether `path` lies on a file system mounted read-only (access(2) answers EROFS, for root too). */
function onReadOnlyFileSystem(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return false;
  } catch (error) {
    return (error as { code?: unknown }).code === "EROFS";
  }
}

/** Whether this process may access `path` in `mode` (root passes every check). */
export function mayAccess(path: string, mode: number): boolean {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
}

/**
 * The folder on the way to `path` that this user may not enter (no search
 * permission), or null. There `existsSync` answers "absent" for a queue that
 * exists: without this a reader would say NO_QUEUE and read it as empty.
 */
function deniedFolder(path: string): string | null {
  try {
    statSync(path);
    return null;
  } catch (error) {
    if ((error as { code?: unknown }).code !== "EACCES") return null;
  }
  const folders: string[] = [];
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    folders.unshift(dir);
    if (dirname(dir) === dir) break;
  }
  return folders.find((dir) => !mayAccess(dir, constants.X_OK)) ?? dirname(path);
}

/**
 * The `INTERNAL` error naming the folder, its owner and mode when a folder on
 * the way to `path` shuts this user out (see {@link deniedFolder}), or null.
 * `openSqliteStore` raises it; `doctor` reports it as its `db_opens` check.
 */
export function deniedFolderError(path: string, writing: boolean): SpoolError | null {
  const dir = deniedFolder(path);
  if (dir === null) return null;
  let owner = "";
  try {
    const st = statSync(dir);
    owner = ` (owner uid ${st.uid}, mode ${(st.mode & 0o7777).toString(8).padStart(4, "0")})`;
  } catch {
    // its own parent shuts us out too: the name alone
  }
  const uid = process.getuid?.();
  return new SpoolError(
    "INTERNAL",
    `cannot ${writing ? "write to" : "read"} the queue ${path}: permission denied: this user${uid === undefined ? "" : ` (uid ${uid})`} may not enter its folder ${dir}${owner}`,
    {
      remediation: `run spoolctl as the queue's owner, or have ${dir} opened to you (chmod/chgrp), or pass another --db`,
      detail: { path, folder: dir, sqlite_code: null },
    },
  );
}

/**
 * Why a queue file could not be opened, as a {@link SpoolError}: a permission
 * problem is named as such (SQLite itself only says "unable to open database
 * file" or "attempt to write a readonly database"), anything else is `INTERNAL`
 * with the driver's message.
 */
export function openFailure(path: string, error: unknown, writing: boolean): SpoolError {
  if (error instanceof SpoolError) return error;
  if (isBusyError(error)) return lockedError(path);
  const damaged = corruptError(path, error);
  if (damaged) return damaged;
  const dir = dirname(path);
  const name = basename(path);
  const code = String((error as { code?: unknown })?.code ?? "");
  const detail = { path, sqlite_code: code || null };
  if (isDirectory(path)) {
    // SQLite says "unable to open database file" or "disk I/O error" here.
    return new SpoolError("INVALID_INPUT", `the queue path ${path} is a folder, not a database file`, {
      remediation: `name a file, e.g. --db ${join(path, "queue.db")}`,
      detail: { ...detail, flag: "--db" },
    });
  }
  if (onReadOnlyFileSystem(existsSync(path) ? path : dir)) {
    // Not a permission problem: no user may write there until the file system is remounted.
    return new SpoolError(
      "INTERNAL",
      writing
        ? `cannot write to the queue ${path}: it is on a read-only file system`
        : `cannot read the queue ${path}: it is on a read-only file system, and SQLite must create ${name}-shm beside a WAL queue to read it`,
      {
        remediation: writing
          ? "remount that file system read-write, or pass --db with a path on a writable disk"
          : `copy ${name} to a writable folder and read the copy (--db COPY)`,
        detail: { ...detail, read_only_file_system: true },
      },
    );
  }
  if (existsSync(path) && !mayAccess(path, constants.R_OK)) {
    return new SpoolError(
      "INTERNAL",
      `cannot read the queue ${path}: permission denied (the file is not readable for this user)`,
      {
        remediation:
          "run spoolctl as the queue's owner, or have the file made readable for you (chmod/chgrp), or pass another --db",
        detail,
      },
    );
  }
  if (writing && existsSync(path) && !mayAccess(path, constants.W_OK)) {
    return new SpoolError(
      "INTERNAL",
      `cannot write to the queue ${path}: permission denied (the file is read-only for this user)`,
      {
        remediation:
          "run spoolctl as the queue's owner, or have the file made writable for you; read-only verbs (status, list, show, output) still work",
        detail,
      },
    );
  }
  if ((code.startsWith("SQLITE_READONLY") || code.startsWith("SQLITE_CANTOPEN")) && !mayAccess(dir, constants.W_OK)) {
    // A WAL-mode file is read through NAME-shm and NAME-wal beside it; SQLite must create them when they are missing.
    return new SpoolError(
      "INTERNAL",
      `cannot ${writing ? "write to" : "read"} the queue ${path}: permission denied on its folder ${dir} (SQLite needs to create ${name}-wal and ${name}-shm there)`,
      {
        remediation: `run spoolctl as the queue's owner, or have ${dir} made writable for you; to read an archived queue, copy ${name} into a folder you may write`,
        detail,
      },
    );
  }
  const blocked = existsSync(path) ? null : unwritableAncestor(dir);
  if (blocked !== null || code === "EACCES" || code === "EPERM") {
    // A new queue (or its .spoolctl/ folder) cannot be made here: the folder is not ours to write, whatever the file would be.
    const where = blocked ?? dir;
    return new SpoolError(
      "INTERNAL",
      `cannot create the queue ${path}: permission denied: the folder ${where} is not writable for this user`,
      {
        remediation: `run spoolctl in a folder you may write, pass --db with a path you may write (e.g. --db ${join(process.env.HOME || "~", "queue.db")}), or have ${where} made writable for you`,
        detail: { ...detail, folder: where, unwritable: true },
      },
    );
  }
  return new SpoolError("INTERNAL", `cannot open the queue ${path}: ${(error as Error)?.message ?? String(error)}`, {
    remediation: "check that the file is a spoolctl queue (spoolctl doctor), or pass another --db",
    detail,
  });
}

/** The nearest existing folder at or above `dir`, when this user may not write it (a new file or folder cannot be made below); else null. */
function unwritableAncestor(dir: string): string | null {
  let at = dir;
  while (!existsSync(at)) {
    const up = dirname(at);
    if (up === at) return null;
    at = up;
  }
  return mayAccess(at, constants.W_OK) ? null : at;
}
