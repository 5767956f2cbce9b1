#!/usr/bin/env bun
/**
 * What `synchronous=FULL` costs (docs/architecture.md "Durability"): the same
 * work with SPOOLCTL_SYNCHRONOUS=full (the default) and =normal, on a real
 * SQLite file in the temp folder (or --dir DIR, to measure another disk):
 *
 *   1. an add (one job, its own transaction), in-process: median ms;
 *   2. a worker's writes for one job (claim, then the result), in-process: median ms;
 *   3. the `spoolctl add` command end to end (process start included): median ms.
 *
 * Usage: bun bench/durability.ts [--adds N] [--jobs N] [--cli N] [--dir DIR]
 * Prints a markdown table on stdout.
 */
import { mkdtempSync, statfsSync } from "node:fs";
import { join } from "node:path";
import { validateAddInput } from "../src/ops/job-spec.ts";
import { openQueue } from "../src/store/index.ts";
import { resolveLocation } from "../src/store/location.ts";
import { addJobs } from "../src/store/verbs/add.ts";
import { claimJobs } from "../src/store/verbs/claim.ts";
import { recordAttemptEnd } from "../src/store/verbs/record.ts";
import { BUN, CLI, cleanup, fmt, median, tempDir } from "./lib.ts";

const argv = process.argv.slice(2);
const opt = (name: string, dflt: number) => {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
};
const dirArg = (() => {
  const i = argv.indexOf("--dir");
  return i >= 0 ? argv[i + 1] : undefined;
})();
const ADDS = opt("--adds", 300);
const JOBS = opt("--jobs", 300);
const CLI_RUNS = opt("--cli", 20);

function scratch(tag: string): string {
  return dirArg ? mkdtempSync(join(dirArg, `spoolctl-durability-${tag}-`)) : tempDir(`durability-${tag}`);
}

async function inProcess(mode: string): Promise<{ add: number[]; job: number[] }> {
  process.env.SPOOLCTL_SYNCHRONOUS = mode;
  const dir = scratch(mode);
  const store = await openQueue(resolveLocation(join(dir, "queue.db"), {}, dir), { create: true });
  const spec = validateAddInput({ argv: ["true"] }, (n) => `--${n}`, dir);
  const add: number[] = [];
  for (let i = 0; i < ADDS; i++) {
    const t = performance.now();
    await addJobs(store, [spec]);
    add.push(performance.now() - t);
  }
  const job: number[] = [];
  for (let i = 0; i < JOBS; i++) {
    const t = performance.now();
    const [claimed] = await claimJobs(
      store,
      { queue: "default", workerId: "bench", workerPid: process.pid, slots: null },
      1,
    );
    if (!claimed) break;
    await recordAttemptEnd(
      store,
      { jobId: claimed.job.id, attemptNo: claimed.attemptNo, workerId: "bench" },
      { kind: "exited", code: 0 },
    );
    job.push(performance.now() - t);
  }
  await store.close();
  return { add, job };
}

function cliAdds(mode: string): number[] {
  const dir = scratch(`cli-${mode}`);
  const env = { ...process.env, SPOOLCTL_DB: join(dir, "queue.db"), SPOOLCTL_SYNCHRONOUS: mode };
  Bun.spawnSync([BUN, CLI, "add", "--", "true"], { env, stdout: "ignore" }); // creates the queue
  const out: number[] = [];
  for (let i = 0; i < CLI_RUNS; i++) {
    const t = performance.now();
    const r = Bun.spawnSync([BUN, CLI, "add", "--", "true"], { env, stdout: "ignore" });
    if (r.exitCode !== 0) throw new Error(`spoolctl add failed in ${dir}`);
    out.push(performance.now() - t);
  }
  return out;
}

const where = dirArg ?? tempDir("probe");
const fsType = statfsSync(where).type.toString(16);
const rows: string[] = [];
const signed = (x: number, digits: number) => `${x >= 0 ? "+" : "−"}${fmt(Math.abs(x), digits)}`;
const results: Record<string, { add: number; job: number; cli: number }> = {};
for (const mode of ["normal", "full"]) {
  process.stderr.write(`durability: ${mode}…\n`);
  const { add, job } = await inProcess(mode);
  results[mode] = { add: median(add), job: median(job), cli: median(cliAdds(mode)) };
}
const n = results.normal!;
const f = results.full!;
rows.push(`| measure | synchronous=NORMAL | synchronous=FULL (default) | FULL − NORMAL |`, `|---|---|---|---|`);
rows.push(
  `| add, in-process (median of ${ADDS}) | ${fmt(n.add, 2)} ms | ${fmt(f.add, 2)} ms | ${signed(f.add - n.add, 2)} ms |`,
);
rows.push(
  `| claim + result of one job, in-process (median of ${JOBS}) | ${fmt(n.job, 2)} ms | ${fmt(f.job, 2)} ms | ${signed(f.job - n.job, 2)} ms |`,
);
rows.push(
  `| \`spoolctl add\` end to end (median of ${CLI_RUNS}) | ${fmt(n.cli, 1)} ms | ${fmt(f.cli, 1)} ms | ${signed(f.cli - n.cli, 1)} ms |`,
);
console.log(`Durability cost on ${where} (filesystem type 0x${fsType}), Bun ${Bun.version}:\n`);
console.log(rows.join("\n"));
cleanup();
