/**
 * The spool folder: `output/<job>/<attempt>/stdout|stderr` (docs/architecture.md
 * "Output"), created
 * owner-only (0700 folders, 0600 files).
 */
import { chmodSync, existsSync, mkdirSync, rmSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";

/** Absolute paths of an attempt's captured output. */
export function attemptOutputPaths(spoolDir: string, jobId: number, attemptNo: number): { stdout: string; stderr: string } {
  const dir = join(spoolDir, "output", String(jobId), String(attemptNo));
  return { stdout: join(dir, "stdout"), stderr: join(dir, "stderr") };
}

/** Creates the spool root owner-only if missing (0700, docs/architecture.md "Output"). */
export function ensureSpool(spoolDir: string): void {
  if (!existsSync(spoolDir)) {
    mkdirSync(spoolDir, { recursive: true, mode: 0o700 });
    chmodSync(spoolDir, 0o700);
  }
}

/** Creates an attempt's folder (0700); raises the fs error (ENOSPC, EACCES…) if it cannot. */
export function ensureAttemptDir(spoolDir: string, jobId: number, attemptNo: number): void {
  ensureSpool(spoolDir);
  mkdirSync(join(spoolDir, "output", String(jobId), String(attemptNo)), { recursive: true, mode: 0o700 });
}

/** Total size in bytes of the files that exist among `paths`. */
export function filesSize(paths: string[]): number {
  let bytes = 0;
  for (const path of paths) {
    try {
      bytes += statSync(path).size;
    } catch {
      // missing already
    }
  }
  return bytes;
}

/**
 * Deletes a job's output (`prune`): the attempt files recorded in the database,
 * then the job's folder under the spool. Returns the bytes freed. Missing files
 * are not an error; a file that cannot be removed raises the fs error.
 */
export function removeJobOutput(spoolDir: string, jobId: number, paths: string[]): number {
  let bytes = 0;
  for (const path of paths) {
    let size: number;
    try {
      size = statSync(path).size;
    } catch {
      continue;
    }
    unlinkSync(path);
    bytes += size;
  }
  rmSync(join(spoolDir, "output", String(jobId)), { recursive: true, force: true });
  return bytes;
}
