/**
 * The spool folder (docs/architecture.md "Output"): attempt output in one flat
 * folder, `output/<job>.<attempt>.stdout|stderr`, created owner-only (0700
 * folder, 0600 files), so an attempt costs no folder operation. Spools of
 * earlier versions hold `output/<job>/<attempt>/stdout|stderr`: every reader
 * goes by the paths recorded on the attempt row, so those stay readable as
 * they are, and prune removes their job folders too.
 */
import { rmSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";

/** Absolute paths of an attempt's captured output. */
export function attemptOutputPaths(
  spoolDir: string,
  jobId: number,
  attemptNo: number,
): { stdout: string; stderr: string } {
  const base = join(spoolDir, "output", `${jobId}.${attemptNo}`);
  return { stdout: `${base}.stdout`, stderr: `${base}.stderr` };
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
  // The job's folder of the layout before the flat one (gone already when it never had one).
  rmSync(join(spoolDir, "output", String(jobId)), { recursive: true, force: true });
  return bytes;
}
