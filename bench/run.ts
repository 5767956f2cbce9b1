#!/usr/bin/env bun
/**
 * spoolctl benchmark suite (issue 13 item 6, issue 9 "Benchmark"). Prints a
 * markdown report on stdout (progress on stderr), every section interleaved
 * so that the machine's load weighs on all rows alike:
 *
 *   throughput  trivial jobs: --concurrency 1/4, 1-16 worker processes on
 *               SQLite, 1/4/8 workers and --concurrency 4 on PostgreSQL, beside
 *               the bare-spawn floor (sequential, 4 in flight) and
 *               task-spooler / nq when installed
 *   backlog     drain rate from a 100,000-job backlog vs a 1,000-job one (SQLite, and PostgreSQL unless --no-pg)
 *   latency     pick-up of an idle worker from `add`'s exit (SQLite file
 *               watch, PostgreSQL NOTIFY), tsp, nq
 *   cli         whole-process `--version`, `add`, `status`, `list` (packed
 *               bundle and source) beside `bun -e 0`; status/list on
 *               1,000,000 jobs in SQLite and PostgreSQL; in-process reads
 *   rss         peak RSS of idle and draining workers
 *   profile     where an in-process worker's time goes per job
 *
 * With a "before" checkout (--before PATH/src/cli.ts, or
 * $SPOOLCTL_BENCH_BEFORE) every spoolctl row runs for both checkouts in the
 * same round. PostgreSQL rows use a throwaway server started the way the tests
 * start theirs (test/support/pg-server.ts: fsync off), removed at the end.
 *
 * Usage:
 *   bun bench/run.ts                  # full run
 *   bun bench/run.ts --quick          # small counts, one round (a few minutes)
 *   options: --jobs N  --runs R  --samples S  --large N  --backlog N
 *            --workers 1,2,4,8,16  --pg-workers 1,4,8  --no-pg  --no-compare
 *            --before PATH  --large-dir DIR (keep/reuse the large SQLite queues per commit)
 *            --only throughput,backlog,latency,cli,rss,profile
 *            --md FILE  --json FILE  --keep (temp dirs)
 *            --render FILE: print the report of an earlier --json FILE again
 *            --max-load L [--max-wait S]: before each round/section, wait up to S s
 *              (default 300) until the 1-minute load average is below L
 */
import { readFileSync, writeFileSync } from "node:fs";
import { type CliData, cliTimes } from "./cli-times.ts";
import { NQ, TSP } from "./compare.ts";
import { type LatencyData, latencies } from "./latency.ts";
import { abortAll, cleanup, fmt, machine, sleep } from "./lib.ts";
import { type ProfileResult, profileWorker } from "./profile.ts";
import { clisUnderTest, commitOf, type Engine, pgServer, stopPg } from "./queues.ts";
import { renderReport } from "./report.ts";
import { memory, type RssData } from "./rss.ts";
import { type BacklogData, backlog, scenarios, type ThroughputData, throughput } from "./throughput.ts";

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(name);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const list = (name: string, fallback: string) => (opt(name) ?? fallback).split(",").map(Number);
if (flag("--help") || flag("-h")) {
  console.log(
    readFileSync(import.meta.path, "utf8")
      .split("*/")[0]!
      .replace(/^#!.*\n\/\*\*\n/, "")
      .replace(/^ \* ?/gm, ""),
  );
  process.exit(0);
}
// --render FILE: print the report of an earlier run's --json FILE again (with this checkout's report.ts).
const renderFrom = opt("--render");
if (renderFrom) {
  const { machine: saved, targets: _t, ...raw } = JSON.parse(readFileSync(renderFrom, "utf8"));
  const labels = Object.keys(saved)
    .filter((k) => k.startsWith("spoolctl "))
    .map((k) => k.slice("spoolctl ".length));
  process.stdout.write(
    renderReport({
      machine: saved,
      nproc: Number(saved.nproc) || navigator.hardwareConcurrency,
      labels,
      profiles: [],
      ...raw,
    }).text,
  );
  process.exit(0);
}
const quick = flag("--quick");
const JOBS = Number(opt("--jobs") ?? (quick ? 200 : 1000));
const RUNS = Number(opt("--runs") ?? (quick ? 1 : 3));
const SAMPLES = Number(opt("--samples") ?? (quick ? 6 : 20));
const LARGE = Number(opt("--large") ?? (quick ? 20_000 : 1_000_000));
const BACKLOG = Number(opt("--backlog") ?? (quick ? 10_000 : 100_000));
const WORKERS = list("--workers", quick ? "1,4,16" : "1,2,4,8,16");
const PG_WORKERS = list("--pg-workers", quick ? "1,4" : "1,4,8");
const ONLY = new Set((opt("--only") ?? "throughput,backlog,latency,cli,rss,profile").split(","));
const PG = !flag("--no-pg");
const COMPARE = !flag("--no-compare");
const KEEP = flag("--keep");
const MAX_LOAD = opt("--max-load") !== undefined ? Number(opt("--max-load")) : null;
const MAX_WAIT = Number(opt("--max-wait") ?? 300);
const CLIS = clisUnderTest(opt("--before") ?? process.env.SPOOLCTL_BENCH_BEFORE);

const log = (msg: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const loadAvg = () => Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
const loadsSeen: string[] = [];
/** Before a round/section: wait for the load to drop below --max-load (bounded), and note the load. */
async function settle(what: string): Promise<void> {
  if (MAX_LOAD !== null) {
    const deadline = performance.now() + MAX_WAIT * 1000;
    while (loadAvg() >= MAX_LOAD && performance.now() < deadline) {
      log(`load ${loadAvg()} ≥ ${MAX_LOAD}: waiting before ${what}`);
      await sleep(10_000);
    }
  }
  loadsSeen.push(`${what} ${fmt(loadAvg(), 2)}`);
}
const tidy = () => {
  if (!KEEP) cleanup();
};

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    log(`${signal}: stopping, cleaning up`);
    abortAll();
    process.exit(130);
  });
}

const started = performance.now();
const startedAt = new Date();
const mach: Record<string, string> = { ...machine() };
const data: {
  throughput?: ThroughputData;
  backlog?: BacklogData;
  latency?: LatencyData;
  cli?: CliData;
  rss?: RssData;
  profiles: ProfileResult[];
} = { profiles: [] };
let failed = false;
try {
  log(
    `options: jobs ${JOBS}, rounds ${RUNS}, samples ${SAMPLES}, large ${LARGE}, backlog ${BACKLOG}, workers ${WORKERS}, pg ${PG ? PG_WORKERS : "off"}; ${CLIS.map((c) => `${c.label} ${c.path}`).join(", ")}`,
  );
  if (PG) {
    const server = await pgServer();
    const v = Bun.spawnSync(["psql", "-At", "-c", "SHOW server_version", server.url("postgres")], {
      stdout: "pipe",
      stderr: "ignore",
    })
      .stdout.toString()
      .trim();
    mach.postgresql = `${v || "?"} on 127.0.0.1, a throwaway server (test/support/pg-server.ts: fsync, synchronous_commit, full_page_writes off)`;
  }
  const engines: Engine[] = PG ? ["sqlite", "postgres"] : ["sqlite"];
  if (ONLY.has("throughput")) {
    data.throughput = await throughput({
      clis: CLIS,
      jobs: JOBS,
      rounds: RUNS,
      scenarios: scenarios({ workers: WORKERS, pgWorkers: PG_WORKERS, pg: PG }),
      compare: COMPARE,
      settle,
      log,
      cleanup: tidy,
    });
  }
  if (ONLY.has("backlog")) {
    data.backlog = await backlog({
      clis: CLIS,
      sizes: [1000, BACKLOG],
      rounds: RUNS,
      skip: 50,
      measured: 300,
      concurrency: 4,
      pg: PG,
      settle,
      log,
    });
    tidy();
  }
  if (ONLY.has("latency")) {
    await settle("latency");
    data.latency = await latencies({ clis: CLIS, engines, samples: SAMPLES, compare: COMPARE, log });
    tidy();
  }
  if (ONLY.has("cli")) {
    await settle("cli");
    data.cli = await cliTimes({
      clis: CLIS,
      samples: SAMPLES,
      startSamples: quick ? SAMPLES : Math.max(SAMPLES, 40),
      large: LARGE,
      pg: PG,
      compare: COMPARE,
      largeDir: opt("--large-dir"),
      log,
    });
    tidy();
  }
  if (ONLY.has("rss")) {
    await settle("rss");
    data.rss = await memory({ clis: CLIS, jobs: quick ? 200 : 500, runs: quick ? 1 : 2, pg: PG, log });
    tidy();
  }
  if (ONLY.has("profile")) {
    await settle("profile");
    for (const c of [1, 4]) {
      log(`in-process profile, --concurrency ${c}`);
      // No tidy between the profiles: deleting one's 1,000 output files on a disk mounted with
      // `discard` slows the next one's file creation (it made output files look like half the time).
      data.profiles.push(await profileWorker(quick ? 200 : 500, c));
    }
  }
} catch (error) {
  failed = true;
  log(`FAILED: ${(error as Error).stack ?? error}`);
} finally {
  await stopPg().catch(() => {});
  tidy();
}

mach["load average at end"] = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
mach["1-min load at the start of each section/round"] = loadsSeen.join(", ");
mach.run = `${startedAt.toISOString()}, ${quick ? "--quick" : "full"}: ${RUNS} round(s), ${SAMPLES} samples per latency/CLI row; ${fmt((performance.now() - started) / 1000, 0)} s`;
for (const cli of CLIS) mach[`spoolctl ${cli.label}`] = `${commitOf(cli)} (${cli.path})`;
mach["other queues"] = [
  TSP ? `task-spooler (${TSP})` : "task-spooler not installed",
  NQ ? `nq (${NQ})` : "nq not installed",
].join(", ");
const { text, targets } = renderReport({
  machine: mach,
  nproc: navigator.hardwareConcurrency,
  labels: CLIS.map((c) => c.label),
  ...data,
});
process.stdout.write(text);
const mdPath = opt("--md");
if (mdPath) writeFileSync(mdPath, text);
const jsonPath = opt("--json");
if (jsonPath)
  writeFileSync(
    jsonPath,
    JSON.stringify({ machine: mach, ...data, targets }, (_k, v) => (typeof v === "bigint" ? Number(v) : v), 2),
  );
process.exit(failed ? 1 : 0);
