/**
 * SQL per job of the worker's hot path, without spawning anything: opens a
 * queue of N `true` jobs with a checkout's own store, claims C of them, then
 * loops the worker's "complete many" verb (src/store/verbs/record.ts
 * `complete`: B results and the claim of the B slots they free in one
 * commit) until the queue is empty. Reports per job: SQL statements run
 * (every `Statement.get/run/all/values` and `exec` of bun:sqlite, counted by
 * text), WAL frames written (pages: `PRAGMA wal_checkpoint` after the run,
 * with the connection's auto-checkpoint off), and the time of the verb calls.
 * With two checkouts, the rounds alternate (A, B, A, B, …) so that a loaded
 * machine weighs on both alike; the load average is printed with the figures.
 *
 *   bun bench/sql-per-job.ts [--jobs N] [--concurrency C] [--batch B] [--rounds R] [--statements]
 *                            [--a SRC_DIR] [--b SRC_DIR]
 *
 * SRC_DIR: a checkout's src/ (default: this one's, as A only).
 */
import { Database } from "bun:sqlite";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { BUN, cleanup, fmt, median, tempDir } from "./lib.ts";

function argValue(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

/** Statement counts and times, by SQL text (whitespace folded), while `counting`. */
const byStatement = new Map<string, { n: number; ms: number }>();
let counting = false;
function count(sql: string, ms: number): void {
  const key = sql.replace(/\s+/g, " ").trim().slice(0, 100);
  const b = byStatement.get(key) ?? { n: 0, ms: 0 };
  b.n++;
  b.ms += ms;
  byStatement.set(key, b);
}
// Every statement of every checkout goes through these (db.query caches the wrapped statement).
const proto = Database.prototype as any;
const realQuery = proto.query;
const realPrepare = proto.prepare;
const realExec = proto.exec;
const wrap = (stmt: any, sql: string) =>
  new Proxy(stmt, {
    get(target, prop) {
      const v = Reflect.get(target, prop);
      if (typeof v !== "function") return v;
      if (prop !== "get" && prop !== "run" && prop !== "all" && prop !== "values") return v.bind(target);
      return (...args: unknown[]) => {
        if (!counting) return v.apply(target, args);
        const t0 = performance.now();
        try {
          return v.apply(target, args);
        } finally {
          count(sql, performance.now() - t0);
        }
      };
    },
  });
proto.query = function (sql: string) {
  return wrap(realQuery.call(this, sql), sql);
};
proto.prepare = function (sql: string, ...rest: unknown[]) {
  return wrap(realPrepare.call(this, sql, ...rest), sql);
};
proto.exec = function (sql: string, ...rest: unknown[]) {
  if (!counting) return realExec.call(this, sql, ...rest);
  const t0 = performance.now();
  try {
    return realExec.call(this, sql, ...rest);
  } finally {
    count(`exec ${sql}`, performance.now() - t0);
  }
};
proto.run = proto.exec;

interface Round {
  ms: number;
  /** CPU time of this process over the run (user + system), ms: less swayed than wall time by other processes. */
  cpuMs: number;
  statements: number;
  frames: number;
}

/** One run of checkout `src` on a copy of `template`. */
async function runOnce(src: string, template: string, dir: string, n: number, c: number, b: number): Promise<Round> {
  const db = join(dir, `q-${Math.random().toString(36).slice(2)}.db`);
  copyFileSync(template, db);
  const { resolveLocation } = await import(join(src, "store/location.ts"));
  const { openQueue } = await import(join(src, "store/index.ts"));
  const { claimJobs } = await import(join(src, "store/verbs/claim.ts"));
  const { complete } = await import(join(src, "store/verbs/record.ts"));
  const store = await openQueue(resolveLocation(db), { create: true });
  (store as any).db.exec("PRAGMA wal_autocheckpoint = 0"); // every frame stays in the WAL, to be counted
  const who = { queue: "default", workerId: `w-sql-${process.pid}`, workerPid: process.pid, slots: null };
  byStatement.clear();
  counting = true;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let running = await claimJobs(store, who, c);
  let done = 0;
  while (running.length > 0) {
    const ending = running.slice(0, b);
    const ends = ending.map((a: any) => ({
      ref: { jobId: a.job.id, attemptNo: a.attemptNo, workerId: who.workerId, stderr: null, process: null },
      end: { kind: "exited", code: 0 },
      endedAt: a.startedAt,
    }));
    const { outcomes, claimed } = await complete(store, ends, { ...who, limit: ending.length });
    if (outcomes.some((o: unknown) => o === null)) throw new Error("a result was refused");
    done += ending.length;
    running = [...running.slice(b), ...(claimed ?? [])];
  }
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  counting = false;
  if (done !== n) throw new Error(`completed ${done} of ${n}`);
  const statements = [...byStatement.values()].reduce((s, x) => s + x.n, 0);
  const { log } = (store as any).db.query("PRAGMA wal_checkpoint(PASSIVE)").get() as { log: number };
  await store.close();
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, statements, frames: log };
}

if (import.meta.main) {
  const n = Number(argValue("--jobs", "300"));
  const c = Number(argValue("--concurrency", "4"));
  const b = Number(argValue("--batch", "2"));
  const rounds = Number(argValue("--rounds", "10"));
  const here = resolve(import.meta.dir, "../src");
  const a = resolve(argValue("--a", here));
  const bSrc = process.argv.includes("--b") ? resolve(argValue("--b", here)) : null;
  try {
    const dir = tempDir("sql-per-job");
    mkdirSync(dir, { recursive: true });
    const template = join(dir, "template.db");
    const lines = Array.from({ length: n }, () => JSON.stringify({ argv: ["true"] })).join("\n");
    writeFileSync(join(dir, "jobs.ndjson"), `${lines}\n`);
    const add = Bun.spawnSync([BUN, join(a, "cli.ts"), "add", "--db", template, "--from", join(dir, "jobs.ndjson")]);
    if (add.exitCode !== 0) throw new Error(add.stderr.toString());
    const sides: [string, string][] = [["A", a], ...(bSrc ? [["B", bSrc] as [string, string]] : [])];
    const results = new Map<string, Round[]>(sides.map(([k]) => [k, []]));
    const statements = new Map<string, Map<string, { n: number; ms: number }>>();
    const load0 = loadavg()[0]!;
    for (const [, src] of sides) await runOnce(src, template, dir, n, c, b); // warm-up (modules, page cache)
    for (let r = 0; r < rounds; r++) {
      for (const [k, src] of r % 2 === 0 ? sides : [...sides].reverse()) {
        results.get(k)!.push(await runOnce(src, template, dir, n, c, b));
        if (!statements.has(k)) statements.set(k, new Map(byStatement));
      }
    }
    const load1 = loadavg()[0]!;
    console.log(
      `${n} jobs, ${c} claimed at first, ${b} results per commit, ${rounds} interleaved rounds; load average ${fmt(load0, 2)} → ${fmt(load1, 2)}`,
    );
    console.log(
      "| checkout | statements/job | WAL frames/job | ms/job (median of rounds) | ms/job (min) | CPU ms/job (median) |",
    );
    console.log("|---|---:|---:|---:|---:|---:|");
    for (const [k, src] of sides) {
      const rs = results.get(k)!;
      console.log(
        `| ${k} ${src} | ${fmt(rs[0]!.statements / n, 2)} | ${fmt(rs[0]!.frames / n, 2)} | ${fmt(median(rs.map((x) => x.ms / n)), 3)} | ${fmt(Math.min(...rs.map((x) => x.ms / n)), 3)} | ${fmt(median(rs.map((x) => x.cpuMs / n)), 3)} |`,
      );
    }
    if (bSrc) {
      // Same-round ratios: each B run against the A run next to it.
      const ra = results.get("A")!;
      const rb = results.get("B")!;
      const wall = median(rb.map((x, i) => x.ms / ra[i]!.ms));
      const cpu = median(rb.map((x, i) => x.cpuMs / ra[i]!.cpuMs));
      console.log(`B/A, median of same-round ratios: wall ${fmt(wall, 2)}, CPU ${fmt(cpu, 2)}`);
    }
    if (process.argv.includes("--statements"))
      for (const [k, m] of statements) {
        console.log(`\n${k}: statement | per job | µs per call (one round)`);
        for (const [sql, x] of [...m.entries()].sort((p, q) => q[1].ms - p[1].ms))
          console.log(`${fmt(x.n / n, 2)} | ${fmt((1000 * x.ms) / x.n, 1)} | ${sql}`);
      }
  } finally {
    cleanup();
  }
}
