/**
 * The floor: spawn N `true` processes bare from Bun, `inflight` at a time, in a
 * fresh Bun process (like a worker). Prints {"ms": …} as JSON.
 *
 *   bun bench/floor.ts N INFLIGHT [bare|executor]
 *
 * `bare`: stdio ignored, nothing else. `executor`: what src/worker/executor.ts
 * does around a spawn (own process group, env copy, stdout/stderr opened as two
 * fresh files in one flat output folder, `output/<job>.<attempt>.stdout|stderr`
 * as src/store/spool.ts lays them out), without any SQLite. The folder is
 * removed after the timing; on a disk mounted with `discard` that slows file
 * creation for a while after, so run other measurements before this mode.
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const n = Number(process.argv[2] ?? 1000);
const inflight = Number(process.argv[3] ?? 1);
const mode = process.argv[4] ?? "bare";
const dir = mode === "executor" ? mkdtempSync(join(tmpdir(), "spoolctl-bench-floor-")) : "";
if (dir) mkdirSync(join(dir, "output"), { mode: 0o700 });

async function one(i: number): Promise<void> {
  if (mode === "bare") {
    await Bun.spawn(["true"], { stdin: "ignore", stdout: "ignore", stderr: "ignore" }).exited;
    return;
  }
  const base = join(dir, "output", `${i}.1`);
  const out = openSync(`${base}.stdout`, "w", 0o600);
  const err = openSync(`${base}.stderr`, "w", 0o600);
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
