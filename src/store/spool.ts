/**
 * The spool folder: `output/<job>/<attempt>/stdout|stderr` (docs/architecture.md
 * "Output"), created
 * owner-only (0700 folders, 0600 files).
 */
import { rmSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";

/** Absolute paths of an attempt's captured output. */
export function attemptOutputPaths(spoolDir: string, jobId: number, attemptNo: number): { stdout: string; stderr: string } {
  const dir = join(spoolDir, "output", String(jobId), String(attemptNo));
  return { stdout: join(dir, "stdout"), stderr: join(dir, "stderr") };
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
