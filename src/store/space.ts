/**
 * Free space on the disks a queue writes to (docs/architecture.md "Storage
 * conditions"): the SQLite file's folder and the spool folder. A worker pauses
 * claiming while either is nearly full, an attempt that failed while its
 * output's disk was full is recorded as `output_write_failed`, and `status`
 * and `doctor` show the condition.
 */
import { existsSync, statfsSync } from "node:fs";
import { dirname } from "node:path";
import type { FullDisk } from "../describe/schemas-core.ts";
import type { DiskSpace } from "../model/storage.ts";
import { isPgUrl } from "./postgres/url.ts";

/**
 * Below this many free bytes a disk counts as full: a commit needs a few pages
 * of write-ahead log, an attempt room for its output.
 */
const LOW_SPACE_BYTES = 256 * 1024;

/** Free bytes for this process on the filesystem holding `path` (or its nearest existing ancestor); null when unknown. */
function freeBytes(path: string): number | null {
  let at = path;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  try {
    const fs = statfsSync(at);
    const blocks = process.getuid?.() === 0 ? fs.bfree : fs.bavail;
    return Number(blocks) * Number(fs.bsize);
  } catch {
    return null;
  }
}

/**
 * The disks of a queue on this host: the SQLite file's folder (a PostgreSQL
 * queue's storage is the server's, not ours to measure) and the spool.
 */
export function queueDisks(store: { driver: "sqlite" | "postgres"; location: string; spoolDir: string }): DiskSpace[] {
  const out: DiskSpace[] = [];
  const measure = (role: DiskSpace["role"], path: string) => {
    const free = freeBytes(path);
    if (free !== null) out.push({ role, path, freeBytes: free, full: free < LOW_SPACE_BYTES });
  };
  if (store.driver === "sqlite") measure("database", dirname(store.location));
  measure("spool", store.spoolDir);
  return out;
}

/**
 * The disks of the queue at `dbPath` (a path, or a URL: a PostgreSQL queue's
 * storage is the server's) with spool folder `spoolDir`: {@link queueDisks}
 * for `doctor`, which reads the location without opening the queue.
 */
export function locationDisks(dbPath: string, spoolDir: string): DiskSpace[] {
  return queueDisks({ driver: isPgUrl(dbPath) ? "postgres" : "sqlite", location: dbPath, spoolDir });
}

/** The queue's full disks on this host (see {@link FullDisk}; `status`, `workers`); none for a queue not created yet. */
export function fullDisks(store: {
  driver: "sqlite" | "postgres";
  location: string;
  spoolDir: string;
  exists: boolean;
}): FullDisk[] {
  if (!store.exists) return [];
  return queueDisks(store)
    .filter((d) => d.full)
    .map((d) => ({ role: d.role, path: d.path, free_bytes: d.freeBytes }));
}

/** Whether the disk holding `path` is full (see {@link LOW_SPACE_BYTES}); false when unknown. */
export function diskFull(path: string): boolean {
  const free = freeBytes(path);
  return free !== null && free < LOW_SPACE_BYTES;
}
