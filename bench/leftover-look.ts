/**
 * The cost of the leftover look (docs/architecture.md "Leftover processes"):
 * spawns N `true` one at a time, and after each exit runs `leftoversOf` as the
 * executor does, timing the two apart. Prints {"jobs", "spawn_ms", "look_ms",
 * "procs"} as JSON (milliseconds per job, mean; `procs`: processes on the
 * machine at the end).
 *
 *   bun bench/leftover-look.ts [N]
 */
import { readdirSync } from "node:fs";
import { leftoversOf } from "../src/worker/process-groups.ts";

const n = Number(process.argv[2] ?? 500);
let spawnMs = 0;
let lookMs = 0;
for (let i = 0; i < n; i++) {
  const t0 = performance.now();
  const child = Bun.spawn(["true"], { stdio: ["ignore", "ignore", "ignore"], detached: true });
  await child.exited;
  const t1 = performance.now();
  leftoversOf(child.pid, "SPOOLCTL_ATTEMPT_TOKEN=bench-1-1");
  lookMs += performance.now() - t1;
  spawnMs += t1 - t0;
}
const procs = readdirSync("/proc").filter((name) => /^\d+$/.test(name)).length;
console.log(JSON.stringify({ jobs: n, spawn_ms: +(spawnMs / n).toFixed(3), look_ms: +(lookMs / n).toFixed(3), procs }));
