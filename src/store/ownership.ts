/**
 * Folder ownership (docs/architecture.md "Folder ownership"): a queue is one
 * user's. Whoever can write its database or its spool decides what that user's
 * workers run and where they write, so a writer refuses a database, a WAL/shm
 * file or a spool folder that another user owns or that group/others may
 * write, and a folder every user may write without the sticky bit (where
 * anyone can swap the files). Attempt files are created fresh, never through a
 * symbolic link.
 */
import {
  accessSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  type Stats,
  statSync,
  unlinkSync,
} from "node:fs";
import { basename, dirname } from "node:path";
import { SpoolError } from "../contract/errors.ts";

/** The effective user id, or null where there is none (then nothing is checked). */
function euid(): number | null {
  return typeof process.geteuid === "function" ? process.geteuid() : null;
}

function statOrNull(path: string, follow: boolean): Stats | null {
  try {
    return follow ? statSync(path) : lstatSync(path);
  } catch {
    return null;
  }
}

const REMEDY =
  'a queue belongs to one user: keep it in a folder only you can write (the default ./.spoolctl/ is created 0700), or pass another --db; see the README\'s "Folder ownership"';

function refuse(message: string, path: string, remediation: string, reason: string): SpoolError {
  return new SpoolError("INTERNAL", message, { remediation, detail: { path, unsafe: reason } });
}

/**
 * Refuses an existing queue file or spool folder (`what` names it in the
 * message) that is not this user's: owned by another user (a symbolic link
 * too), or writable by group or others. A missing path passes. Raises
 * `INTERNAL` with `detail.unsafe` (`owner` | `mode`) and a remediation.
 */
export function refuseUnsafePath(path: string, what: string): void {
  const me = euid();
  if (me === null) return;
  const link = statOrNull(path, false);
  if (!link) return;
  const target = link.isSymbolicLink() ? statOrNull(path, true) : link;
  for (const st of target ? [link, target] : [link]) {
    if (st.uid !== me) {
      throw refuse(
        `refusing the queue's ${what} ${path}: it is owned by uid ${st.uid}, not by you (uid ${me}); another user could change what your workers run`,
        path,
        `if you did not create it, remove it (rm -r ${path}); ${REMEDY}`,
        "owner",
      );
    }
  }
  if (target && (target.mode & 0o022) !== 0) {
    const mode = (target.mode & 0o777).toString(8).padStart(4, "0");
    throw refuse(
      `refusing the queue's ${what} ${path}: its mode ${mode} lets group or others write it`,
      path,
      `run: chmod go-w ${path}  (spoolctl creates it ${target.isDirectory() ? "0700" : "0600"}); ${REMEDY}`,
      "mode",
    );
  }
}

/** The login name of user `uid` (from /etc/passwd), or null when it has none there. */
function userName(uid: number): string | null {
  try {
    for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
      const [name, , id] = line.split(":");
      if (name && Number(id) === uid && id !== "") return name;
    }
  } catch {
    // no passwd file: the uid alone names the user
  }
  return null;
}

/** `name (uid N)`, or `uid N` for a user without a name. */
export function ownerLabel(uid: number): string {
  const name = userName(uid);
  return name === null ? `uid ${uid}` : `${name} (uid ${uid})`;
}

/**
 * The owner of `path` when it is neither this user nor root — for a symbolic
 * link, of the link or of its target, whichever is another's — else null (a
 * missing path, or no user ids on this platform). What git's
 * `safe.directory` calls dubious ownership (docs/architecture.md "Location").
 */
export function foreignOwner(path: string): number | null {
  const me = euid();
  if (me === null) return null;
  const link = statOrNull(path, false);
  if (!link) return null;
  const target = link.isSymbolicLink() ? statOrNull(path, true) : null;
  for (const st of target ? [link, target] : [link]) if (st.uid !== me && st.uid !== 0) return st.uid;
  return null;
}

/**
 * Refuses a folder holding a queue's database or spool folder that another
 * user (not root) owns: that user may rename them away and put theirs in their
 * place, sticky bit or not (docs/architecture.md "Folder ownership"). Raises
 * `INTERNAL` with `detail.unsafe` `folder_owner`.
 */
function refuseForeignFolder(dir: string): void {
  const uid = foreignOwner(dir);
  if (uid === null) return;
  throw refuse(
    `refusing a queue in ${dir}: the folder is owned by ${ownerLabel(uid)}, not by you (uid ${euid()}), who could replace the queue's files`,
    dir,
    `keep the queue in a folder of yours: pass another --db, or set SPOOLCTL_DB; ${REMEDY}`,
    "folder_owner",
  );
}

/**
 * Refuses a folder (holding a queue) that every user may write and that has
 * no sticky bit: there anyone may rename another user's files away and put
 * their own in place. `/tmp` (sticky) passes; group-writable folders pass
 * (many systems give each user a group of their own).
 */
function refuseOpenFolder(dir: string): void {
  if (euid() === null) return;
  const st = statOrNull(dir, true);
  if (st && (st.mode & 0o002) !== 0 && (st.mode & 0o1000) === 0) {
    throw refuse(
      `refusing a queue in ${dir}: every user may write that folder and it has no sticky bit, so anyone could replace the queue's files`,
      dir,
      `move the queue to a folder only you can write, or run: chmod +t ${dir}; ${REMEDY}`,
      "folder",
    );
  }
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The checks a writer makes before opening a queue: its folder
 * ({@link refuseForeignFolder}, {@link refuseOpenFolder}), then the database file and its `-wal`/`-shm`
 * companions (`dbPath` null for a queue without a local file) and the spool
 * folder ({@link refuseUnsafePath}); for a database in a `.spoolctl/`
 * folder, the folder holding that one too. A database file this user may not write
 * is left to the driver, which names the permission problem (and nothing is
 * checked then: nothing can be written).
 */
export function refuseUnsafeQueue(dbPath: string | null, spoolDir: string): void {
  if (dbPath !== null) {
    // Not ours to write at all: the driver names the permission problem instead.
    if (statOrNull(dbPath, true) && !writable(dbPath)) return;
    refuseForeignFolder(dirname(dbPath));
    refuseOpenFolder(dirname(dbPath));
    if (basename(dirname(dbPath)) === ".spoolctl") {
      // Whoever may rename the .spoolctl/ folder away may make the queue vanish (README "Folder ownership").
      refuseForeignFolder(dirname(dirname(dbPath)));
      refuseOpenFolder(dirname(dirname(dbPath)));
    }
    for (const [path, what] of [
      [dbPath, "database"],
      [`${dbPath}-wal`, "WAL file"],
      [`${dbPath}-shm`, "shared-memory file"],
    ] as const)
      refuseUnsafePath(path, what);
  }
  refuseForeignFolder(dirname(spoolDir));
  refuseOpenFolder(dirname(spoolDir));
  refuseUnsafePath(spoolDir, "spool folder");
}

/**
 * A folder of the spool made or checked: created 0700 when missing; when it
 * exists it must be a real folder (not a symbolic link) of this user that
 * group/others cannot write.
 */
function privateDir(dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
    return;
  } catch (error) {
    if ((error as { code?: string }).code !== "EEXIST") throw error;
  }
  const st = lstatSync(dir);
  if (!st.isDirectory()) throw new Error(`${dir} is not a folder (a symbolic link or a file is refused)`);
  const me = euid();
  if (me !== null && st.uid !== me) throw new Error(`${dir} is owned by uid ${st.uid}, not by this user`);
  if ((st.mode & 0o022) !== 0) throw new Error(`${dir} may be written by group or others`);
}

/** Output folders this process has made or checked with {@link privateDir}. */
const checkedDirs = new Set<string>();

/**
 * Creates one attempt output file (docs/architecture.md "Output") for the
 * child to write, and returns its descriptor: the spool's folders are made
 * 0700 (missing parents included) and the file's own folder checked with
 * {@link privateDir}, once per process; the file is opened `O_CREAT | O_EXCL | O_NOFOLLOW`, mode
 * 0600, so a file or link put there by someone else is never followed,
 * truncated or written. A regular file of this user left there earlier (an
 * attempt folder reused after an interrupted prune) is removed first. Raises
 * the fs error otherwise.
 */
export function createAttemptFile(path: string): number {
  const dir = dirname(path);
  // The folder is checked once per process (all of a worker's attempts share it: docs/architecture.md
  // "Output"), and again if it went away meanwhile.
  if (!checkedDirs.has(dir)) {
    mkdirSync(dirname(dir), { recursive: true, mode: 0o700 });
    privateDir(dir);
    checkedDirs.add(dir);
  }
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  try {
    return openSync(path, flags, 0o600);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ENOENT" && checkedDirs.delete(dir)) return createAttemptFile(path);
    if (code !== "EEXIST") throw error;
  }
  const st = lstatSync(path);
  const me = euid();
  if (!st.isFile() || (me !== null && st.uid !== me)) {
    throw new Error(
      `refusing to write ${path}: something else is already there (${st.isSymbolicLink() ? "a symbolic link" : `owned by uid ${st.uid}`})`,
    );
  }
  unlinkSync(path);
  return openSync(path, flags, 0o600);
}
