#!/usr/bin/env bun
/**
 * Time to triage's first screen over many dead jobs (docs/architecture.md
 * "Triage"), on a real SQLite file in the temp folder:
 *
 *   1. the grouping itself, in-process (failureGroups: the store's GROUP BY
 *      of the recorded signatures, the example jobs): median ms;
 *   2. `spoolctl list --state dead --group --json` end to end (process start
 *      included): median ms;
 *   3. `spoolctl triage` in a real pseudo-terminal (tmux): from starting the
 *      command to the group screen being on the pane: median ms;
 *   4. (1) again on rows without a recorded stderr line (attempts from before
 *      schema v5, or reaped): each line then comes from a bounded read of the
 *      attempt's stderr file.
 *
 * The dead jobs are real rows written through the driver (add, claim, record
 * with the stderr line and signature a worker records) in 12 kinds of failure whose lines
 * differ by numbers, hosts, paths and hex ids, so nearly every raw line is
 * distinct (the masking's worst case) and they mask to 12 groups, in 4 lanes.
 *
 * With `--pg ADMIN_URL` (a PostgreSQL server you run, e.g.
 * postgres://postgres@127.0.0.1:5432/postgres) the same on a fresh database
 * of that server (dropped afterwards), the stderr lines recorded.
 *
 * Usage: bun bench/triage.ts [--jobs N] [--runs N] [--pg ADMIN_URL]
 * Prints a markdown table on stdout.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { storedSignature } from "../src/ops/failure-signature.ts";
import { validateAddInput } from "../src/ops/job-spec.ts";
import { openQueue } from "../src/store/index.ts";
import { resolveLocation } from "../src/store/location.ts";
import type { Store } from "../src/store/store.ts";
import { addJobs } from "../src/store/verbs/add.ts";
import { failureGroups } from "../src/store/verbs/triage.ts";
import { BUN, CLI, cleanup, fmt, median, tempDir } from "./lib.ts";

const argv = process.argv.slice(2);
const opt = (name: string, dflt: number) => {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
};
const JOBS = opt("--jobs", 10_000);
const PG_ADMIN = (() => {
  const i = argv.indexOf("--pg");
  return i >= 0 ? argv[i + 1] : undefined;
})();
const RUNS = opt("--runs", 7);

/** 12 kinds of stderr line; `n` varies the numbers, hosts, paths and ids. */
const KINDS: ((n: number) => string)[] = [
  (n) => `could not connect to host ${n % 97}`,
  (n) => `error: connect to db${n % 13}.internal:5432 refused`,
  (n) => `open /var/lib/app/cache/${n}.json: no such file or directory`,
  (n) => `fatal: commit ${(n * 2654435761).toString(16).padStart(10, "0")}a not found`,
  (n) => `${new Date(1.7e12 + n * 1000).toISOString()} ERROR timeout after ${n % 60}s`,
  (n) => `ssh: connect to host 10.0.${n % 255}.${(n * 7) % 255} port 22: Connection refused`,
  (n) => `GET https://api${n % 9}.example.com/v1/items/${n} failed: 503`,
  (n) => `worker-${n} segfault at 0x7f${(n * 31).toString(16)} ip 0x55${n.toString(16)}`,
  (n) => `Fehler: Datei /tmp/daten-${n}.csv nicht gefunden (Versuch ${n % 5})`,
  (n) => `lock ${crypto.randomUUID()} held by pid ${1000 + n}`,
  (n) => `OOM: killed process ${n} (node) total-vm:${n * 4}kB`,
  (n) => `retrying in ${n % 30}.5s (attempt ${n % 7}/7)`,
];

/** Adds `jobs` jobs and records each one's single attempt as dead, with its stderr line (or only a stderr file). */
async function deadJobs(store: Store, dir: string, jobs: number, recordLine: boolean): Promise<void> {
  const lanes = ["default", "builds", "deploy", "reports"];
  const now = store.now();
  for (let start = 0; start < jobs; start += 1000) {
    const n = Math.min(1000, jobs - start);
    for (const lane of lanes) {
      const specs = Array.from({ length: Math.ceil(n / lanes.length) }, (_, i) =>
        validateAddInput(
          { argv: ["sh", "-c", `./step.sh ${start + i}`], queue: lane, maxRetries: "0" },
          (f) => `--${f}`,
          dir,
        ),
      );
      await addJobs(store, specs, now);
      const claimed = await store.claimJobs({
        queue: lane,
        workerId: "bench",
        workerPid: process.pid,
        slots: null,
        limit: specs.length,
        now,
      });
      await store.write(async (tx) => {
        for (const { job, attempt } of claimed) {
          const line = KINDS[job.id % KINDS.length]!(job.id);
          if (!recordLine) {
            mkdirSync(dirname(attempt.stderr_path), { recursive: true });
            writeFileSync(attempt.stderr_path, `some noise\n${line}\n`);
          }
          await tx.recordAttempt({
            jobId: job.id,
            attemptNo: attempt.attempt_no,
            workerId: "bench",
            now: now + job.id / 1000,
            attemptState: "failed",
            exitCode: 1 + (job.id % KINDS.length === 7 ? 0 : 1),
            signal: null,
            error: "exited with code 2",
            failureReason: "process_exit",
            stderrLastLine: recordLine ? line : null,
            stderrSignature: recordLine ? storedSignature(line) : null,
            jobState: "dead",
            events: [],
            attempts: 1,
            crashes: 0,
            nextRunAt: now,
          });
        }
      });
    }
  }
}

/** A queue of `jobs` dead jobs (in `db` when given, else a new SQLite file); returns its location. */
async function buildQueue(
  tag: string,
  jobs: number,
  recordLine: boolean,
  where?: string,
): Promise<{ db: string; dir: string }> {
  process.env.SPOOLCTL_SYNCHRONOUS = "normal"; // building only; reads do not care
  const dir = tempDir(`triage-${tag}`);
  const db = where ?? join(dir, "queue.db");
  process.env.XDG_STATE_HOME = dir; // a PostgreSQL queue's local spool
  const store = await openQueue(resolveLocation(db, {}, dir), { create: true });
  await deadJobs(store, dir, jobs, recordLine);
  await store.close();
  return { db, dir };
}

/** Median ms of the grouping in-process (a fresh store each run: no warm statement cache). */
async function inProcess(db: string, dir: string): Promise<{ ms: number; groups: number; jobs: number }> {
  const times: number[] = [];
  let groups = 0;
  let total = 0;
  for (let i = 0; i < RUNS; i++) {
    const store = await openQueue(resolveLocation(db, {}, dir), { create: false });
    const t = performance.now();
    const got = await failureGroups(store, { tags: {} });
    times.push(performance.now() - t);
    groups = got.length;
    total = got.reduce((n, g) => n + g.count, 0);
    await store.close();
  }
  return { ms: median(times), groups, jobs: total };
}

/** Median ms of `list --state dead --group --json`, process start included. */
function cliList(db: string): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    const r = Bun.spawnSync([BUN, CLI, "list", "--state", "dead", "--group", "--json", "--db", db], { stdout: "pipe" });
    if (r.exitCode !== 0) throw new Error(`list --group failed: ${r.stderr}`);
    times.push(performance.now() - t);
  }
  return median(times);
}

/** Median ms from starting `spoolctl triage` in a tmux pane to its group screen on the pane. */
async function firstScreen(db: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const socket = `spoolctl-bench-${process.pid}-${i}`;
    const tmux = (...args: string[]) =>
      spawnSync("tmux", ["-L", socket, "-f", "/dev/null", ...args], { encoding: "utf8" });
    const command = `env NO_COLOR=1 ${BUN} ${CLI} triage --db '${db}'; sleep 600`;
    const t = performance.now();
    tmux("new-session", "-d", "-s", "b", "-x", "160", "-y", "50", "bash", "-c", command);
    for (;;) {
      if (tmux("capture-pane", "-p", "-t", "b").stdout.includes("largest first: pick one")) break;
      if (performance.now() - t > 30_000) throw new Error("triage's group screen did not appear in 30 s");
      await Bun.sleep(5);
    }
    times.push(performance.now() - t);
    tmux("kill-server");
  }
  return median(times);
}

const haveTmux = spawnSync("tmux", ["-V"]).status === 0;
process.stderr.write(`triage bench: building ${JOBS} dead jobs (stderr line recorded)…\n`);
const recorded = await buildQueue("recorded", JOBS, true);
const a = await inProcess(recorded.db, recorded.dir);
const list = cliList(recorded.db);
const screen = haveTmux ? await firstScreen(recorded.db) : NaN;
process.stderr.write(`triage bench: building ${JOBS} dead jobs (no stderr line recorded: read from the files)…\n`);
const unrecorded = await buildQueue("files", JOBS, false);
const b = await inProcess(unrecorded.db, unrecorded.dir);

let pg: { a: { ms: number }; list: number; screen: number } | null = null;
if (PG_ADMIN) {
  const { SQL } = await import("bun");
  const name = `spoolctl_bench_triage_${process.pid}`;
  const admin = new SQL(PG_ADMIN);
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(PG_ADMIN);
  url.pathname = `/${name}`;
  try {
    process.stderr.write(`triage bench: building ${JOBS} dead jobs on PostgreSQL…\n`);
    const q = await buildQueue("pg", JOBS, true, url.toString());
    pg = { a: await inProcess(q.db, q.dir), list: cliList(q.db), screen: haveTmux ? await firstScreen(q.db) : NaN };
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.close();
  }
}

console.log(`Triage over ${a.jobs} dead jobs in ${a.groups} failure groups (Bun ${Bun.version}, median of ${RUNS}):\n`);
const ms = (x: number) => (Number.isFinite(x) ? `${fmt(x)} ms` : "n/a");
console.log(`| measure | SQLite |${pg ? " PostgreSQL |" : ""}`);
console.log(`|---|---|${pg ? "---|" : ""}`);
console.log(
  `| grouping in-process (GROUP BY of the recorded signatures, examples) | ${ms(a.ms)} |${pg ? ` ${ms(pg.a.ms)} |` : ""}`,
);
console.log(
  `| \`spoolctl list --state dead --group --json\` end to end | ${ms(list)} |${pg ? ` ${ms(pg.list)} |` : ""}`,
);
console.log(
  `| \`spoolctl triage\` start → group screen on a tmux pane | ${haveTmux ? ms(screen) : "n/a (no tmux)"} |${pg ? ` ${ms(pg.screen)} |` : ""}`,
);
console.log(
  `| grouping in-process, nothing recorded (bounded read and masking of ${b.jobs} stderr files) | ${ms(b.ms)} |${pg ? " – |" : ""}`,
);
cleanup();
