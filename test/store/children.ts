/**
 * The parent side of the race cases: spawns child scripts as separate OS
 * processes, holds them at a barrier until every one has opened the queue,
 * releases them together, and collects each one's JSON result. Every wait has a
 * deadline; a child that fails or hangs fails the test with its stderr.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import type { QueueLocation } from "../../src/store/location.ts";
import { pollUntil } from "../support/store.ts";

/** A child script of this folder, by file name. */
export const childScript = (
  name:
    | "claimant.ts"
    | "adder.ts"
    | "opener.ts"
    | "retrier.ts"
    | "locker.ts"
    | "ticker.ts"
    | "lane-claimant.ts"
    | "needs-claimant.ts"
    | "event-writer.ts",
): string => resolve(import.meta.dir, name);

interface Running {
  id: number;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  stdout: Promise<string>;
  stderr: Promise<string>;
}

function describeChild(c: Running, stdout: string, stderr: string, code: number | null): string {
  return `child ${c.id} (pid ${c.proc.pid}) exit ${code}\n--- stdout\n${stdout}--- stderr\n${stderr}`;
}

/**
 * Runs `script` once per entry of `perChild` (extra arguments of that child),
 * each as `bun script DB_PATH SPOOL_DIR --barrier DIR --id N ...extra` (one
 * DB_PATH SPOOL_DIR pair per location when given several).
 * `duringRace` runs (in this process) from the go signal until every child
 * has exited, e.g. an observer polling the queue; it is given the barrier
 * folder, where it may signal the children (a `stop` file).
 * Returns the children's JSON results in `perChild` order.
 */
export async function raceChildren<T>(
  script: string,
  location: QueueLocation | QueueLocation[],
  perChild: string[][],
  opts: { timeoutMs?: number; duringRace?: (done: () => boolean, barrierDir: string) => Promise<void> } = {},
): Promise<T[]> {
  const timeoutMs = opts.timeoutMs ?? 90_000;
  const barrierDir = mkdtempSync(join(tmpdir(), "spoolctl-race-"));
  const children: Running[] = [];
  const where = (Array.isArray(location) ? location : [location]).flatMap((l) => [l.dbPath, l.spoolDir]);
  try {
    perChild.forEach((extra, id) => {
      const proc = Bun.spawn(
        [process.execPath, script, ...where, "--barrier", barrierDir, "--id", String(id), ...extra],
        {
          stdin: "ignore",
          stdout: "pipe",
          stderr: "pipe",
        },
      );
      children.push({ id, proc, stdout: new Response(proc.stdout).text(), stderr: new Response(proc.stderr).text() });
    });

    // Every child has opened the queue (or one died trying: fail with its stderr).
    await pollUntil(
      `${children.length} children to reach the barrier`,
      async () => {
        for (const c of children) {
          if (c.proc.exitCode !== null && !existsSync(join(barrierDir, `ready-${c.id}`))) {
            throw new Error(
              `a child exited before the barrier:\n${describeChild(c, await c.stdout, await c.stderr, c.proc.exitCode)}`,
            );
          }
        }
        return children.every((c) => existsSync(join(barrierDir, `ready-${c.id}`)));
      },
      timeoutMs,
      5,
    );
    writeFileSync(join(barrierDir, "go"), "");

    let finished = false;
    const exited = Promise.all(children.map((c) => c.proc.exited)).finally(() => {
      finished = true;
    });
    const observer = opts.duringRace ? opts.duringRace(() => finished, barrierDir) : Promise.resolve();
    let timer: Timer | undefined;
    const timeout = new Promise<"timeout">((res) => {
      timer = setTimeout(() => res("timeout"), timeoutMs);
    });
    const outcome = await Promise.race([exited, timeout]);
    clearTimeout(timer);
    if (outcome === "timeout") {
      const alive = children.filter((c) => c.proc.exitCode === null);
      for (const c of alive) c.proc.kill("SIGKILL");
      await Promise.all(alive.map((c) => c.proc.exited));
      const reports = await Promise.all(alive.map(async (c) => describeChild(c, await c.stdout, await c.stderr, null)));
      throw new Error(`children still running after ${timeoutMs} ms (killed):\n${reports.join("\n")}`);
    }
    await observer;

    const results: T[] = [];
    for (const c of children) {
      const [stdout, stderr] = await Promise.all([c.stdout, c.stderr]);
      if (c.proc.exitCode !== 0)
        throw new Error(`a child failed:\n${describeChild(c, stdout, stderr, c.proc.exitCode)}`);
      const last = stdout.trim().split("\n").pop() ?? "";
      try {
        results.push(JSON.parse(last) as T);
      } catch {
        throw new Error(`a child printed no JSON result:\n${describeChild(c, stdout, stderr, c.proc.exitCode)}`);
      }
    }
    return results;
  } finally {
    for (const c of children) if (c.proc.exitCode === null) c.proc.kill("SIGKILL");
    rmSync(barrierDir, { recursive: true, force: true });
  }
}
