/**
 * Pick-up latency of an idle worker: how long after `add` returns a job is
 * running. The probe job is `sh -c 'date +%s%N > FILE'`; its stamp is the
 * moment `date` runs. Measured for each checkout on SQLite (file-watch wake)
 * and PostgreSQL (LISTEN/NOTIFY wake), with the poll set to 5 s so that a
 * missed wake shows as a ~5 s sample instead of hiding in a 1 s poll; and for
 * task-spooler and nq with the same probe. Samples alternate between the
 * queues, so a load change weighs on all of them.
 */
import { join } from "node:path";
import { type LatencySample, NQ, nqLatency, readStamp, stampArgv, TSP, tspLatency, tspUsable } from "./compare.ts";
import { BUN, sleep, tempDir, trackChild, waitFor, wallMs } from "./lib.ts";
import { type Cli, type Engine, freshQueue, type Queue, runCli, runCliOk, spoolEnv } from "./queues.ts";

/** One spoolctl pick-up sample (ms). */
export interface SpoolLatency extends LatencySample {
  /** stamp − the job's created_at (taken by `add` just before its transaction). */
  fromCommit: number;
}

/** The latency section's samples (ms). */
export interface LatencyData {
  /** Bare spawn of the probe from Bun: spawn → stamp, ms. */
  stampCost: number[];
  /** "after SQLite", "before PostgreSQL", "tsp", "nq" → samples. */
  samples: Record<string, LatencySample[]>;
}

/** An idle `work` on a fresh queue of `engine`, after it has run a first job; stop() ends it. */
async function idleWorker(cli: Cli, engine: Engine): Promise<{ q: Queue; stop: () => Promise<void>; lastId: number }> {
  const q = await freshQueue(engine, "latency");
  await runCliOk(cli, ["add", "--db", q.db, "--", "true"], { quiet: true });
  const worker = Bun.spawn([BUN, cli.path, "work", "--db", q.db, "--poll-interval", "5"], {
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
    env: { ...process.env, ...spoolEnv() },
  });
  const untrack = trackChild(worker);
  await waitFor(async () => (await q.count("done")) === 1, 30_000, 20, "the worker to run its first job");
  await sleep(1000);
  return {
    q,
    lastId: 1,
    stop: async () => {
      worker.kill("SIGTERM");
      await worker.exited;
      untrack();
      await q.close();
    },
  };
}

/** One probe through spoolctl: add, wait for the stamp, then for the job to be recorded. */
async function spoolSample(cli: Cli, w: { q: Queue; lastId: number }, dir: string, i: number): Promise<SpoolLatency> {
  const file = join(dir, `stamp-${i}`);
  const t0 = wallMs();
  const r = await runCli(cli, ["add", "--db", w.q.db, "--", ...stampArgv(file)], { quiet: true });
  const t1 = wallMs();
  if (r.code !== 0) throw new Error(`${cli.label}: add exited ${r.code}`);
  const stamp = await waitFor(() => readStamp(file), 60_000, 1, "the job's stamp");
  await waitFor(
    async () => (await w.q.count("queued")) + (await w.q.count("running")) === 0,
    30_000,
    5,
    "the job to be recorded",
  );
  const [job] = await w.q.jobTimes(w.lastId);
  w.lastId = job!.id;
  return { fromExit: stamp - t1, fromSpawn: stamp - t0, addMs: r.ms, fromCommit: stamp - job!.created_at * 1000 };
}

/** How long the probe takes to write its stamp when spawned bare from Bun. */
async function stampCost(samples: number): Promise<number[]> {
  const dir = tempDir("stamp");
  const out: number[] = [];
  for (let i = 0; i < samples; i++) {
    const file = join(dir, `s${i}`);
    const t0 = wallMs();
    await Bun.spawn(stampArgv(file), { stdin: "ignore", stdout: "ignore", stderr: "ignore" }).exited;
    out.push(readStamp(file)! - t0);
    await sleep(20);
  }
  return out;
}

/**
 * Pick-up samples for every checkout on every engine (one idle worker each,
 * sampled in turn), then task-spooler and nq when installed.
 */
export async function latencies(o: {
  clis: Cli[];
  engines: Engine[];
  samples: number;
  compare: boolean;
  log: (m: string) => void;
}): Promise<LatencyData> {
  const d: LatencyData = { stampCost: await stampCost(o.samples), samples: {} };
  const workers: { name: string; cli: Cli; w: Awaited<ReturnType<typeof idleWorker>>; dir: string }[] = [];
  try {
    for (const engine of o.engines) {
      for (const cli of o.clis)
        workers.push({
          name: `${cli.label} ${engine === "sqlite" ? "SQLite" : "PostgreSQL"}`,
          cli,
          w: await idleWorker(cli, engine),
          dir: tempDir("stamps"),
        });
    }
    o.log(`latency: ${o.samples} samples × ${workers.map((w) => w.name).join(", ")}`);
    for (let i = 0; i < o.samples; i++) {
      for (const x of workers) {
        (d.samples[x.name] ??= []).push(await spoolSample(x.cli, x.w, x.dir, i));
        await sleep(150 + Math.random() * 100);
      }
    }
  } finally {
    for (const x of workers) await x.w.stop();
  }
  if (o.compare && TSP && tspUsable()) {
    try {
      d.samples.tsp = await tspLatency(o.samples, 200);
    } catch (error) {
      o.log(`tsp latency failed: ${(error as Error).message}`);
    }
  }
  if (o.compare && NQ) {
    try {
      d.samples.nq = await nqLatency(o.samples, 200);
    } catch (error) {
      o.log(`nq latency failed: ${(error as Error).message}`);
    }
  }
  return d;
}
