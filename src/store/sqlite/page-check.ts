/**
 * The check every open of an existing SQLite queue makes (docs/architecture.md
 * "A damaged file"): each page of the file is either free or reached from a
 * b-tree root, and each b-tree page has a valid header. It reads the file once
 * through SQLite's `dbstat` table (WAL-aware: the snapshot every statement
 * sees), without decoding rows: about a third of `PRAGMA quick_check`'s cost
 * (figures in docs/benchmarks.md "Opening a damaged file"). A file found
 * intact is remembered by its stat stamp, so the next open of an unchanged
 * file skips the walk.
 */
import type { Database } from "bun:sqlite";
import {
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { SpoolError } from "../../contract/errors.ts";
import { mapStorageError } from "./errors.ts";

/** The offset of SQLite's lock byte: its page is left out of every b-tree (sqlite.org/fileformat.html). */
const LOCK_BYTE = 0x40000000;

/** A file changed this recently (ms) is not remembered as intact: its ctime may not yet show a later write. */
const SETTLE_MS = 2000;

/** The stamp file, in the spool folder: the main file's stat when it was last found intact. */
const STAMP_FILE = "intact";

/**
 * The main file's identity and change time, as one string: any write to the
 * file (by SQLite or by anyone else) changes its ctime, which no user can set
 * back. Null when it cannot be read, or was changed less than {@link SETTLE_MS} ago.
 */
function stampOf(path: string): string | null {
  try {
    const st = statSync(path, { bigint: true });
    if (Date.now() - Number(st.ctimeMs) < SETTLE_MS) return null;
    return `${st.dev}:${st.ino}:${st.size}:${st.ctimeNs}:${st.mtimeNs}`;
  } catch {
    return null;
  }
}

function readStamp(spoolDir: string): string | null {
  try {
    return readFileSync(join(spoolDir, STAMP_FILE), "utf8");
  } catch {
    return null;
  }
}

/**
 * Remembers `stamp`, only in a spool folder of this user's (never through a
 * link), made 0700 first by a writer (`create`); failures are ignored.
 */
function writeStamp(spoolDir: string, stamp: string, create: boolean): void {
  try {
    if (create) mkdirSync(spoolDir, { mode: 0o700 });
  } catch {
    // there already (checked below), or not ours to make
  }
  try {
    const dir = lstatSync(spoolDir);
    if (!dir.isDirectory() || (typeof process.geteuid === "function" && dir.uid !== process.geteuid())) return;
    const tmp = join(spoolDir, `${STAMP_FILE}.${process.pid}`);
    const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o600);
    try {
      writeSync(fd, stamp);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, join(spoolDir, STAMP_FILE));
  } catch {
    // Only a saving: the next open walks the file again.
  }
}

/**
 * Raises `QUEUE_CORRUPT` when the file at `path`, opened as `db`, has a page
 * whose b-tree header is not one (mid-file garbage over a table or an index),
 * or pages that no b-tree nor the free list reaches (a damaged interior page
 * or overflow chain hides its children). A statement that meets the damage
 * itself raises it too (through {@link mapStorageError}). Skipped when the
 * file's stamp is the one remembered in `spoolDir` as intact (a `writer`'s
 * open makes that folder to remember it). Row contents are `PRAGMA
 * quick_check`'s business, run by `status`, `work` and `doctor`.
 */
export function checkPages(db: Database, path: string, spoolDir: string, writer: boolean): void {
  const stamp = stampOf(path);
  if (stamp !== null && readStamp(spoolDir) === stamp) return;
  // One read transaction: the walk and the counts see the same snapshot while others write.
  const found = mapStorageError(path, () =>
    db
      .transaction(() => {
        const walk = db
          .query("SELECT count(*) AS pages, min(CASE WHEN pagetype = 'corrupted' THEN pageno END) AS bad FROM dbstat")
          .get() as { pages: number; bad: number | null };
        const total = (db.query("PRAGMA page_count").get() as { page_count: number }).page_count;
        const free = (db.query("PRAGMA freelist_count").get() as { freelist_count: number }).freelist_count;
        const size = (db.query("PRAGMA page_size").get() as { page_size: number }).page_size;
        // The page holding byte 2^30 (SQLite's lock byte) is never used, in a file that reaches it.
        return { ...walk, total, free: free + (total * size > LOCK_BYTE ? 1 : 0) };
      })
      .deferred(),
  );
  let problem: string | null = null;
  if (found.bad !== null) problem = `page ${found.bad} is not a valid b-tree page (overwritten?)`;
  else if (found.pages + found.free !== found.total)
    problem = `${Math.abs(found.total - found.pages - found.free)} of its ${found.total} pages are not where its tables and free list say`;
  if (problem === null) {
    // The stamp taken before the walk: a write since then changed the ctime, and the next open walks again.
    if (stamp !== null) writeStamp(spoolDir, stamp, writer);
    return;
  }
  throw new SpoolError("QUEUE_CORRUPT", `the queue file ${path} is damaged: ${problem}`, {
    detail: { path, sqlite_code: null },
  });
}
