/**
 * Where a job's program is, looked up once per worker rather than once per
 * attempt (docs/architecture.md "Execution"): `Bun.spawn` of a bare name such
 * as `true` probes every folder of PATH with stat(2) before it forks (8
 * failing probes per job on a common PATH). A worker keeps what it found for
 * a few seconds, as a shell's `hash` does, so a program installed or removed
 * meanwhile is seen within {@link PROGRAM_PATH_TTL_MS}.
 */
import { isAbsolute } from "node:path";

/** How long a found program path is reused, milliseconds. */
const PROGRAM_PATH_TTL_MS = 5_000;

const found = new Map<string, { path: string; at: number }>();

/**
 * The absolute path `program` resolves to on `pathVar` (the job's PATH), or
 * null when the caller should let `Bun.spawn` look it up itself: a name with
 * a slash (a path, relative to the job's cwd), a PATH with a relative entry
 * (its meaning depends on the cwd), or a name not found (the spawn then
 * reports it). `now` is milliseconds on any monotonic clock.
 */
export function programPath(program: string, pathVar: string | undefined, now = performance.now()): string | null {
  if (program === "" || program.includes("/") || pathVar === undefined) return null;
  const key = `${pathVar}\0${program}`;
  const hit = found.get(key);
  if (hit && now - hit.at < PROGRAM_PATH_TTL_MS) return hit.path;
  if (pathVar.split(":").some((dir) => dir === "" || !isAbsolute(dir))) return null;
  const path = Bun.which(program, { PATH: pathVar });
  if (path === null) {
    found.delete(key);
    return null;
  }
  found.set(key, { path, at: now });
  return path;
}

/** Forgets what was found for `program` (its cached path failed to start). */
export function forgetProgramPath(program: string, pathVar: string | undefined): void {
  found.delete(`${pathVar}\0${program}`);
}
