/**
 * Throughput of trivial jobs (`true`), measured in interleaved rounds: every
 * round runs the bare-spawn floors, every scenario of every checkout on both
 * stores, and task-spooler / nq once, so the machine's load of the moment
 * weighs on all of them alike. And the drain rate from a large backlog
 * against a small one (issue 13 item 0).
 */
import { copyFileSync, existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { SQL } from "bun";
import { NQ, nqDrain, TSP, tspDrain, tspUsable } from "./compare.ts";
import { BUN, fmt, median, ndjson, run, sleep, tempDir, trackChild, waitFor, writeFile } from "./lib.ts";
import {
  type Cli,
  type Engine,
  freshQueue,
  pgServer,
  pgServerCpuMs,
  pgStatementCalls,
  pgTransactions,
  queueAt,
  runCliOk,
  samplePgActivity,
  spoolEnv,
} from "./queues.ts";

/** One drain: `add --from` N jobs, then `workers` × `work --drain --concurrency c`, timed from spawn to the last exit. */
export interface DrainRun {
  wallMs: number;
  /** last finished_at − first started_at, from the jobs table. */
  spanMs: number;
  /** user + sys of the worker processes (their children's exec included). */
  cpuMs: number;
  /** PostgreSQL: CPU of the whole server during the drain (NaN for SQLite). */
  serverCpuMs: number;
  /** PostgreSQL: samples of the queue's backends by "state / wait event" during the drain. */
  pgActivity?: Record<string, number>;
  /** PostgreSQL: transactions (commits + rollbacks) in the queue's database during the drain. */
  pgTransactions?: number;
  /** PostgreSQL: calls per statement during the drain (pg_stat_statements). */
  pgStatements?: Record<string, number>;
  addMs: number;
}

/** One throughput configuration: store, worker processes, `--concurrency` of each. */
export interface Scenario {
  key: string;
  label: string;
  engine: Engine;
  workers: number;
  concurrency: number;
  /** PostgreSQL only: on the durable server (fsync and synchronous commit on) rather than the fast one. */
  durable?: boolean;
}

/** The scenarios of issue 13 (SQLite: --concurrency 1/4, 1-16 processes) and issue 9 (PostgreSQL: 1, 4, 8 workers, --concurrency 4). */
export function scenarios(opts: { workers: number[]; pgWorkers: number[]; pg: boolean }): Scenario[] {
  const out: Scenario[] = [];
  const add = (engine: Engine, workers: number, concurrency: number, durable = false) =>
    out.push({
      key: `${engine}${durable ? "-durable" : ""}:w${workers}c${concurrency}`,
      label: `${engine === "sqlite" ? "SQLite" : durable ? "PostgreSQL, durable server" : "PostgreSQL"}: ${workers} worker${workers > 1 ? "s" : ""}${concurrency > 1 ? ` --concurrency ${concurrency}` : ""}`,
      engine,
      workers,
      concurrency,
      ...(durable ? { durable } : {}),
    });
  add("sqlite", 1, 4);
  for (const w of opts.workers) add("sqlite", w, 1);
  if (opts.pg) {
    add("postgres", 1, 4);
    for (const w of opts.pgWorkers) add("postgres", w, 1);
    // Issue 23's PostgreSQL targets are against a durable server: the same rows on one.
    add("postgres", 1, 4, true);
    for (const w of opts.pgWorkers.filter((w) => w <= 4)) add("postgres", w, 1, true);
  }
  return out;
}

/**
 * One drain of `n` trivial jobs by `workers` × `work --drain --concurrency
 * concurrency` of `cli` on a fresh queue of `engine`; on PostgreSQL also the
 * server's CPU, its backends' activity, and transactions and statements.
 * Throws if a worker fails or a job is left undone.
 */
export async function drain(
  cli: Cli,
  engine: Engine,
  n: number,
  workers: number,
  concurrency: number,
  durable = false,
): Promise<DrainRun> {
  const kind = durable ? "durable" : "fast";
  const q = await freshQueue(engine, "drain", kind);
  try {
    const add = await runCliOk(
      cli,
      ["add", "--db", q.db, "--from", writeFile(join(tempDir("jobs"), "jobs.ndjson"), ndjson(n, ["true"]))],
      { quiet: true },
    );
    await sleep(100);
    const server0 = engine === "postgres" ? await pgServerCpuMs(kind) : NaN;
    const xacts0 = engine === "postgres" ? await pgTransactions(q.db) : NaN;
    const statements0 = engine === "postgres" ? await pgStatementCalls(q.db) : {};
    const sampler = engine === "postgres" ? await samplePgActivity(q.db) : null;
    const t0 = performance.now();
    const procs = Array.from({ length: workers }, () =>
      Bun.spawn([BUN, cli.path, "work", "--db", q.db, "--drain", "--concurrency", String(concurrency)], {
        stdin: "ignore",
        stdout: "ignore",
        stderr: "ignore",
        env: { ...process.env, ...spoolEnv() },
      }),
    );
    const untrack = procs.map((p) => trackChild(p));
    const codes = await Promise.all(procs.map((p) => p.exited));
    const wallMs = performance.now() - t0;
    const pgActivity = await sampler?.stop();
    untrack.forEach((u) => u());
    if (codes.some((c) => c !== 0)) throw new Error(`${cli.label} ${engine}: work --drain exited ${codes.join(",")}`);
    await sleep(50); // the backends of the closed connections exit and are reaped
    const serverCpuMs = engine === "postgres" ? (await pgServerCpuMs(kind)) - server0 : NaN;
    const pgXacts = engine === "postgres" ? (await pgTransactions(q.db)) - xacts0 : undefined;
    let pgStatements: Record<string, number> | undefined;
    if (engine === "postgres") {
      pgStatements = {};
      for (const [query, calls] of Object.entries(await pgStatementCalls(q.db))) {
        const d = calls - (statements0[query] ?? 0);
        if (d > 0) pgStatements[query] = d;
      }
    }
    const s = await q.stats();
    if (s.done !== n) throw new Error(`${cli.label} ${engine}: only ${s.done} of ${n} jobs done`);
    const cpuMs = procs.reduce((sum, p) => sum + Number(p.resourceUsage()?.cpuTime.total ?? 0n) / 1000, 0);
    return {
      wallMs,
      spanMs: s.spanMs,
      cpuMs,
      serverCpuMs,
      addMs: add.ms,
      pgActivity,
      pgTransactions: pgXacts,
      pgStatements,
    };
  } finally {
    await q.close();
  }
}

/** Bare spawns of `true` from a fresh Bun process, `inflight` at a time (bench/floor.ts); ms for all n. */
export async function floor(n: number, inflight: number): Promise<number> {
  const r = await run([BUN, resolve(import.meta.dir, "floor.ts"), String(n), String(inflight), "bare"]);
  if (r.code !== 0) throw new Error(`floor.ts failed: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { ms: number }).ms;
}

/** Everything the throughput section measured (ms unless named otherwise). */
export interface ThroughputData {
  jobs: number;
  otherJobs: number;
  scenarios: Scenario[];
  /** cli label → scenario key → one run per round. */
  runs: Record<string, Record<string, DrainRun[]>>;
  /** cli label → scenario key → per round: ms per job / that round's floor ms per job of the same parallelism. */
  vsFloor: Record<string, Record<string, number[]>>;
  floors: { seq: number[]; par4: number[] };
  /** task-spooler / nq: name → ms per round; failures by name. */
  others: Record<string, number[]>;
  otherVsFloor: Record<string, number[]>;
  failures: Record<string, string>;
}

/** What {@link throughput} runs: checkouts, job count, rounds, scenarios; `settle` is called before each round. */
export interface ThroughputOptions {
  clis: Cli[];
  jobs: number;
  rounds: number;
  scenarios: Scenario[];
  compare: boolean;
  settle: (what: string) => Promise<void>;
  log: (msg: string) => void;
  cleanup: () => void;
}

/**
 * Rounds of: both floors; each scenario for each checkout (the checkouts
 * alternate within a scenario, the order flips every round); tsp -S 1/-S 4 and
 * nq on at most 300 jobs (both keep a process per queued job).
 */
export async function throughput(o: ThroughputOptions): Promise<ThroughputData> {
  const otherJobs = Math.min(o.jobs, 300);
  const d: ThroughputData = {
    jobs: o.jobs,
    otherJobs,
    scenarios: o.scenarios,
    runs: {},
    vsFloor: {},
    floors: { seq: [], par4: [] },
    others: {},
    otherVsFloor: {},
    failures: {},
  };
  const others: [string, number, () => Promise<{ ms: number }>][] = [];
  if (o.compare && TSP && tspUsable())
    others.push(
      ["task-spooler (tsp -S 1)", 1, () => tspDrain(otherJobs, 1)],
      ["task-spooler (tsp -S 4)", 4, () => tspDrain(otherJobs, 4)],
    );
  if (o.compare && NQ) others.push(["nq (one job at a time)", 1, () => nqDrain(otherJobs)]);
  for (let round = 0; round < o.rounds; round++) {
    await o.settle(`throughput round ${round + 1}`);
    o.log(`throughput round ${round + 1}/${o.rounds}`);
    d.floors.seq.push(await floor(o.jobs, 1));
    d.floors.par4.push(await floor(o.jobs, 4));
    const perJobFloor = (parallel: number) => (parallel >= 2 ? d.floors.par4 : d.floors.seq).at(-1)! / o.jobs;
    o.log(`  floors: ${fmt(d.floors.seq.at(-1)!, 0)} / ${fmt(d.floors.par4.at(-1)!, 0)} ms`);
    const order = round % 2 ? [...o.clis].reverse() : o.clis;
    for (const s of o.scenarios) {
      for (const cli of order) {
        const r = await drain(cli, s.engine, o.jobs, s.workers, s.concurrency, s.durable);
        ((d.runs[cli.label] ??= {})[s.key] ??= []).push(r);
        ((d.vsFloor[cli.label] ??= {})[s.key] ??= []).push(r.wallMs / o.jobs / perJobFloor(s.workers * s.concurrency));
        o.log(`  ${cli.label} ${s.label}: ${fmt(r.wallMs, 0)} ms (${fmt(o.jobs / (r.wallMs / 1000), 0)} jobs/s)`);
        o.cleanup();
      }
    }
    for (const [name, parallel, fn] of others) {
      if (d.failures[name]) continue;
      try {
        const r = await fn();
        (d.others[name] ??= []).push(r.ms);
        (d.otherVsFloor[name] ??= []).push(r.ms / otherJobs / perJobFloor(parallel));
        o.log(`  ${name}: ${fmt(r.ms, 0)} ms`);
      } catch (error) {
        d.failures[name] = (error as Error).message;
        o.log(`  ${name} failed: ${d.failures[name]}`);
      }
      o.cleanup();
    }
  }
  if (o.compare && !(TSP && tspUsable())) d.failures["task-spooler"] = "not installed (apt-get install task-spooler)";
  if (o.compare && !NQ) d.failures.nq = "not installed (apt-get install nq)";
  return d;
}

// ---------------------------------------------------------------- backlog

/** Drain rates by backlog size (jobs/s), per checkout. */
export interface BacklogData {
  sizes: number[];
  /** Jobs skipped (start-up) and then timed, per run. */
  skip: number;
  measured: number;
  concurrency: number;
  /** cli label → backlog size → jobs/s per round (from finished_at of the done jobs). */
  rates: Record<string, Record<number, number[]>>;
  /** The same on PostgreSQL (the fast throwaway server), when it ran. */
  pgRates?: Record<string, Record<number, number[]>>;
  /** cli label → backlog size → seconds to fill the queue with `add --from`. */
  fillSeconds: Record<string, Record<number, number>>;
}

/**
 * Drain rate from a large backlog against a small one: the queue is filled
 * once per checkout and size by `add --from` (SQLite: a file, copied for each
 * round; PostgreSQL with `pg`: a database, cloned with `CREATE DATABASE …
 * TEMPLATE` for each round),
 * and one `work --concurrency C` (loop mode) runs until `skip + measured`
 * jobs are done; the rate is `measured` over the finished_at span of jobs
 * skip+1 … skip+measured, so start-up and the stop are outside it.
 */
export async function backlog(o: {
  clis: Cli[];
  sizes: number[];
  rounds: number;
  skip: number;
  measured: number;
  concurrency: number;
  pg?: boolean;
  settle: ThroughputOptions["settle"];
  log: ThroughputOptions["log"];
}): Promise<BacklogData> {
  const d: BacklogData = {
    sizes: o.sizes,
    skip: o.skip,
    measured: o.measured,
    concurrency: o.concurrency,
    rates: {},
    fillSeconds: {},
  };
  const engines: Engine[] = o.pg ? ["sqlite", "postgres"] : ["sqlite"];
  const templates: Record<string, string> = {};
  const key = (engine: Engine, cli: Cli, size: number) => `${engine}|${cli.label}|${size}`;
  for (const engine of engines)
    for (const cli of o.clis)
      for (const size of o.sizes) {
        const db =
          engine === "sqlite"
            ? join(tempDir("backlog"), "queue.db")
            : await (await pgServer()).createDatabase(`backlog_${cli.label}_${size}`);
        const t0 = performance.now();
        await runCliOk(
          cli,
          ["add", "--db", db, "--from", writeFile(join(tempDir("jobs"), "jobs.ndjson"), ndjson(size, ["true"]))],
          { quiet: true },
        );
        if (engine === "sqlite") (d.fillSeconds[cli.label] ??= {})[size] = (performance.now() - t0) / 1000;
        templates[key(engine, cli, size)] = db;
        o.log(
          `backlog: ${engine} ${cli.label} filled ${size.toLocaleString("en")} jobs in ${fmt((performance.now() - t0) / 1000)} s`,
        );
      }
  let copies = 0;
  /** A fresh copy of a template queue: a file copy, or a database cloned from the template. */
  const copyOf = async (template: string): Promise<string> => {
    if (!template.startsWith("postgres")) {
      const db = join(tempDir("backlog-run"), "queue.db");
      copyFileSync(template, db);
      if (existsSync(`${template}-wal`)) copyFileSync(`${template}-wal`, `${db}-wal`);
      return db;
    }
    const name = `backlog_run_${++copies}`;
    await pgAdmin(`CREATE DATABASE ${name} TEMPLATE ${new URL(template).pathname.slice(1)}`);
    return (await pgServer()).url(name);
  };
  /** One statement on the server's `postgres` database (CREATE/DROP DATABASE). */
  const pgAdmin = async (statement: string) => {
    const admin = new SQL((await pgServer()).url("postgres"), { max: 1 });
    try {
      await admin.unsafe(statement);
    } finally {
      await admin.close({ timeout: 0 });
    }
  };
  for (let round = 0; round < o.rounds; round++) {
    await o.settle(`backlog round ${round + 1}`);
    const order = round % 2 ? [...o.clis].reverse() : o.clis;
    for (const engine of engines)
      for (const size of o.sizes) {
        for (const cli of order) {
          const db = await copyOf(templates[key(engine, cli, size)]!);
          const q = queueAt(db);
          const worker = Bun.spawn([BUN, cli.path, "work", "--db", db, "--concurrency", String(o.concurrency)], {
            stdin: "ignore",
            stdout: "ignore",
            stderr: "ignore",
            env: { ...process.env, ...spoolEnv() },
          });
          const untrack = trackChild(worker);
          try {
            await waitFor(
              async () => (await q.count("done")) >= o.skip + o.measured,
              600_000,
              50,
              `${o.skip + o.measured} jobs done`,
            );
          } finally {
            worker.kill("SIGTERM");
            await worker.exited;
            untrack();
          }
          const t = await q.finishedTimes();
          await q.close();
          // A 100,000-job clone is ~100 MB: dropped once measured (WITH FORCE: the worker's pool may linger).
          if (engine === "postgres") await pgAdmin(`DROP DATABASE ${new URL(db).pathname.slice(1)} WITH (FORCE)`);
          const rate = o.measured / (t[o.skip + o.measured - 1]! - t[o.skip - 1]!);
          const rates = engine === "sqlite" ? d.rates : (d.pgRates ??= {});
          ((rates[cli.label] ??= {})[size] ??= []).push(rate);
          o.log(`  backlog ${engine} ${size.toLocaleString("en")}, ${cli.label}: ${fmt(rate, 0)} jobs/s`);
        }
      }
  }
  return d;
}

/** Median jobs/s of a set of drain runs of n jobs. */
export const rateOf = (runs: DrainRun[] | undefined, n: number) =>
  runs?.length ? n / (median(runs.map((r) => r.wallMs)) / 1000) : NaN;
