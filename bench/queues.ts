/**
 * What the benchmark measures against: the spoolctl checkouts (this one, and
 * optionally a "before" one, run interleaved) and the two stores (a SQLite
 * file, or a fresh database on a throwaway PostgreSQL server started the way
 * the tests start theirs, test/support/pg-server.ts). A {@link Queue} is one
 * fresh queue of either kind, with the few reads the benchmark makes of it
 * (after or while workers run) in SQL both engines accept.
 */
import { Database } from "bun:sqlite";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { SQL } from "bun";
import { type PgServer, startPgServer } from "../test/support/pg-server.ts";
import { BUN, CLI, onAbort, type Ran, run, tempDir } from "./lib.ts";

/** One spoolctl checkout under test: a label for the report and its src/cli.ts. */
export interface Cli {
  label: string;
  path: string;
}

/** `after` (this checkout or $SPOOLCTL_BENCH_CLI) first, then `before` when given (--before PATH or $SPOOLCTL_BENCH_BEFORE). */
export function clisUnderTest(beforePath: string | undefined): Cli[] {
  const clis: Cli[] = [{ label: "after", path: CLI }];
  if (beforePath) clis.push({ label: "before", path: resolve(beforePath) });
  return clis;
}

/** The short commit of the checkout holding `cli`, with "+dirty" when its src/ has uncommitted changes. */
export function commitOf(cli: Cli): string {
  const dir = resolve(cli.path, "../..");
  const head = Bun.spawnSync(["git", "-C", dir, "rev-parse", "--short", "HEAD"], { stdout: "pipe", stderr: "ignore" })
    .stdout.toString()
    .trim();
  const dirty = Bun.spawnSync(["git", "-C", dir, "status", "--porcelain", "--", "src"], {
    stdout: "pipe",
    stderr: "ignore",
  })
    .stdout.toString()
    .trim();
  return head ? `${head}${dirty ? "+dirty" : ""}` : "unknown";
}

let stateHome: string | null = null;
/**
 * Environment of every spoolctl process the benchmark starts: the local spool
 * of a PostgreSQL queue goes under a temp $XDG_STATE_HOME (removed at the
 * end), never into the user's home.
 */
export function spoolEnv(): Record<string, string> {
  stateHome ??= tempDir("state");
  return { XDG_STATE_HOME: stateHome };
}

/** `bun CLI ARGS…` of one checkout, timed from spawn to exit. */
export function runCli(cli: Cli, args: string[], opts: Parameters<typeof run>[1] = {}): Promise<Ran> {
  return run([BUN, cli.path, ...args], { ...opts, env: { ...spoolEnv(), ...(opts.env ?? {}) } });
}

/** {@link runCli}, failing loudly on a non-zero exit. */
export async function runCliOk(cli: Cli, args: string[], opts: Parameters<typeof run>[1] = {}): Promise<Ran> {
  const r = await runCli(cli, args, opts);
  if (r.code !== 0)
    throw new Error(`${cli.label}: spoolctl ${args.join(" ")} exited ${r.code}: ${r.stderr || r.stdout}`);
  return r;
}

/** The two stores: a SQLite file, or a PostgreSQL database. */
export type Engine = "sqlite" | "postgres";

/** Counts and the in-database span of the jobs run (last finished_at − first started_at). */
export interface QueueStats {
  total: number;
  done: number;
  spanMs: number;
}

/** One fresh queue: its `--db` value and reads of its jobs table. */
export interface Queue {
  engine: Engine;
  db: string;
  stats(): Promise<QueueStats>;
  /** Jobs in `state`. */
  count(state: string): Promise<number>;
  /** finished_at of the done jobs, epoch seconds, ascending. */
  finishedTimes(): Promise<number[]>;
  /** created_at / started_at (epoch seconds) of the jobs with id > `afterId`, by id. */
  jobTimes(afterId: number): Promise<{ id: number; created_at: number; started_at: number | null }[]>;
  close(): Promise<void>;
}

const STATS_SQL =
  "SELECT count(*) AS total, sum(CASE WHEN state = 'done' THEN 1 ELSE 0 END) AS done, (max(finished_at) - min(started_at)) * 1000 AS span FROM jobs";

function sqliteQueue(path: string): Queue {
  const read = <T>(fn: (db: Database) => T): T => {
    const db = new Database(path, { readonly: true });
    try {
      db.exec("PRAGMA busy_timeout = 5000");
      return fn(db);
    } finally {
      db.close();
    }
  };
  return {
    engine: "sqlite",
    db: path,
    async stats() {
      const r = read((db) => db.query(STATS_SQL).get() as { total: number; done: number | null; span: number | null });
      return { total: r.total, done: r.done ?? 0, spanMs: r.span ?? NaN };
    },
    async count(state) {
      return read((db) => (db.query("SELECT count(*) AS n FROM jobs WHERE state = ?").get(state) as { n: number }).n);
    },
    async finishedTimes() {
      return read((db) =>
        (
          db.query("SELECT finished_at AS t FROM jobs WHERE state = 'done' ORDER BY finished_at").all() as {
            t: number;
          }[]
        ).map((r) => r.t),
      );
    },
    async jobTimes(afterId) {
      return read(
        (db) =>
          db.query("SELECT id, created_at, started_at FROM jobs WHERE id > ? ORDER BY id").all(afterId) as {
            id: number;
            created_at: number;
            started_at: number | null;
          }[],
      );
    },
    async close() {},
  };
}

function pgQueue(url: string): Queue {
  let sql: SQL | null = null;
  const conn = () => (sql ??= new SQL(url, { max: 1 }));
  return {
    engine: "postgres",
    db: url,
    async stats() {
      const [r] = await conn().unsafe(STATS_SQL);
      return { total: Number(r.total), done: Number(r.done ?? 0), spanMs: r.span === null ? NaN : Number(r.span) };
    },
    async count(state) {
      const [r] = await conn()`SELECT count(*) AS n FROM jobs WHERE state = ${state}`;
      return Number(r.n);
    },
    async finishedTimes() {
      const rows = await conn()`SELECT finished_at AS t FROM jobs WHERE state = 'done' ORDER BY finished_at`;
      return (rows as { t: number }[]).map((r) => Number(r.t));
    },
    async jobTimes(afterId) {
      const rows = await conn()`SELECT id, created_at, started_at FROM jobs WHERE id > ${afterId} ORDER BY id`;
      return (rows as any[]).map((r) => ({
        id: Number(r.id),
        created_at: Number(r.created_at),
        started_at: r.started_at === null ? null : Number(r.started_at),
      }));
    },
    async close() {
      await sql?.close({ timeout: 0 });
      sql = null;
    },
  };
}

/**
 * Which throwaway server: `fast` (test/support/pg-server.ts defaults: fsync, synchronous_commit
 * and full_page_writes off) or `durable` (all three on, as a production server runs).
 */
export type PgKind = "fast" | "durable";
const servers = new Map<PgKind, Promise<PgServer>>();
let dbCounter = 0;

const DURABLE = { fsync: "on", synchronous_commit: "on", full_page_writes: "on" };

/** The run's PostgreSQL server of `kind` (started on first use, stopped by {@link stopPg} or on interruption). */
export function pgServer(kind: PgKind = "fast"): Promise<PgServer> {
  let pg = servers.get(kind);
  if (!pg) {
    pg = startPgServer(kind === "durable" ? { settings: DURABLE } : {}).then(async (server) => {
      onAbort(() => server.stopSync());
      // pg_stat_statements, to count the statements of a drain per job (a restart loads it).
      const admin = new SQL(server.url("postgres"), { max: 1 });
      await admin.unsafe("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'");
      await admin.close({ timeout: 0 });
      await server.restart("fast");
      const again = new SQL(server.url("postgres"), { max: 1 });
      await again.unsafe("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
      await again.unsafe("ALTER SYSTEM SET pg_stat_statements.track = 'all'"); // statements of the triggers' functions too
      await again.unsafe("SELECT pg_reload_conf()");
      await again.close({ timeout: 0 });
      return server;
    });
    servers.set(kind, pg);
  }
  return pg;
}

/** The admin URL (database `postgres`) of the server that holds the database of `url`. */
function adminUrl(url: string): string {
  const u = new URL(url);
  u.pathname = "/postgres";
  return u.toString();
}

/** Calls per normalized statement so far in the database of `url` (pg_stat_statements, keyed by query text). */
export async function pgStatementCalls(url: string): Promise<Record<string, number>> {
  const sql = new SQL(adminUrl(url), { max: 1 });
  try {
    const rows =
      (await sql`SELECT s.query, sum(s.calls) AS calls FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
      WHERE d.datname = ${new URL(url).pathname.slice(1)} GROUP BY s.query`) as { query: string; calls: string }[];
    return Object.fromEntries(rows.map((r) => [r.query.replace(/\s+/g, " ").trim(), Number(r.calls)]));
  } finally {
    await sql.close({ timeout: 0 });
  }
}

/** utime, stime, cutime, cstime (fields 14-17 of /proc/PID/stat) and the parent pid, in clock ticks. */
function procTimes(pid: number): { ppid: number; own: number; reaped: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat
      .slice(stat.lastIndexOf(")") + 2)
      .split(" ")
      .map(Number); // f[0] is field 3 (state)
    return { ppid: f[1]!, own: f[11]! + f[12]!, reaped: f[13]! + f[14]! };
  } catch {
    return null;
  }
}
const TICK_MS =
  1000 / Number(Bun.spawnSync(["getconf", "CLK_TCK"], { stdout: "pipe" }).stdout.toString().trim() || 100);

/**
 * CPU time used so far by the whole PostgreSQL server, ms: the postmaster's
 * own, its reaped children's (backends of closed connections) and its live
 * children's (backends, checkpointer, WAL writer…). NaN when no server runs.
 * A difference of two readings around a drain is the server's CPU for it.
 */
export async function pgServerCpuMs(kind: PgKind = "fast"): Promise<number> {
  const pg = servers.get(kind);
  if (!pg) return NaN;
  const server = await pg;
  let pid: number;
  try {
    pid = Number(readFileSync(join(server.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
  } catch {
    return NaN;
  }
  const main = procTimes(pid);
  if (!main) return NaN;
  let ticks = main.own + main.reaped;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const t = procTimes(Number(name));
    if (t && t.ppid === pid) ticks += t.own;
  }
  return ticks * TICK_MS;
}

/**
 * Samples what the backends of database `url` are doing every `everyMs` until
 * stop(): counts of "state / wait event" (`active / CPU` when a backend runs
 * with no wait event), from pg_stat_activity over a separate connection.
 */
export async function samplePgActivity(
  url: string,
  everyMs = 20,
): Promise<{ stop(): Promise<Record<string, number>> }> {
  const name = new URL(url).pathname.slice(1);
  const sql = new SQL(adminUrl(url), { max: 1 });
  const counts: Record<string, number> = {};
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        const rows = (await sql`SELECT state, wait_event_type, wait_event FROM pg_stat_activity
          WHERE datname = ${name} AND backend_type = 'client backend' AND pid <> pg_backend_pid()`) as {
          state: string;
          wait_event_type: string | null;
          wait_event: string | null;
        }[];
        for (const r of rows) {
          const key =
            r.state === "active" && !r.wait_event
              ? "active / CPU"
              : `${r.state} / ${r.wait_event_type ?? "-"}:${r.wait_event ?? "-"}`;
          counts[key] = (counts[key] ?? 0) + 1;
        }
      } catch {
        // a sample lost: keep sampling
      }
      await Bun.sleep(everyMs);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await sql.close({ timeout: 0 });
      return counts;
    },
  };
}

/**
 * Transactions committed and rolled back so far in the database of `url`
 * (pg_stat_database; a backend reports its counts when it exits, so read
 * after the workers are gone). A difference around a drain, over its jobs,
 * is the transactions per job of the whole fleet.
 */
export async function pgTransactions(url: string): Promise<number> {
  const sql = new SQL(adminUrl(url), { max: 1 });
  try {
    await sql`SELECT pg_stat_clear_snapshot()`;
    const [r] =
      await sql`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = ${new URL(url).pathname.slice(1)}`;
    return Number(r?.n ?? NaN);
  } finally {
    await sql.close({ timeout: 0 });
  }
}

/** Stops the PostgreSQL servers that were started. */
export async function stopPg(): Promise<void> {
  for (const pg of servers.values()) await (await pg).stop();
  servers.clear();
}

/** A fresh, empty queue of `engine` (nothing created yet for SQLite: the first `add` makes the file). */
export async function freshQueue(engine: Engine, tag: string, kind: PgKind = "fast"): Promise<Queue> {
  if (engine === "sqlite") return sqliteQueue(join(tempDir(tag), "queue.db"));
  const server = await pgServer(kind);
  return pgQueue(await server.createDatabase(`bench_${tag.replace(/[^a-z0-9]/gi, "_").toLowerCase()}_${++dbCounter}`));
}

/** The reads of an existing queue at `db` (a SQLite path or a postgres:// URL). */
export function queueAt(db: string): Queue {
  return /^postgres(ql)?:\/\//.test(db) ? pgQueue(db) : sqliteQueue(db);
}
