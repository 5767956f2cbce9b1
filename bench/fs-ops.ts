/**
 * What preparing an attempt's output costs on this file system, per job:
 * the executor's way today (a new `output/<job>/<attempt>/` folder, made with
 * `mkdir -p` once per file, and two files) against alternatives. No process is
 * spawned; compare with the per-job times of bench/run.ts.
 *
 *   bun bench/fs-ops.ts [N]          # default 1000 jobs per variant, 2 rounds
 */
import { closeSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import { cleanup, tempDir } from "./lib.ts";

const n = Number(process.argv[2] ?? 1000);

const variants: [string, (dir: string, i: number) => void][] = [
  [
    "today: mkdir -p output/ID/1 per file + 2 files",
    (d, i) => {
      const dir = join(d, "output", String(i), "1");
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const a = openSync(join(dir, "stdout"), "w", 0o600);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const b = openSync(join(dir, "stderr"), "w", 0o600);
      closeSync(a);
      closeSync(b);
    },
  ],
  [
    "one folder per job: mkdir output/ID + 2 files (ID/1.stdout…)",
    (d, i) => {
      const dir = join(d, "output", String(i));
      mkdirSync(dir, { mode: 0o700 });
      closeSync(openSync(join(dir, "1.stdout"), "w", 0o600));
      closeSync(openSync(join(dir, "1.stderr"), "w", 0o600));
    },
  ],
  [
    "flat: 2 files output/ID.1.stdout|stderr, no folder",
    (d, i) => {
      closeSync(openSync(join(d, "output", `${i}.1.stdout`), "w", 0o600));
      closeSync(openSync(join(d, "output", `${i}.1.stderr`), "w", 0o600));
    },
  ],
];

for (let round = 1; round <= 2; round++) {
  for (const [name, fn] of variants) {
    const dir = tempDir("fs-ops");
    mkdirSync(join(dir, "output"), { mode: 0o700 });
    const t0 = performance.now();
    for (let i = 0; i < n; i++) fn(dir, i);
    const us = ((performance.now() - t0) / n) * 1000;
    console.log(`round ${round}  ${name.padEnd(62)} ${us.toFixed(0).padStart(6)} µs/job`);
    cleanup();
  }
}
