/**
 * Builds a large PostgreSQL queue fast, the counterpart of build-1m.ts: the
 * CLI creates the schema (so it is the code's own), then the rows are
 * inserted server-side with `generate_series` in a few statements. The mix is
 * build-1m.ts's: over 30 days, 94 % done / 4.5 % dead / 1.5 % canceled, and
 * in the newest 5 % a backlog (88 % queued, 10 % of those scheduled in the
 * future; 2 % running, owned by 8 vanished workers); lanes
 * default/builds/email 70/20/10 %. Simplified: one attempt row per started
 * job, and `added`, `claimed` and the final event per job.
 *
 * Triggers are off during the load (`session_replication_role = replica`), so
 * what they maintain is written directly: event ids in commit order (job id
 * order here) with the event_ids counter after them, the lane counts, the
 * lanes table and the kept dead counts. Then `ANALYZE`, which autovacuum would run on a live queue.
 *
 *   bun bench/build-1m-pg.ts URL [JOBS]      # default 1,000,000
 */
import { SQL } from "bun";
import { DEAD_COUNTS_BACKFILL } from "../src/store/postgres/dead-schema.ts";
import type { BuildReport } from "./build-1m.ts";
import { recordFailureLinesSql } from "./failure-lines.ts";
import { BUN, CLI, run } from "./lib.ts";

/** Fills the (empty or missing-schema) PostgreSQL database at `url` with `jobs` jobs; `cliPath` creates the schema. */
export async function buildLargePg(
  url: string,
  jobs = 1_000_000,
  cliPath = CLI,
  env: Record<string, string> = {},
): Promise<BuildReport> {
  const t0 = performance.now();
  const made = await run([BUN, cliPath, "add", "--db", url, "--json", "--", "true"], { env });
  if (made.code !== 0) throw new Error(`add on the PostgreSQL queue exited ${made.code}: ${made.stderr}`);
  const sql = new SQL(url, { max: 1 });
  const now = Date.now() / 1000;
  const span = 30 * 86400;
  try {
    await sql.begin(async (tx) => {
      await tx.unsafe("SET LOCAL session_replication_role = replica");
      await tx.unsafe("SET LOCAL max_parallel_workers_per_gather = 0");
      await tx.unsafe("SELECT setseed(0.42)");
      await tx.unsafe("TRUNCATE job_events, attempts, jobs RESTART IDENTITY CASCADE");
      await tx.unsafe("DELETE FROM lane_counts");
      await tx.unsafe(`
        WITH base AS (
          SELECT g AS id, random() AS r, random() AS rl, random() AS rp, random() AS rs, random() AS rt, random() AS rf,
                 ${now - span} + ${span}::float8 * g / ${jobs} AS created, g > ${jobs} * 0.95 AS tail
          FROM generate_series(1, ${jobs}) g
        ), s AS (
          SELECT *, CASE WHEN tail THEN CASE WHEN r < 0.02 THEN 'running' WHEN r < 0.9 THEN 'queued' ELSE 'done' END
                         ELSE CASE WHEN r < 0.94 THEN 'done' WHEN r < 0.985 THEN 'dead' ELSE 'canceled' END END AS state
          FROM base
        ), t AS (
          SELECT *, CASE WHEN state = 'queued' THEN NULL ELSE created + rt * 5 END AS started FROM s
        )
        INSERT INTO jobs (id, argv, state, priority, queue, next_run_at, timeout_seconds, max_retries, attempts, last_attempt_no,
                          locked_by, locked_pid, locked_at, heartbeat_at, last_exit_code, last_error, idempotency_key, tags, cwd, env,
                          created_at, started_at, finished_at, cancel_requested)
        SELECT id,
               (ARRAY['["make","test"]', '["sh","-c","rsync -a src/ backup/"]', '["python3","scripts/report.py","--day","2026-11-01"]',
                      '["./deploy.sh","staging"]', '["curl","-fsS","https://example.invalid/hook"]'])[1 + id % 5],
               state, CASE WHEN rp < 0.1 THEN 10 ELSE 0 END,
               (ARRAY['default','default','default','default','default','default','default','builds','builds','email'])[1 + floor(rl * 10)::int],
               CASE WHEN state = 'queued' AND rs < 0.1 THEN ${now} + 3600 * (1 + rt * 24) ELSE created END,
               300, 3,
               CASE state WHEN 'dead' THEN 4 WHEN 'done' THEN 1 ELSE 0 END,
               CASE WHEN state IN ('done', 'dead', 'running') THEN 1 ELSE 0 END,
               CASE WHEN state = 'running' THEN 'w-bench-gone-' || (id % 8) END,
               CASE WHEN state = 'running' THEN 999999 END,
               CASE WHEN state = 'running' THEN started END,
               CASE WHEN state = 'running' THEN started END,
               CASE state WHEN 'done' THEN 0 WHEN 'dead' THEN 1 END,
               CASE WHEN state = 'dead' THEN 'exited with code 1' END,
               CASE WHEN rf < 0.05 THEN 'key-' || id END,
               CASE WHEN rs < 0.3 THEN '{"ci":"1","branch":"b' || (id % 17) || '"}' ELSE '{}' END,
               CASE WHEN rt < 0.5 THEN '/srv/app' END, '{}',
               created, started,
               CASE WHEN state IN ('done', 'dead') THEN started + rf * 60 WHEN state = 'canceled' THEN created + 10 END,
               false
        FROM t`);
      await tx.unsafe(`
        INSERT INTO attempts (job_id, attempt_no, state, worker_id, worker_pid, pgid, pgid_start_time, started_at, finished_at,
                              exit_code, error, failure_reason, stdout_path, stderr_path)
        SELECT id, 1, CASE state WHEN 'running' THEN 'running' WHEN 'done' THEN 'succeeded' ELSE 'failed' END,
               'w-bench', 4242, 5000 + id % 30000, '123456', started_at, finished_at,
               last_exit_code, last_error, CASE WHEN state = 'dead' THEN 'process_exit' END,
               '/var/spool/bench/' || id || '/1/stdout', '/var/spool/bench/' || id || '/1/stderr'
        FROM jobs WHERE state IN ('done', 'dead', 'running')`);
      await tx.unsafe(`
        INSERT INTO job_events (id, job_id, at, event, worker_id, detail)
        SELECT id * 3, id, created_at, 'added', NULL, NULL FROM jobs
        UNION ALL
        SELECT id * 3 + 1, id, started_at, 'claimed', 'w-bench', 'attempt 1' FROM jobs WHERE state IN ('done', 'dead', 'running')
        UNION ALL
        SELECT id * 3 + 2, id, finished_at, CASE state WHEN 'done' THEN 'succeeded' WHEN 'dead' THEN 'dead' ELSE 'canceled' END,
               CASE WHEN state = 'canceled' THEN NULL ELSE 'w-bench' END, NULL
        FROM jobs WHERE state IN ('done', 'dead', 'canceled')`);
      // What a worker records of each failed attempt's stderr: triage then groups as on a real queue.
      await tx.unsafe(recordFailureLinesSql());
      await tx.unsafe("UPDATE event_ids SET last_id = (SELECT coalesce(max(id), 0) FROM job_events)");
      await tx.unsafe(
        "INSERT INTO lane_counts (queue, state, n) SELECT queue, state, count(*) FROM jobs GROUP BY queue, state",
      );
      await tx.unsafe("INSERT INTO lanes (queue) SELECT DISTINCT queue FROM jobs ON CONFLICT DO NOTHING");
      // The kept dead counts (schema v20), which the triggers would have kept; absent in an older schema.
      const [kept] = (await tx.unsafe("SELECT to_regclass('dead_jobs') IS NOT NULL AS here")) as { here: boolean }[];
      if (kept?.here) await tx.unsafe(DEAD_COUNTS_BACKFILL);
      await tx.unsafe(`SELECT setval(pg_get_serial_sequence('jobs', 'id'), ${jobs})`);
    });
    await sql.unsafe("ANALYZE");
    const mixRows = (await sql`SELECT state, count(*) AS n FROM jobs GROUP BY state ORDER BY state`) as {
      state: string;
      n: string;
    }[];
    const [size] = await sql`SELECT pg_database_size(current_database()) AS bytes`;
    return {
      jobs,
      seconds: (performance.now() - t0) / 1000,
      bytes: Number(size.bytes),
      mix: Object.fromEntries(mixRows.map((r) => [r.state, Number(r.n)])),
    };
  } finally {
    await sql.close({ timeout: 0 });
  }
}

if (import.meta.main) {
  const url = process.argv[2];
  if (!url) {
    console.error("usage: bun bench/build-1m-pg.ts URL [JOBS]");
    process.exit(2);
  }
  console.log(JSON.stringify(await buildLargePg(url, Number(process.argv[3] ?? 1_000_000))));
}
