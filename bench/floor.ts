/**
 * The floor: spawn N `true` processes bare from Bun, `inflight` at a time, in a
 * fresh Bun process (like a worker). Prints {"ms": …} as JSON.
 *
 *   bun bench/floor.ts N INFLIGHT [bare|executor]
 *
 * `bare`: stdio ignored, nothing else. `executor`: what src/worker/executor.ts
 * does around a spawn (own process group, env copy, stdout/stderr opened into
 * a fresh per-attempt folder), without any SQLite.
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const n = Number(process.argv[2] ?? 1000);
const inflight = Number(process.argv[3] ?? 1);
const mode = process.argv[4] ?? "bare";
const dir = mode === "executor" ? mkdtempSync(join(tmpdir(), "spoolctl-bench-floor-")) : "";

async function one(i: number): Promise<void> {
  if (mode === "bare") {
    await Bun.spawn(["true"], { stdin: "ignore", stdout: "ignore", stderr: "ignore" }).exited;
    return;
  }
  const d = join(dir, "output", String(i), "1");
  mkdirSync(d, { recursive: true, mode: 0o700 });
  const out = openSync(join(d, "stdout"), "w", 0o600);
  const err = openSync(join(d, "stderr"), "w", 0o600);
  const proc = Bun.spawn(["true"], {
    env: { ...process.env },
    stdin: "ignore",
    stdout: out,
    stderr: err,
    detached: true,
  });
  closeSync(out);
  closeSync(err);
  await proc.exited;
}

let next = 0;
async function lane(): Promise<void> {
  while (next < n) await one(next++);
}
const t0 = performance.now();
await Promise.all(Array.from({ length: inflight }, lane));
const ms = performance.now() - t0;
if (dir) rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ ms })}\n`);
