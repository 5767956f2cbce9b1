/**
 * Peak RSS of a worker: VmHWM polled from /proc/PID/status every 10 ms (VmHWM
 * only grows, so the last read is the peak up to ~10 ms before exit). Bun's
 * `resourceUsage().maxRSS` is not used: a child spawned from a Bun process
 * inherits the parent's high-water mark across exec (vfork), so it would
 * report the benchmark's own memory.
 */
import { join } from "node:path";
import { BUN, median, ndjson, procMemory, sleep, tempDir, trackChild, writeFile } from "./lib.ts";
import { type Cli, type Engine, freshQueue, runCliOk, spoolEnv } from "./queues.ts";

/** Peak RSS (bytes) per case and checkout, and of the bare runtime. */
export interface RssData {
  jobs: number;
  /** case → variant label → VmHWM bytes per run. */
  cases: Record<string, Record<string, number[]>>;
  /** `bun -e 'await Bun.sleep(500)'`. */
  runtime: number;
}

async function hwmOf(argv: string[], stopAfterMs?: number): Promise<number> {
  const proc = Bun.spawn(argv, {
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
    env: { ...process.env, ...spoolEnv() },
  });
  const untrack = trackChild(proc);
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
  untrack();
  return hwm;
}

/** A queue of `engine` holding `jobs` `true` jobs, added by `cli`. */
async function filled(cli: Cli, engine: Engine, jobs: number): Promise<string> {
  const q = await freshQueue(engine, "rss");
  await runCliOk(
    cli,
    ["add", "--db", q.db, "--from", writeFile(join(tempDir("jobs"), "jobs.ndjson"), ndjson(jobs, ["true"]))],
    { quiet: true },
  );
  await q.close();
  return q.db;
}

/** Peak RSS of idle and draining workers for every checkout (SQLite, and PostgreSQL with `pg`), `runs` times each. */
export async function memory(o: {
  clis: Cli[];
  jobs: number;
  runs: number;
  pg: boolean;
  log: (m: string) => void;
}): Promise<RssData> {
  const d: RssData = { jobs: o.jobs, cases: {}, runtime: NaN };
  const cases: [string, Engine, string[], number, number | undefined][] = [
    ["idle worker (`work`, stopped 3 s after start), SQLite", "sqlite", [], 1, 3000],
    [`worker draining ${o.jobs} jobs, SQLite`, "sqlite", ["--drain"], o.jobs, undefined],
    [
      `worker draining ${o.jobs} jobs --concurrency 4, SQLite`,
      "sqlite",
      ["--drain", "--concurrency", "4"],
      o.jobs,
      undefined,
    ],
  ];
  if (o.pg)
    cases.push([
      `worker draining ${o.jobs} jobs --concurrency 4, PostgreSQL`,
      "postgres",
      ["--drain", "--concurrency", "4"],
      o.jobs,
      undefined,
    ]);
  for (let i = 0; i < o.runs; i++) {
    for (const [name, engine, extra, jobs, stopAfter] of cases) {
      for (const cli of o.clis) {
        const db = await filled(cli, engine, jobs);
        ((d.cases[name] ??= {})[cli.label] ??= []).push(
          await hwmOf([BUN, cli.path, "work", "--db", db, ...extra], stopAfter),
        );
      }
    }
  }
  d.runtime = await hwmOf([BUN, "-e", "await Bun.sleep(500)"]);
  o.log(
    `rss: ${Object.entries(d.cases)
      .map(
        ([k, v]) =>
          `${k}: ${Object.entries(v)
            .map(([l, xs]) => `${l} ${(median(xs) / 2 ** 20).toFixed(1)} MiB`)
            .join(" / ")}`,
      )
      .join("; ")}`,
  );
  return d;
}
