/**
 * Builds a large queue fast: the CLI creates the file (so the schema and
 * pragmas are the code's own), then rows are bulk-inserted with bun:sqlite in
 * one transaction. The mix is meant to look like a long-lived queue: mostly
 * finished jobs, a few dead/canceled, a backlog of queued (some scheduled in
 * the future) and ~1000 running (owned by 8 vanished workers), over three lanes, with one attempt row
 * per started job and `added` + `claimed` + final events.
 *
 *   bun bench/build-1m.ts PATH [JOBS]      # default 1,000,000
 */
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { recordFailureLinesSql } from "./failure-lines.ts";
import { BUN, CLI, run } from "./lib.ts";

export interface BuildReport {
  jobs: number;
  seconds: number;
  bytes: number;
  mix: Record<string, number>;
}

/** Deterministic PRNG (mulberry32), so every run builds the same file. */
function rng(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Builds the queue at `path` with `jobs` jobs; `cliPath` (default: this checkout's src/cli.ts) creates the schema. */
export async function buildLargeDb(path: string, jobs = 1_000_000, cliPath = CLI): Promise<BuildReport> {
  const t0 = performance.now();
  for (const suffix of ["", "-wal", "-shm"]) rmSync(path + suffix, { force: true });
  // The CLI makes the schema: add one job, then remove it so ids start at 1.
  const made = await run([BUN, cliPath, "add", "--db", path, "--json", "--", "true"]);
  if (made.code !== 0) throw new Error(`add on ${path} exited ${made.code}: ${made.stderr}`);
  const db = new Database(path);
  db.exec("PRAGMA busy_timeout = 5000");
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = OFF");
  db.exec("PRAGMA cache_size = -200000");
  db.exec("DELETE FROM job_events; DELETE FROM attempts; DELETE FROM jobs; DELETE FROM sqlite_sequence");

  const insJob = db.prepare(
    `INSERT INTO jobs (id, argv, state, priority, queue, next_run_at, timeout_seconds, max_retries, max_crashes,
       attempts, crashes, last_attempt_no, locked_by, locked_pid, locked_at, heartbeat_at, last_exit_code, last_error,
       idempotency_key, tags, note, cwd, env, created_at, started_at, finished_at, cancel_requested)
     VALUES (?, ?, ?, ?, ?, ?, 300, 3, NULL, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, '{}', ?, ?, ?, 0)`,
  );
  const insAttempt = db.prepare(
    `INSERT INTO attempts (job_id, attempt_no, state, worker_id, worker_pid, pgid, pgid_start_time, started_at, finished_at,
       exit_code, signal, error, failure_reason, stdout_path, stderr_path)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?)`,
  );
  const insEvent = db.prepare("INSERT INTO job_events (job_id, at, event, worker_id, detail) VALUES (?, ?, ?, ?, ?)");

  const rand = rng(42);
  const now = Date.now() / 1000;
  const span = 30 * 86400; // created over the last 30 days
  const lanes = [
    "default",
    "default",
    "default",
    "default",
    "default",
    "default",
    "default",
    "builds",
    "builds",
    "email",
  ];
  const commands = [
    ["make", "test"],
    ["sh", "-c", "rsync -a src/ backup/"],
    ["python3", "scripts/report.py", "--day", "2026-11-01"],
    ["./deploy.sh", "staging"],
    ["curl", "-fsS", "https://example.invalid/hook"],
  ];
  const mix: Record<string, number> = {};
  const spool = `${path.replace(/\.db$/, "")}.spool/output`;

  db.transaction(() => {
    for (let id = 1; id <= jobs; id++) {
      const r = rand();
      // The newest jobs are the backlog: queued and running live at the end of the id range.
      const tail = id > jobs * 0.95;
      let state: string;
      if (tail) state = r < 0.02 ? "running" : r < 0.9 ? "queued" : "done";
      else state = r < 0.94 ? "done" : r < 0.985 ? "dead" : "canceled";
      mix[state] = (mix[state] ?? 0) + 1;
      const queue = lanes[Math.floor(rand() * lanes.length)]!;
      const priority = rand() < 0.1 ? 10 : 0;
      const created = now - span + (span * id) / jobs;
      const scheduled = state === "queued" && rand() < 0.1;
      const nextRun = scheduled ? now + 3600 * (1 + rand() * 24) : created;
      const started = state === "queued" ? null : created + rand() * 5;
      const attemptsN = state === "dead" ? 4 : state === "done" ? (rand() < 0.05 ? 2 : 1) : 0;
      const lastAttempt = state === "running" ? 1 : state === "canceled" ? 0 : attemptsN;
      const finished =
        state === "done" || state === "dead" ? started! + rand() * 60 : state === "canceled" ? created + 10 : null;
      const running = state === "running";
      const exit = state === "done" ? 0 : state === "dead" ? 1 : null;
      const error = state === "dead" ? "exited with code 1" : null;
      const argv = JSON.stringify(commands[id % commands.length]);
      const tags = rand() < 0.3 ? JSON.stringify({ ci: "1", branch: `b${id % 17}` }) : "{}";
      const key = rand() < 0.05 ? `key-${id}` : null;
      insJob.run(
        id,
        argv,
        state,
        priority,
        queue,
        nextRun,
        attemptsN,
        lastAttempt,
        running ? `w-bench-gone-${id % 8}` : null,
        running ? 999999 : null,
        running ? started : null,
        running ? started : null,
        exit,
        error,
        key,
        tags,
        rand() < 0.5 ? "/srv/app" : null,
        created,
        started,
        finished,
      );
      insEvent.run(id, created, "added", null, null);
      for (let a = 1; a <= lastAttempt; a++) {
        const aState = running ? "running" : state === "dead" || a < lastAttempt ? "failed" : "succeeded";
        const aFinished = running ? null : finished;
        const dir = `${spool}/${id}/${a}`;
        insAttempt.run(
          id,
          a,
          aState,
          "w-bench",
          4242,
          5000 + (id % 30000),
          "123456",
          started,
          aFinished,
          aState === "succeeded" ? 0 : aState === "failed" ? 1 : null,
          aState === "failed" ? "exited with code 1" : null,
          aState === "failed" ? "process_exit" : null,
          `${dir}/stdout`,
          `${dir}/stderr`,
        );
        insEvent.run(id, started, "claimed", "w-bench", `attempt ${a}`);
        if (!running)
          insEvent.run(
            id,
            aFinished,
            aState === "succeeded" ? "succeeded" : "failed",
            "w-bench",
            JSON.stringify({ attempt: a }),
          );
      }
      if (state === "dead") insEvent.run(id, finished, "dead", "w-bench", null);
      if (state === "canceled") insEvent.run(id, finished, "canceled", null, null);
    }
  })();
  // What a worker records of each failed attempt's stderr: triage then groups as on a real queue.
  db.exec(recordFailureLinesSql());
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  const bytes = Bun.file(path).size;
  return { jobs, seconds: (performance.now() - t0) / 1000, bytes, mix };
}

if (import.meta.main) {
  const path = process.argv[2];
  if (!path) {
    console.error("usage: bun bench/build-1m.ts PATH [JOBS]");
    process.exit(2);
  }
  const report = await buildLargeDb(path, Number(process.argv[3] ?? 1_000_000));
  console.log(JSON.stringify(report));
}
