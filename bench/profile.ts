/**
 * Where a worker's time goes per trivial job: runs the real `Worker` class of
 * src/worker/loop.ts in this process on N queued `true` jobs (drain mode), with
 * the store wrapped so that every read/write transaction is counted and timed
 * and labelled by the store methods it called, `Bun.spawn` timed, and the
 * database folder watched like a reader's waker does (WAL events: what woke
 * every idle worker before issue 13) and the spool's wake folder like a
 * worker's does (touches of wake files: what wakes workers now).
 *
 *   bun bench/profile.ts [--jobs N] [--concurrency C] [--json]
 *
 * Nothing in src/ is changed: the wrapping happens around the Store object.
 */
import { mkdirSync, watch } from "node:fs";
import { basename, dirname, join } from "node:path";
import { CLI, cleanup, cliOk, fmt, ndjson, tempDir, writeFile } from "./lib.ts";

/** The src/ folder of the CLI being measured (this checkout, or $SPOOLCTL_BENCH_CLI's). */
const SRC = dirname(CLI);

interface Bucket {
  count: number;
  ms: number;
  /** Slowest call, ms. */
  max: number;
  /** Calls slower than 2 ms (WAL checkpoints, lock waits, preemption). */
  slow: number;
}

export interface ProfileResult {
  jobs: number;
  concurrency: number;
  wallMs: number;
  cpuMs: number;
  spawn: Bucket;
  watchEvents: number;
  /** File events in the spool's wake folder (absent in checkouts without one). */
  wakeEvents?: number;
  transactions: Record<string, Bucket & { kind: "read" | "write" }>;
}

function argValue(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

export async function profileWorker(jobs: number, concurrency: number): Promise<ProfileResult> {
  const dir = tempDir("profile");
  const db = join(dir, "queue.db");
  await cliOk(["add", "--db", db, "--from", writeFile(join(dir, "jobs.ndjson"), ndjson(jobs, ["true"]))]);

  const { resolveLocation } = await import(join(SRC, "store/location.ts"));
  const { openQueue } = await import(join(SRC, "store/index.ts"));
  const { Worker } = await import(join(SRC, "worker/loop.ts"));
  const store = await openQueue(resolveLocation(db), { create: true, overlapping: true });

  const transactions: ProfileResult["transactions"] = {};
  // Times each transaction from its call to its commit (the wait for the connection lock included).
  const wrapTx =
    (kind: "read" | "write", real: (fn: (tx: any) => Promise<unknown>) => Promise<unknown>, label?: string) =>
    async (fn: (tx: any) => Promise<unknown>) => {
      const called: string[] = label ? [label] : [];
      const t0 = performance.now();
      try {
        return await real((tx: any) =>
          fn(
            new Proxy(tx, {
              get(target, prop, receiver) {
                const v = Reflect.get(target, prop, receiver);
                if (typeof v !== "function") return v;
                return (...args: unknown[]) => {
                  if (!called.includes(String(prop))) called.push(String(prop));
                  return v.apply(target, args);
                };
              },
            }),
          ),
        );
      } finally {
        const label = `${kind}: ${called.join(" + ") || "(nothing)"}`;
        const b = (transactions[label] ??= { count: 0, ms: 0, max: 0, slow: 0, kind });
        const took = performance.now() - t0;
        b.count++;
        b.ms += took;
        b.max = Math.max(b.max, took);
        if (took > 2) b.slow++;
      }
    };
  const wrapped = new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop === "read" || prop === "write") return wrapTx(prop, v.bind(target));
      // The claim is one transaction of its own (claim + attempts + events).
      if (prop === "claimJobs")
        return (req: unknown) => wrapTx("write", async () => v.call(target, req), "claimJobs")(async () => undefined);
      // A result and the next claim in one commit (Store.writeAndClaim): one transaction.
      if (prop === "writeAndClaim")
        return (fn: (tx: any) => Promise<unknown>, req: unknown) =>
          wrapTx("write", (f) => v.call(target, f, req), "writeAndClaim")(fn);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });

  const spawn: Bucket = { count: 0, ms: 0, max: 0, slow: 0 };
  const realSpawn = Bun.spawn;
  try {
    (Bun as any).spawn = (...args: unknown[]) => {
      const t0 = performance.now();
      try {
        return (realSpawn as any)(...args);
      } finally {
        const took = performance.now() - t0;
        spawn.count++;
        spawn.ms += took;
        spawn.max = Math.max(spawn.max, took);
        if (took > 2) spawn.slow++;
      }
    };
  } catch {
    spawn.count = -1; // Bun.spawn is not patchable here
  }

  let watchEvents = 0;
  let wakeEvents = 0;
  let wakeWatcher: ReturnType<typeof watch> | null = null;
  try {
    const wakeDir = join(store.spoolDir, "wake");
    mkdirSync(wakeDir, { recursive: true, mode: 0o700 });
    wakeWatcher = watch(wakeDir, { persistent: false }, () => void wakeEvents++);
  } catch {
    wakeWatcher = null;
  }
  const name = basename(db);
  const watcher = watch(dirname(db), { persistent: false }, (_e, file) => {
    if (file === null || file === name || file === `${name}-wal`) watchEvents++;
  });

  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const worker = new Worker(wrapped as any, {
    queue: "default",
    slots: null,
    concurrency,
    pollInterval: 1,
    workerId: `w-profile-${process.pid}`,
    mode: "drain",
  });
  const summary = await worker.run();
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  watcher.close();
  try {
    (Bun as any).spawn = realSpawn;
  } catch {
    // ignore
  }
  await store.close();
  if (summary.executed !== jobs) throw new Error(`profile: worker executed ${summary.executed} of ${jobs} jobs`);
  wakeWatcher?.close();
  return {
    jobs,
    concurrency,
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    spawn,
    watchEvents,
    wakeEvents,
    transactions,
  };
}

/** Markdown table of a profile, per job. */
export function renderProfile(p: ProfileResult): string {
  const per = (x: number) => x / p.jobs;
  const rows = Object.entries(p.transactions).sort((a, b) => b[1].ms - a[1].ms);
  const txMs = rows.reduce((s, [, b]) => s + b.ms, 0);
  const lines = [
    `In-process worker profile: ${p.jobs} \`true\` jobs, --concurrency ${p.concurrency}, drain mode: ` +
      `${fmt(p.wallMs, 0)} ms wall (${fmt(p.jobs / (p.wallMs / 1000), 0)} jobs/s), ${fmt(p.cpuMs, 0)} ms CPU of the worker process ` +
      `(${fmt(per(p.cpuMs), 2)} ms/job), ${fmt(per(p.watchEvents), 1)} WAL file events/job` +
      (p.wakeEvents !== undefined ? `, ${fmt(per(p.wakeEvents), 1)} wake-file events/job.` : "."),
    "",
    "| transaction (store methods called) | calls per job | ms per call | max ms | calls > 2 ms | ms per job | share of wall |",
    "|---|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      ([label, b]) =>
        `| ${label} | ${fmt(per(b.count), 2)} | ${fmt(b.ms / b.count, 3)} | ${fmt(b.max, 1)} | ${b.slow} | ${fmt(per(b.ms), 3)} | ${fmt((100 * b.ms) / p.wallMs, 1)}% |`,
    ),
    `| **all transactions** | ${fmt(per(rows.reduce((s, [, b]) => s + b.count, 0)), 2)} | | | | ${fmt(per(txMs), 3)} | ${fmt((100 * txMs) / p.wallMs, 1)}% |`,
    p.spawn.count >= 0
      ? `| Bun.spawn call (synchronous part) | ${fmt(per(p.spawn.count), 2)} | ${fmt(p.spawn.ms / Math.max(1, p.spawn.count), 3)} | ${fmt(p.spawn.max, 1)} | ${p.spawn.slow} | ${fmt(per(p.spawn.ms), 3)} | ${fmt((100 * p.spawn.ms) / p.wallMs, 1)}% |`
      : "| Bun.spawn call | (not patchable) | | | | | |",
    `| rest: attempt folder + 2 output files, child runtime, exit notification, event loop | | | | | ${fmt(per(p.wallMs - txMs - Math.max(0, p.spawn.ms)), 3)} | ${fmt((100 * (p.wallMs - txMs - Math.max(0, p.spawn.ms))) / p.wallMs, 1)}% |`,
  ];
  return lines.join("\n");
}

if (import.meta.main) {
  const jobs = Number(argValue("--jobs", "500"));
  const concurrency = Number(argValue("--concurrency", "1"));
  try {
    const p = await profileWorker(jobs, concurrency);
    console.log(process.argv.includes("--json") ? JSON.stringify(p, null, 2) : renderProfile(p));
  } finally {
    cleanup();
  }
}
