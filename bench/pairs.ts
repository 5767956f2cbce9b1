#!/usr/bin/env bun
/**
 * One SQLite drain, A against B, in strict pairs: each pair drains a copy of
 * the same queue file (N `true` jobs, made once per checkout by its own `add
 * --from`) with one `work --drain` of checkout A, then of B (the order flips
 * every pair), and the ratio is taken within the pair. Where `bench/run.ts`
 * runs a whole round of scenarios between two drains of one scenario, this
 * keeps the two drains seconds apart, so that a machine whose speed drifts
 * (a shared VM) weighs on both alike. Prints wall and CPU (user + sys of the
 * worker and its children) per job and the median of the pairs' A/B ratios,
 * with their spread.
 *
 * Usage: bun bench/pairs.ts --before PATH/src/cli.ts [--pairs 12] [--jobs 1000] [--concurrency 4]
 */
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { cleanup, fmt, median, ndjson, run, tempDir, writeFile } from "./lib.ts";
import { type Cli, clisUnderTest, commitOf } from "./queues.ts";

const argv = process.argv.slice(2);
const opt = (name: string, fallback: string): string => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] ? argv[i + 1]! : fallback;
};
const PAIRS = Number(opt("--pairs", "12"));
const JOBS = Number(opt("--jobs", "1000"));
const CONCURRENCY = opt("--concurrency", "4");
const clis = clisUnderTest(opt("--before", process.env.SPOOLCTL_BENCH_BEFORE ?? ""));
if (clis.length < 2) {
  console.error("bench/pairs.ts needs --before PATH/src/cli.ts (the checkout to compare with)");
  process.exit(2);
}

const dir = tempDir("pairs");
const lines = writeFile(join(dir, "jobs.ndjson"), ndjson(JOBS, ["true"]));

/** The queue file of N queued jobs that `cli` made itself (so each checkout meets its own schema). */
async function template(cli: Cli): Promise<string> {
  const db = join(dir, `${cli.label}.db`);
  const r = await run([process.execPath, cli.path, "add", "--from", lines], { env: { SPOOLCTL_DB: db } });
  if (r.code !== 0) throw new Error(`${cli.label}: add --from exited ${r.code}: ${r.stderr}`);
  return db;
}

/** One drain of a fresh copy of `db` by `cli`: wall and CPU in ms. */
async function drain(cli: Cli, db: string, n: number): Promise<{ ms: number; cpuMs: number }> {
  const copy = join(dir, `${cli.label}-${n}.db`);
  copyFileSync(db, copy);
  const r = await run([process.execPath, cli.path, "work", "--drain", "--concurrency", CONCURRENCY], {
    env: { SPOOLCTL_DB: copy },
    quiet: true,
  });
  if (r.code !== 0) throw new Error(`${cli.label}: work --drain exited ${r.code}`);
  return { ms: r.ms, cpuMs: r.cpuMs };
}

try {
  const [a, b] = clis as [Cli, Cli];
  const dbs = [await template(a), await template(b)] as const;
  await drain(a, dbs[0], -1); // warm-up of both: page cache, Bun's transpiler cache
  await drain(b, dbs[1], -1);
  const wall: number[] = [];
  const cpu: number[] = [];
  const per: Record<string, { ms: number[]; cpu: number[] }> = {
    [a.label]: { ms: [], cpu: [] },
    [b.label]: { ms: [], cpu: [] },
  };
  for (let i = 0; i < PAIRS; i++) {
    const order = i % 2 === 0 ? [0, 1] : [1, 0];
    const got: { ms: number; cpuMs: number }[] = [];
    for (const k of order) got[k] = await drain(clis[k]!, dbs[k]!, i);
    wall.push(got[0]!.ms / got[1]!.ms);
    cpu.push(got[0]!.cpuMs / got[1]!.cpuMs);
    for (const k of [0, 1]) {
      per[clis[k]!.label]!.ms.push(got[k]!.ms);
      per[clis[k]!.label]!.cpu.push(got[k]!.cpuMs);
    }
    process.stderr.write(`pair ${i + 1}/${PAIRS}: A/B wall ${fmt(wall.at(-1)!, 3)}\n`);
  }
  const spread = (xs: number[]) => `${fmt(Math.min(...xs), 3)}–${fmt(Math.max(...xs), 3)}`;
  console.log(`# ${JOBS} \`true\` jobs, one \`work --drain --concurrency ${CONCURRENCY}\` (SQLite), ${PAIRS} pairs\n`);
  console.log(`A: ${commitOf(a)} (${a.path}), B: ${commitOf(b)} (${b.path})\n`);
  console.log("| checkout | jobs/s (median) | CPU ms per job (median) |\n|---|---:|---:|");
  for (const c of clis) {
    const p = per[c.label]!;
    console.log(`| ${c.label} | ${fmt(JOBS / (median(p.ms) / 1000), 0)} | ${fmt(median(p.cpu) / JOBS, 2)} |`);
  }
  console.log(
    `\nA/B wall, median of pairs: ${fmt(median(wall), 3)} (${spread(wall)}); A/B CPU: ${fmt(median(cpu), 3)} (${spread(cpu)})`,
  );
} finally {
  cleanup();
}
