/**
 * Where the worker's thread spends its time per job, from a `bun --cpu-prof`
 * profile of bench/profile.ts (docs/benchmarks.md "Where the worker's time
 * goes"): samples grouped by what ran, a synchronous native call counting for
 * as long as it blocks (posix_spawn inside Bun.spawn, an fsync inside COMMIT).
 *
 *   bun --cpu-prof --cpu-prof-dir=DIR bench/profile.ts --jobs 2000 --concurrency 4
 *   bun bench/cpu-breakdown.ts DIR/CPU.*.cpuprofile 2000 [--json]
 *
 * The profile's own set-up (the `add --from` child, temp files) is left out.
 */
import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

/** Milliseconds per job by kind, largest first. */
export interface Breakdown {
  jobs: number;
  kinds: { kind: string; msPerJob: number }[];
  totalMsPerJob: number;
}

/** The kind of work a sample is, from its leaf function and the files on its stack. */
function kindOf(leaf: string, stack: string[]): string | null {
  const under = (re: RegExp) => stack.some((u) => re.test(u));
  if (["spawnSync", "mkdtempSync", "writeFileSync"].includes(leaf) && under(/\/bench\//) && !under(/\/src\//))
    return null; // set-up
  if (leaf === "spawn") return "Bun.spawn (synchronous part: posix_spawn, argv and env conversion)";
  if (
    ["mkdirSync", "openSync", "closeSync", "lstatSync", "statSync"].includes(leaf) &&
    under(/src\/(worker\/executor|store\/ownership)/)
  )
    return "attempt output: folders and files";
  if (["run", "get", "all", "query", "exec", "prepare", "values"].includes(leaf) && under(/sqlite/))
    return "SQLite: statements, BEGIN/COMMIT (fsync included)";
  if (leaf === "readFileSync" && under(/src\/worker\/liveness/)) return "/proc reads";
  if (leaf === "utimesSync") return "wake files (utimes after COMMIT)";
  if (leaf === "(garbage collector)") return "garbage collector";
  if (leaf === "(program)" || leaf === "(idle)") return "(program, idle)";
  return "worker JS, promises, timers, other natives";
}

/** Reads a .cpuprofile and groups its samples (see the file's comment). */
export function breakdown(path: string, jobs: number): Breakdown {
  const p = JSON.parse(readFileSync(path, "utf8")) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfMs = new Map<number, number>();
  p.samples.forEach((id, i) => selfMs.set(id, (selfMs.get(id) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000));
  const kinds = new Map<string, number>();
  for (const [id, ms] of selfMs) {
    const stack: string[] = [];
    for (let cur = byId.get(id); cur; cur = byId.get(parent.get(cur.id) ?? -1)) stack.push(cur.callFrame.url);
    const kind = kindOf(byId.get(id)!.callFrame.functionName, stack);
    if (kind !== null) kinds.set(kind, (kinds.get(kind) ?? 0) + ms);
  }
  const total = [...kinds.values()].reduce((a, b) => a + b, 0);
  return {
    jobs,
    kinds: [...kinds].sort((a, b) => b[1] - a[1]).map(([kind, ms]) => ({ kind, msPerJob: ms / jobs })),
    totalMsPerJob: total / jobs,
  };
}

if (import.meta.main) {
  const [path, jobs] = process.argv.slice(2);
  if (!path || !jobs) throw new Error("usage: bun bench/cpu-breakdown.ts FILE.cpuprofile JOBS [--json]");
  const b = breakdown(path, Number(jobs));
  if (process.argv.includes("--json")) console.log(JSON.stringify(b, null, 2));
  else {
    console.log("| what the worker's thread runs | ms per job | share |\n|---|---:|---:|");
    for (const k of b.kinds)
      console.log(`| ${k.kind} | ${k.msPerJob.toFixed(3)} | ${((100 * k.msPerJob) / b.totalMsPerJob).toFixed(0)} % |`);
    console.log(`| **all samples** | ${b.totalMsPerJob.toFixed(3)} | |`);
  }
}
