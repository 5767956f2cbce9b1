#!/usr/bin/env bun
/**
 * spoolctl benchmark suite (SPEC §9, issue 3 "Benchmark"). Prints a markdown
 * report on stdout (progress on stderr):
 *
 *   1. trivial-job (`true`) drain throughput: 1 worker, --concurrency 2 and 4,
 *      two workers; beside the floor (bare `true` spawns from Bun) and
 *      task-spooler / nq when installed;
 *   2. add→start latency of an idle worker (and of tsp / nq);
 *   3. CLI wall times: `add`, `status`, `list` on a small and a 1,000,000-job
 *      queue, plus the in-process time of the status/list reads;
 *   4. peak RSS of an idle worker and of one draining 500 jobs;
 *   5. an in-process profile of where a worker's time goes per job.
 *
 * Usage:
 *   bun bench/run.ts                 # full run (~10 minutes on a lightly loaded 2-core machine)
 *   bun bench/run.ts --quick         # small counts, one repetition (~1-2 minutes)
 *   options: --jobs N  --runs R  --samples S  --large N  --large-db PATH (reuse/keep)
 *            --only throughput,latency,cli,rss,profile  --no-compare
 *            --md FILE (also write the report)  --json FILE (raw numbers)  --keep (temp dirs)
 *            --max-load L [--max-wait S]: on a shared machine, wait up to S s (default 300)
 *              before each round/section until the 1-minute load average is below L
 */
import { Database } from "bun:sqlite";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { buildLargeDb, type BuildReport } from "./build-1m.ts";
import { NQ, TSP, clientAddMs, nqDrain, nqLatency, readStamp, stampArgv, tspDrain, tspLatency, tspUsable, type LatencySample } from "./compare.ts";
import { BUN, CLI, abortAll, cleanup, cli, trackChild, cliOk, fmt, machine, median, min, ndjson, percentile, procMemory, run, sleep, tempDir, waitFor, wallMs, writeFile } from "./lib.ts";
import { profileWorker, renderProfile, type ProfileResult } from "./profile.ts";

// ---------------------------------------------------------------- options

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(name);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
if (flag("--help") || flag("-h")) {
  console.log((await Bun.file(import.meta.path).text()).split("*/")[0]!.replace(/^#!.*\n\/\*\*\n/, "").replace(/^ \* ?/gm, ""));
  process.exit(0);
}
const quick = flag("--quick");
const JOBS = Number(opt("--jobs") ?? (quick ? 200 : 1000));
const RUNS = Number(opt("--runs") ?? (quick ? 1 : 3));
const SAMPLES = Number(opt("--samples") ?? (quick ? 10 : 20));
const LARGE = Number(opt("--large") ?? (quick ? 100_000 : 1_000_000));
const LARGE_DB = opt("--large-db");
const CMP_JOBS = Math.min(JOBS, 300);
const RSS_JOBS = quick ? 200 : 500;
/** RSS is steady from run to run (±1 MiB), so fewer repetitions. */
const RSS_RUNS = Math.min(RUNS, 2);
const ONLY = new Set((opt("--only") ?? "throughput,latency,cli,rss,profile").split(","));
const COMPARE = !flag("--no-compare");
const KEEP = flag("--keep");
/** Shared machines: wait (up to MAX_WAIT s) for the 1-minute load average to drop below this before each round/section. */
const MAX_LOAD = opt("--max-load") !== undefined ? Number(opt("--max-load")) : null;
const MAX_WAIT = Number(opt("--max-wait") ?? 300);

const log = (msg: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const results: Record<string, unknown> = { options: { quick, JOBS, RUNS, SAMPLES, LARGE, CMP_JOBS, RSS_JOBS } };
const md: string[] = [];
const out = (line = "") => md.push(line);

// ---------------------------------------------------------------- helpers

/** Reads the queue file (after the workers have exited). */
function dbStats(path: string): { done: number; total: number; spanMs: number } {
  const db = new Database(path, { readonly: true });
  try {
    const r = db
      .query("SELECT count(*) AS total, sum(state = 'done') AS done, (max(finished_at) - min(started_at)) * 1000 AS span FROM jobs")
      .get() as { total: number; done: number; span: number };
    return { done: r.done ?? 0, total: r.total, spanMs: r.span ?? NaN };
  } finally {
    db.close();
  }
}

interface DrainRun {
  wallMs: number;
  spanMs: number;
  cpuMs: number;
  addMs: number;
}

/** `add --from` N `true` jobs, then `workers` × `work --drain --concurrency c`; timed from spawn to the last exit. */
async function spoolDrain(n: number, workers: number, concurrency: number): Promise<DrainRun> {
  const dir = tempDir("drain");
  const db = join(dir, "queue.db");
  const add = await cliOk(["add", "--db", db, "--from", writeFile(join(dir, "jobs.ndjson"), ndjson(n, ["true"]))], { quiet: true });
  await sleep(100);
  const t0 = performance.now();
  const procs = Array.from({ length: workers }, () =>
    Bun.spawn([BUN, CLI, "work", "--db", db, "--drain", "--concurrency", String(concurrency)], { stdin: "ignore", stdout: "ignore", stderr: "ignore" }),
  );
  const untrack = procs.map((p) => trackChild(p));
  const codes = await Promise.all(procs.map((p) => p.exited));
  untrack.forEach((u) => u());
  const wall = performance.now() - t0;
  if (codes.some((c) => c !== 0)) throw new Error(`work --drain exited ${codes.join(",")}`);
  const s = dbStats(db);
  if (s.done !== n) throw new Error(`only ${s.done} of ${n} jobs done`);
  const usage = procs.map((p) => p.resourceUsage());
  return {
    wallMs: wall,
    spanMs: s.spanMs,
    cpuMs: usage.reduce((sum, u) => sum + Number(u?.cpuTime.total ?? 0n) / 1000, 0),
    addMs: add.ms,
  };
}

async function floor(n: number, inflight: number, mode: "bare" | "executor"): Promise<number> {
  const r = await run([BUN, resolve(import.meta.dir, "floor.ts"), String(n), String(inflight), mode]);
  if (r.code !== 0) throw new Error(`floor.ts failed: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { ms: number }).ms;
}

function cleanupIfNotKept(): void {
  if (!KEEP) cleanup();
}

const perSec = (n: number, ms: number) => n / (ms / 1000);

function loadAvg(): number {
  try {
    return Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
  } catch {
    return NaN;
  }
}
/** Loads seen at the start of each round/section, for the report. */
const loadsSeen: number[] = [];
async function settle(what: string): Promise<void> {
  if (MAX_LOAD !== null) {
    const deadline = performance.now() + MAX_WAIT * 1000;
    while (loadAvg() >= MAX_LOAD && performance.now() < deadline) {
      log(`load ${loadAvg()} ≥ ${MAX_LOAD}: waiting before ${what}`);
      await sleep(10_000);
    }
  }
  loadsSeen.push(loadAvg());
}
const mib = (bytes: number) => bytes / (1024 * 1024);

// ---------------------------------------------------------------- 1. throughput

interface ThroughputRow {
  name: string;
  n: number;
  wall: number[];
  span?: number[];
  cpuPerJob?: number;
  /** Median over rounds of (ms per job) / (that round's floor ms per job at the same parallelism). */
  ratio?: number;
  note?: string;
}
const rows: ThroughputRow[] = [];
let floorSeq = NaN;
let floorPar4 = NaN;

/**
 * Rounds: each round measures every floor, every spoolctl configuration and
 * the other queues once, in that order, so that the load of the machine at
 * that moment weighs on all of them alike; `vs floor` is computed per round
 * (against that round's floor) and its median reported.
 */
async function throughput(): Promise<void> {
  const floorDefs = [
    ["floor: bare spawn, sequential", 1, "bare"],
    ["floor: bare spawn, 4 in flight", 4, "bare"],
    ["floor: executor-like spawn (own process group, env copy, attempt folder + 2 output files), sequential", 1, "executor"],
    ["floor: executor-like spawn, 4 in flight", 4, "executor"],
  ] as const;
  const configs: [string, number, number][] = [
    ["spoolctl: 1 worker", 1, 1],
    ["spoolctl: 1 worker --concurrency 2", 1, 2],
    ["spoolctl: 1 worker --concurrency 4", 1, 4],
    ["spoolctl: 2 workers (2 processes)", 2, 1],
  ];
  const tspOk = COMPARE && TSP !== null && tspUsable();
  const nqOk = COMPARE && NQ !== null;
  const others: [string, number, () => Promise<{ ms: number }>][] = [
    ...(tspOk
      ? ([
          ["task-spooler (tsp -S 1)", 1, () => tspDrain(CMP_JOBS, 1)],
          ["task-spooler (tsp -S 4)", 4, () => tspDrain(CMP_JOBS, 4)],
        ] as [string, number, () => Promise<{ ms: number }>][])
      : []),
    ...(nqOk ? ([["nq (one job at a time)", 1, () => nqDrain(CMP_JOBS)]] as [string, number, () => Promise<{ ms: number }>][]) : []),
  ];
  const floors: Record<string, number[]> = {};
  const drains: Record<string, DrainRun[]> = {};
  const otherMs: Record<string, number[]> = {};
  const ratios: Record<string, number[]> = {};
  const failures: Record<string, string> = {};
  for (let round = 0; round < RUNS; round++) {
    await settle(`throughput round ${round + 1}`);
    log(`throughput round ${round + 1}/${RUNS} (load ${loadAvg()})`);
    for (const [label, inflight, mode] of floorDefs) (floors[label] ??= []).push(await floor(JOBS, inflight, mode));
    const perJobFloor = (inflight: number) => floors[floorDefs[inflight >= 2 ? 1 : 0][0]]!.at(-1)! / JOBS;
    log(`  floors: ${floorDefs.map(([l]) => fmt(floors[l]!.at(-1)!, 0)).join(", ")} ms`);
    for (const [name, workers, conc] of configs) {
      const r = await spoolDrain(JOBS, workers, conc);
      (drains[name] ??= []).push(r);
      (ratios[name] ??= []).push(r.wallMs / JOBS / perJobFloor(workers * conc));
      log(`  ${name}: ${fmt(r.wallMs, 0)} ms`);
      cleanupIfNotKept();
    }
    for (const [name, inflight, fn] of others) {
      if (failures[name]) continue;
      try {
        const r = await fn();
        (otherMs[name] ??= []).push(r.ms);
        (ratios[name] ??= []).push(r.ms / CMP_JOBS / perJobFloor(inflight));
        log(`  ${name}: ${fmt(r.ms, 0)} ms`);
      } catch (error) {
        failures[name] = (error as Error).message;
        log(`  ${name} failed: ${failures[name]}`);
      }
      cleanupIfNotKept();
    }
  }
  floorSeq = median(floors[floorDefs[0][0]]!);
  floorPar4 = median(floors[floorDefs[1][0]]!);
  for (const [name] of configs) {
    const runs = drains[name]!;
    rows.push({
      name,
      n: JOBS,
      wall: runs.map((r) => r.wallMs),
      span: runs.map((r) => r.spanMs),
      cpuPerJob: median(runs.map((r) => r.cpuMs)) / JOBS,
      ratio: median(ratios[name]!),
    });
  }
  for (const [name, ms] of Object.entries(floors)) rows.push({ name, n: JOBS, wall: ms });
  for (const [name] of others) {
    if (otherMs[name]?.length) rows.push({ name, n: CMP_JOBS, wall: otherMs[name]!, ratio: median(ratios[name]!) });
    else rows.push({ name, n: CMP_JOBS, wall: [], note: `failed: ${failures[name] ?? "no result"}` });
  }
  if (COMPARE && !tspOk) rows.push({ name: "task-spooler", n: 0, wall: [], note: "not installed (apt-get install task-spooler)" });
  if (COMPARE && !nqOk) rows.push({ name: "nq", n: 0, wall: [], note: "not installed (apt-get install nq)" });
  results.floors = floors;
  results.drains = drains;
  results.others = otherMs;
  results.ratios = ratios;
  results.bulkAddMs = Object.values(drains).flat().map((r) => r.addMs);
  results.throughput = rows;
}

// ---------------------------------------------------------------- 2. latency

interface SpoolLatency extends LatencySample {
  fromCommit: number;
  commitToClaim: number;
  claimToStart: number;
}
const latency: Record<string, LatencySample[]> = {};
let stampCost: number[] = [];

/** How long `sh -c 'date +%s%N > f'` takes to write its stamp when spawned bare from Bun. */
async function measureStampCost(samples: number): Promise<number[]> {
  const dir = tempDir("stamp");
  const outs: number[] = [];
  for (let i = 0; i < samples; i++) {
    const file = join(dir, `s${i}`);
    const t0 = wallMs();
    await Bun.spawn(stampArgv(file), { stdin: "ignore", stdout: "ignore", stderr: "ignore" }).exited;
    outs.push(readStamp(file)! - t0);
    await sleep(20);
  }
  return outs;
}

async function spoolLatency(samples: number): Promise<SpoolLatency[]> {
  const dir = tempDir("latency");
  const db = join(dir, "queue.db");
  await cliOk(["add", "--db", db, "--", "true"], { quiet: true });
  const worker = Bun.spawn([BUN, CLI, "work", "--db", db], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  const untrack = trackChild(worker);
  try {
    await waitFor(
      () => {
        const d = new Database(db, { readonly: true });
        try {
          return (d.query("SELECT count(*) AS n FROM jobs WHERE state = 'done'").get() as { n: number }).n === 1;
        } finally {
          d.close();
        }
      },
      20_000,
      20,
      "the worker to run its first job",
    );
    await sleep(1500); // idle: waiting on the file watch + poll
    const raw: (LatencySample & { file: string })[] = [];
    for (let i = 0; i < samples; i++) {
      const file = join(dir, `stamp-${i}`);
      const t0 = wallMs();
      const r = await cli(["add", "--db", db, "--", ...stampArgv(file)], { quiet: true });
      const t1 = wallMs();
      if (r.code !== 0) throw new Error(`add exited ${r.code}`);
      const stamp = await waitFor(() => readStamp(file), 30_000, 1, "the job's stamp");
      raw.push({ fromExit: stamp - t1, fromSpawn: stamp - t0, addMs: r.ms, file });
      await waitFor(
        () => {
          const d = new Database(db, { readonly: true });
          try {
            return (d.query("SELECT count(*) AS n FROM jobs WHERE state IN ('queued','running')").get() as { n: number }).n === 0;
          } finally {
            d.close();
          }
        },
        30_000,
        5,
        "the job to be recorded",
      );
      await sleep(200 + Math.random() * 100);
    }
    const d = new Database(db, { readonly: true });
    const jobs = d.query("SELECT id, created_at, started_at FROM jobs WHERE id > 1 ORDER BY id").all() as { id: number; created_at: number; started_at: number }[];
    d.close();
    return raw.map((s, i) => {
      const stamp = readStamp(s.file)!;
      const j = jobs[i]!;
      return {
        fromExit: s.fromExit,
        fromSpawn: s.fromSpawn,
        addMs: s.addMs,
        fromCommit: stamp - j.created_at * 1000,
        commitToClaim: (j.started_at - j.created_at) * 1000,
        claimToStart: stamp - j.started_at * 1000,
      };
    });
  } finally {
    worker.kill("SIGTERM");
    await worker.exited;
    untrack();
  }
}

async function latencies(): Promise<void> {
  log("stamp cost (bare spawn of the probe)");
  stampCost = await measureStampCost(SAMPLES);
  log(`spoolctl latency × ${SAMPLES}`);
  latency.spoolctl = await spoolLatency(SAMPLES);
  if (COMPARE && TSP && tspUsable()) {
    log(`tsp latency × ${SAMPLES}`);
    try {
      latency.tsp = await tspLatency(SAMPLES, 200);
    } catch (error) {
      log(`tsp latency failed: ${(error as Error).message}`);
    }
  }
  if (COMPARE && NQ) {
    log(`nq latency × ${SAMPLES}`);
    try {
      latency.nq = await nqLatency(SAMPLES, 200);
    } catch (error) {
      log(`nq latency failed: ${(error as Error).message}`);
    }
  }
  results.latency = latency;
  results.stampCost = stampCost;
  cleanupIfNotKept();
}

// ---------------------------------------------------------------- 3. CLI wall times and the large queue

const cliTimes: { name: string; ms: number[]; note?: string }[] = [];
const inProcess: { name: string; ms: number[] }[] = [];
const sqlBreakdown: { sql: string; calls: number; ms: number }[] = [];
let build: BuildReport | null = null;

async function timeCli(name: string, args: string[], n = SAMPLES, note?: string): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await cli(args, { quiet: true });
    if (r.code !== 0) throw new Error(`${name}: exit ${r.code}`);
    ms.push(r.ms);
  }
  cliTimes.push({ name, ms, note });
  log(`${name}: median ${fmt(median(ms))} ms`);
  return ms;
}

async function timeBare(name: string, cmd: string[], n = SAMPLES): Promise<void> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) ms.push((await run(cmd, { quiet: true })).ms);
  cliTimes.push({ name, ms });
  log(`${name}: median ${fmt(median(ms))} ms`);
}

/**
 * In-process: the CLI's own `main(argv)` (src/cli.ts) called repeatedly in this
 * process, output swallowed — the verb's whole work (open, migrate check, read,
 * render) without Bun start-up and module loading. Plus a per-statement
 * breakdown of `status`, by wrapping bun:sqlite's Database#query.
 */
async function inProcessReads(dbPath: string, n: number): Promise<void> {
  const { main } = (await import(CLI)) as { main: (argv: string[]) => Promise<number> };
  const realWrite = process.stdout.write.bind(process.stdout);
  const quietly = async (args: string[]): Promise<number> => {
    (process.stdout as any).write = () => true;
    try {
      return await main(args);
    } finally {
      (process.stdout as any).write = realWrite;
    }
  };
  const cases: [string, string[]][] = [
    ["status", ["status", "--db", dbPath]],
    ["status --json", ["status", "--db", dbPath, "--json"]],
    ["list (50 newest)", ["list", "--db", dbPath]],
    ["list --state dead", ["list", "--db", dbPath, "--state", "dead"]],
    ["list --state done", ["list", "--db", dbPath, "--state", "done"]],
  ];
  for (const [name, args] of cases) {
    await quietly(args); // warm: lazy imports, statement cache, page cache
    const ms: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const code = await quietly(args);
      ms.push(performance.now() - t0);
      if (code !== 0) throw new Error(`in-process ${name}: exit ${code}`);
    }
    inProcess.push({ name, ms });
    log(`in-process ${name}: median ${fmt(median(ms))} ms`);
  }
  const proto = Database.prototype as any;
  const realQuery = proto.query;
  const seen = new Map<string, { calls: number; ms: number }>();
  proto.query = function (this: Database, sql: string) {
    const stmt = realQuery.call(this, sql);
    return new Proxy(stmt, {
      get(target, prop) {
        const v = Reflect.get(target, prop);
        if (typeof v !== "function") return v;
        if (!["all", "get", "run", "values"].includes(String(prop))) return v.bind(target);
        return (...args: unknown[]) => {
          const t0 = performance.now();
          try {
            return v.apply(target, args);
          } finally {
            const key = sql.replace(/\s+/g, " ").trim();
            const e = seen.get(key) ?? { calls: 0, ms: 0 };
            e.calls++;
            e.ms += performance.now() - t0;
            seen.set(key, e);
          }
        };
      },
    });
  };
  try {
    for (let i = 0; i < 3; i++) await quietly(["status", "--db", dbPath]);
  } finally {
    proto.query = realQuery;
  }
  for (const [sql, e] of seen) sqlBreakdown.push({ sql, calls: e.calls / 3, ms: e.ms / 3 });
  sqlBreakdown.sort((a, b) => b.ms - a.ms);
}

async function cliAndLarge(): Promise<void> {
  await timeBare("bun -e 0 (Bun startup floor)", [BUN, "-e", "0"]);
  await timeCli("spoolctl --version", ["--version"]);
  const dir = tempDir("cli");
  const small = join(dir, "small.db");
  await cliOk(["add", "--db", small, "--from", writeFile(join(dir, "j.ndjson"), ndjson(100, ["true"]))], { quiet: true });
  await timeCli("add (100-job queue)", ["add", "--db", small, "--", "true"]);
  await timeCli("status (small queue)", ["status", "--db", small]);
  if (COMPARE && TSP && tspUsable()) cliTimes.push({ name: "tsp true (task-spooler add, idle server)", ms: await clientAddMs("tsp", SAMPLES) });
  if (COMPARE && NQ) cliTimes.push({ name: "nq true (nq add)", ms: await clientAddMs("nq", SAMPLES) });

  let large = LARGE_DB ? resolve(LARGE_DB) : join(tempDir("large"), "large.db");
  const reuse = LARGE_DB && existsSync(large) && (() => {
    const d = new Database(large, { readonly: true });
    try {
      return (d.query("SELECT count(*) AS n FROM jobs").get() as { n: number }).n >= LARGE;
    } finally {
      d.close();
    }
  })();
  if (!reuse) {
    log(`building a ${LARGE.toLocaleString("en")}-job queue at ${large}`);
    build = await buildLargeDb(large, LARGE);
    log(`built in ${fmt(build.seconds)} s, ${fmt(mib(build.bytes), 0)} MiB`);
  } else log(`reusing ${large}`);
  const tag = `${(LARGE / 1e6).toLocaleString("en")}M`;
  // Warm the page cache once, as a queue in use would be.
  await cli(["status", "--db", large], { quiet: true });
  await timeCli(`status (${tag} jobs)`, ["status", "--db", large]);
  await timeCli(`status --json (${tag} jobs)`, ["status", "--db", large, "--json"]);
  await timeCli(`list (${tag} jobs, 50 newest)`, ["list", "--db", large]);
  await timeCli(`list --state dead (${tag} jobs)`, ["list", "--db", large, "--state", "dead"]);
  await timeCli(`list --state done (${tag} jobs)`, ["list", "--db", large, "--state", "done"], Math.min(SAMPLES, 10));
  await timeCli(`add (${tag}-job queue)`, ["add", "--db", large, "--", "true"]);
  await inProcessReads(large, Math.min(SAMPLES, 10));
  results.cli = cliTimes;
  results.inProcess = inProcess;
  results.sqlBreakdown = sqlBreakdown;
  results.build = build;
  if (LARGE_DB && !KEEP) {
    // keep the reusable file
  }
  cleanupIfNotKept();
}

// ---------------------------------------------------------------- 4. RSS

const rss: { name: string; hwm: number[]; time: number[] }[] = [];
const TIME = existsSync("/usr/bin/time") ? "/usr/bin/time" : null;

/** A fresh queue holding `jobs` `true` jobs. */
async function freshQueue(jobs: number): Promise<string> {
  const dir = tempDir("rss");
  const db = join(dir, "queue.db");
  await cliOk(["add", "--db", db, "--from", writeFile(join(dir, "jobs.ndjson"), ndjson(jobs, ["true"]))], { quiet: true });
  return db;
}

/** VmHWM of `bun src/cli.ts ARGS`, polled from /proc every 10 ms until exit; SIGTERM after `stopAfterMs` if given. */
async function hwmOf(args: string[], stopAfterMs?: number): Promise<number> {
  const proc = Bun.spawn([BUN, CLI, ...args], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  let hwm = NaN;
  const started = performance.now();
  let signaled = false;
  while (proc.exitCode === null && proc.signalCode === null) {
    const m = procMemory(proc.pid);
    if (m && Number.isFinite(m.hwm)) hwm = m.hwm;
    if (!signaled && stopAfterMs !== undefined && performance.now() - started > stopAfterMs) {
      proc.kill("SIGTERM");
      signaled = true;
    }
    await sleep(10);
  }
  await proc.exited;
  return hwm;
}

/** /usr/bin/time's %M (ru_maxrss of a forked child) for `bun src/cli.ts ARGS`; SIGTERM to the worker after `stopAfterMs`. */
async function timeRssOf(args: string[], stopAfterMs?: number): Promise<number> {
  if (!TIME) return NaN;
  const outFile = join(tempDir("time"), "maxrss");
  const p = Bun.spawn([TIME, "-f", "%M", "-o", outFile, BUN, CLI, ...args], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  if (stopAfterMs !== undefined) {
    await sleep(stopAfterMs);
    let kids: number[] = [];
    try {
      kids = readFileSync(`/proc/${p.pid}/task/${p.pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      // already gone
    }
    for (const k of kids) process.kill(k, "SIGTERM"); // the worker, not time(1)
  }
  await p.exited;
  try {
    return Number(readFileSync(outFile, "utf8").trim().split("\n").pop()) * 1024;
  } catch {
    return NaN;
  }
}

/**
 * Peak RSS, two ways: VmHWM polled from /proc (VmHWM only grows, so the last
 * read is the peak up to ~10 ms before exit) and /usr/bin/time's %M on a
 * second, identical run. Bun's own `resourceUsage().maxRSS` is not used: a
 * child spawned from a Bun process inherits the parent's high-water mark
 * across exec (vfork), so it would report the benchmark's own memory.
 */
async function memory(): Promise<void> {
  const cases: [string, string[], number, number | undefined][] = [
    ["idle worker (`work`, stopped 3 s after start)", [], 1, 3000],
    [`worker draining ${RSS_JOBS} jobs (\`work --drain\`)`, ["--drain"], RSS_JOBS, undefined],
    [`worker draining ${RSS_JOBS} jobs with --concurrency 4`, ["--drain", "--concurrency", "4"], RSS_JOBS, undefined],
  ];
  for (const [name, extra, jobs, stopAfter] of cases) {
    const row = { name, hwm: [] as number[], time: [] as number[] };
    for (let i = 0; i < RSS_RUNS; i++) {
      row.hwm.push(await hwmOf(["work", "--db", await freshQueue(jobs), ...extra], stopAfter));
      const t = await timeRssOf(["work", "--db", await freshQueue(jobs), ...extra], stopAfter);
      if (Number.isFinite(t)) row.time.push(t);
      log(`${name} (${i + 1}/${RSS_RUNS}): VmHWM ${fmt(mib(row.hwm.at(-1)!))} MiB, time(1) ${fmt(mib(t))} MiB`);
      cleanupIfNotKept();
    }
    rss.push(row);
  }
  rss.push({ name: "`bun -e 'await Bun.sleep(500)'` (Bun runtime floor)", hwm: [await peakRssBare([BUN, "-e", "await Bun.sleep(500)"])], time: [] });
  results.rss = rss;
}

async function peakRssBare(cmd: string[]): Promise<number> {
  const proc = Bun.spawn(cmd, { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  let hwm = NaN;
  while (proc.exitCode === null) {
    const m = procMemory(proc.pid);
    if (m && Number.isFinite(m.hwm)) hwm = m.hwm;
    await sleep(10);
  }
  return hwm;
}

// ---------------------------------------------------------------- 5. profile

const profiles: ProfileResult[] = [];
async function profile(): Promise<void> {
  for (const c of [1, 4]) {
    log(`in-process profile, --concurrency ${c}`);
    profiles.push(await profileWorker(quick ? 200 : 500, c));
    cleanupIfNotKept();
  }
  results.profiles = profiles;
}

// ---------------------------------------------------------------- report

const startMachine: Record<string, string> = { ...machine(), "spoolctl commit": gitDescribe() };

/** HEAD of the measured checkout, and whether src/ had uncommitted changes. */
function gitDescribe(): string {
  try {
    const dir = resolve(CLI, "../..");
    const head = Bun.spawnSync(["git", "-C", dir, "rev-parse", "--short", "HEAD"], { stdout: "pipe", stderr: "ignore" }).stdout.toString().trim();
    const dirty = Bun.spawnSync(["git", "-C", dir, "status", "--porcelain", "--", "src"], { stdout: "pipe", stderr: "ignore" }).stdout.toString().trim();
    return head ? `${head}${dirty ? " (+ uncommitted changes in src/)" : ""}` : "unknown";
  } catch {
    return "unknown";
  }
}

function report(): void {
  const m = { ...startMachine };
  try {
    m["load average at end"] = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  } catch {
    // not Linux
  }
  out("## Machine");
  out();
  out("| | |");
  out("|---|---|");
  for (const [k, v] of Object.entries(m)) out(`| ${k} | ${v} |`);
  out(`| 1-min load average at the start of each round/section | ${loadsSeen.map((l) => fmt(l, 2)).join(", ")} |`);
  out(`| run | ${new Date().toISOString()}, ${quick ? "--quick" : "full"}: ${RUNS} run(s) per throughput row (median shown), ${SAMPLES} samples per latency/CLI row |`);
  out();

  const targets: string[][] = [];
  if (rows.length) {
    out(`## Throughput: ${JOBS} trivial jobs (\`true\`)`);
    out();
    out("Wall time from spawning the worker process(es) to their exit (includes Bun startup, registration and the final drain check); " +
      "`in-DB rate` is N / (last finished_at − first started_at) from the jobs table, i.e. without process start-up; " +
      "`worker CPU` is user+sys per job from the workers' rusage, which includes the jobs they ran. " +
      `Median of ${RUNS} round(s); best in brackets. Each round runs every row once, so the machine's load at that moment weighs on all rows alike. \`vs floor\`: ms per job divided by the same round's bare-spawn floor of the same parallelism (sequential for 1 in flight, 4 in flight otherwise), median over rounds.`);
    out();
    out("| scenario | N | wall ms (median) | jobs/s (best) | ms/job | in-DB rate jobs/s | worker CPU ms/job | vs floor |");
    out("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (const r of rows) {
      if (!r.wall.length) {
        out(`| ${r.name} | | | | | | | ${r.note ?? ""} |`);
        continue;
      }
      const w = median(r.wall);
      const span = r.span ? median(r.span) : NaN;
      out(
        `| ${r.name} | ${r.n} | ${fmt(w, 0)} | ${fmt(perSec(r.n, w), 0)} (${fmt(perSec(r.n, min(r.wall)), 0)}) | ${fmt(w / r.n, 2)} | ${r.span ? fmt(perSec(r.n, span), 0) : ""} | ${r.cpuPerJob !== undefined ? fmt(r.cpuPerJob, 2) : ""} | ${r.ratio !== undefined ? fmt(r.ratio, 2) + "×" : ""} |`,
      );
    }
    out();
    const bulk = results.bulkAddMs as number[] | undefined;
    if (bulk?.length) out(`Bulk add: \`add --from\` of ${JOBS} jobs (one process, one transaction): median ${fmt(median(bulk), 0)} ms (${fmt(perSec(JOBS, median(bulk)), 0)} jobs/s).`);
    out();
    const c4 = rows.find((r) => r.name.includes("--concurrency 4"));
    if (c4) {
      const w = median(c4.wall);
      const rate = perSec(c4.n, w);
      const ratio = c4.ratio!;
      targets.push(["trivial jobs/s, --concurrency 4", "≥ 500/s or ≤ 1.5× the floor", `${fmt(rate, 0)}/s, ${fmt(ratio, 2)}× the 4-in-flight floor (${fmt(perSec(JOBS, floorPar4), 0)}/s)`, rate >= 500 || ratio <= 1.5 ? "met" : "missed"]);
    }
  }

  if (latency.spoolctl) {
    const s = latency.spoolctl as SpoolLatency[];
    const sc = median(stampCost);
    out(`## add→start latency (idle worker, ${s.length} samples)`);
    out();
    out("The probe job is `sh -c 'date +%s%N > FILE'`; its stamp is the moment `date` runs. Spawned bare from Bun, the probe itself takes " +
      `median **${fmt(sc)} ms** (p90 ${fmt(percentile(stampCost, 90))}) from spawn to stamp; \`net\` subtracts that median. ` +
      "`from commit`: stamp − the job's `created_at` (taken by `add` just before its transaction; for spoolctl only). " +
      "`from add exit`: stamp − the moment the benchmark saw the `add` process exit (negative when the job started before `add` had finished exiting). " +
      "`from add spawn`: stamp − the moment `add` was spawned (what a user typing the command sees). The worker runs with the default 1 s poll interval, so anything well under 1000 ms is the file-watch wake-up.");
    out();
    out("| queue | from commit median / p90 ms | from add exit median / p90 ms | net of probe median | from add spawn median / p90 ms | add wall median ms |");
    out("|---|---:|---:|---:|---:|---:|");
    for (const [name, samples] of Object.entries(latency)) {
      const fc = name === "spoolctl" ? (samples as SpoolLatency[]).map((x) => x.fromCommit) : [];
      const fe = samples.map((x) => x.fromExit);
      const fs = samples.map((x) => x.fromSpawn);
      out(
        `| ${name} | ${fc.length ? `${fmt(median(fc))} / ${fmt(percentile(fc, 90))}` : "n/a"} | ${fmt(median(fe))} / ${fmt(percentile(fe, 90))} | ${fmt(median(fe) - sc)} | ${fmt(median(fs))} / ${fmt(percentile(fs, 90))} | ${fmt(median(samples.map((x) => x.addMs)))} |`,
      );
    }
    out();
    out(`spoolctl breakdown (from the jobs table, ms-resolution clocks): commit → claim (worker wakes, reads, claims) median ${fmt(median(s.map((x) => x.commitToClaim)))} ms, ` +
      `p90 ${fmt(percentile(s.map((x) => x.commitToClaim), 90))}; claim → probe stamp (attempt files, spawn, setAttemptProcess, probe start-up) median ${fmt(median(s.map((x) => x.claimToStart)))} ms.`);
    out();
    const fc = median(s.map((x) => x.fromCommit));
    const fe = median(s.map((x) => x.fromExit));
    targets.push(["add→start median", "≤ 50 ms", `${fmt(fc)} ms from commit, ${fmt(fe)} ms from add exit (${fmt(fe - sc)} ms net of the probe)`, fc <= 50 ? "met" : "missed"]);
  }

  if (cliTimes.length) {
    out(`## CLI wall time (process spawn to exit, ${SAMPLES} runs unless noted)`);
    out();
    if (build) out(`Large queue: ${build.jobs.toLocaleString("en")} jobs (${Object.entries(build.mix).map(([k, v]) => `${k} ${v.toLocaleString("en")}`).join(", ")}; lanes default/builds/email 70/20/10 %), plus one attempt row per started job and 2-3 events per job; ${fmt(mib(build.bytes), 0)} MiB, built in ${fmt(build.seconds)} s. Page cache warm.`);
    out();
    out("| command | median ms | p90 ms | min ms |");
    out("|---|---:|---:|---:|");
    for (const c of cliTimes) out(`| ${c.name} | ${fmt(median(c.ms))} | ${fmt(percentile(c.ms, 90))} | ${fmt(min(c.ms))} |`);
    out();
    if (inProcess.length) {
      out("In-process time of the same verbs: the CLI's `main(argv)` called in the benchmark process (warm), i.e. open + schema check + reads + render, without Bun start-up:");
      out();
      out("| read | median ms | min ms |");
      out("|---|---:|---:|");
      for (const r of inProcess) out(`| ${r.name} | ${fmt(median(r.ms))} | ${fmt(min(r.ms))} |`);
      out();
    }
    if (sqlBreakdown.length) {
      out("Statements executed by one warm in-process `status` on the large queue (all statements, including opening the file):");
      out();
      out("| ms | calls | statement |");
      out("|---:|---:|---|");
      for (const s of sqlBreakdown.filter((x) => x.ms >= 0.05)) out(`| ${fmt(s.ms, 2)} | ${fmt(s.calls, 0)} | \`${s.sql.slice(0, 150)}\` |`);
      out();
    }
    const st = cliTimes.find((c) => /^status \(/.test(c.name) && c.name.includes("M jobs"));
    if (st) targets.push([`status on ${(LARGE / 1e6).toLocaleString("en")}M jobs`, "≤ 150 ms", `${fmt(median(st.ms))} ms wall`, median(st.ms) <= 150 ? "met" : "missed"]);
  }

  if (rss.length) {
    out("## Peak RSS");
    out();
    out(`VmHWM polled from /proc every 10 ms; \`time(1)\` is /usr/bin/time's %M on a second, identical run${TIME ? "" : " (not installed)"}. Median of ${RSS_RUNS} run(s).`);
    out();
    out("| process | VmHWM MiB (median / max) | time(1) MiB (median / max) |");
    out("|---|---:|---:|");
    for (const r of rss) {
      out(`| ${r.name} | ${fmt(mib(median(r.hwm)))} / ${fmt(mib(Math.max(...r.hwm)))} | ${r.time.length ? `${fmt(mib(median(r.time)))} / ${fmt(mib(Math.max(...r.time)))}` : ""} |`);
    }
    out();
    const worst = Math.max(...rss.filter((r) => r.name.includes("worker")).flatMap((r) => [...r.hwm, ...r.time]).filter(Number.isFinite));
    targets.push(["worker peak RSS", "≤ 60 MB", `${fmt(worst / 1e6)} MB (${fmt(mib(worst))} MiB), worst of all runs and both methods`, worst <= 60e6 ? "met" : "missed"]);
  }

  if (profiles.length) {
    out("## Where a worker's time goes (in-process profile)");
    out();
    for (const p of profiles) {
      out(renderProfile(p));
      out();
    }
  }

  if (targets.length) {
    out("## Targets (issue 3)");
    out();
    out("| metric | target | reached | |");
    out("|---|---|---|---|");
    for (const t of targets) out(`| ${t.join(" | ")} |`);
    out();
  }
  results.targets = targets;
}

// ---------------------------------------------------------------- main

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    log(`${signal}: stopping, cleaning up`);
    abortAll();
    process.exit(130);
  });
}

const started = performance.now();
let failed = false;
try {
  log(`options: jobs ${JOBS}, runs ${RUNS}, samples ${SAMPLES}, large ${LARGE}, compare ${COMPARE}${TSP ? " (tsp)" : ""}${NQ ? " (nq)" : ""}`);
  if (ONLY.has("throughput")) await throughput();
  if (ONLY.has("latency")) await settle("latency").then(latencies);
  if (ONLY.has("cli")) await settle("cli").then(cliAndLarge);
  if (ONLY.has("rss")) await settle("rss").then(memory);
  if (ONLY.has("profile")) await settle("profile").then(profile);
} catch (error) {
  failed = true;
  log(`FAILED: ${(error as Error).stack ?? error}`);
} finally {
  cleanupIfNotKept();
}
report();
out(`_Benchmark took ${fmt((performance.now() - started) / 1000, 0)} s._`);
const text = md.join("\n") + "\n";
process.stdout.write(text);
const mdPath = opt("--md");
if (mdPath) writeFileSync(mdPath, text);
const jsonPath = opt("--json");
if (jsonPath) writeFileSync(jsonPath, JSON.stringify(results, (_k, v) => (typeof v === "bigint" ? Number(v) : v), 2));
process.exit(failed ? 1 : 0);
