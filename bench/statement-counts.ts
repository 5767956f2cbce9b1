/**
 * How bench/statements.ts counts the SQL statements of one whole spoolctl
 * process, and the SQL of its fixtures.
 *
 * - SQLite: the process runs with bench/sql-counter.ts preloaded, which counts
 *   every bun:sqlite call and writes the counts to a file at exit.
 * - PostgreSQL: a throwaway server (test/support/pg-server.ts) started with
 *   `log_statement = all` (each line prefixed with the backend's pid and
 *   database), `pg_stat_statements` loaded with `track = all`, and autovacuum
 *   off (its transactions would land in the database's counts). Around the
 *   process: wait until the database has no backend, note the server log's
 *   size, read the database's committed + rolled-back transactions
 *   (`pg_stat_database`; a backend reports them when it exits) and reset its
 *   `pg_stat_statements` entries; after it: wait for its backends to exit,
 *   then read all three again. The statements the process sent are the log's
 *   `statement:` / `execute …:` lines of that database (one per simple query
 *   string or extended-protocol execute), its connections the log's
 *   `connection authorized` lines (`log_connections`). The server counts one
 *   transaction per connection at its start (the backend's own catalog
 *   reads): those are left out of the transactions. `pg_stat_statements`' sum(calls) is
 *   kept beside them, since it also counts what functions and triggers run.
 *   It is no count of what was sent: it marks the statements of a deferred
 *   trigger fired at COMMIT top-level, and counts the repeated executes of a
 *   prepared BEGIN or COMMIT fewer times than the log shows them. The
 *   counting runs over a connection to database `postgres`, so none of it is
 *   counted.
 */
import { Database } from "bun:sqlite";
import { readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { SQL } from "bun";
import { type PgServer, startPgServer } from "../test/support/pg-server.ts";
import { BUN, onAbort, run, tempDir, waitFor } from "./lib.ts";
import { type Cli, spoolEnv } from "./queues.ts";
import type { SqlCounts } from "./sql-counter.ts";

/** The statements of one process. */
export interface Counted {
  /** Statements the process sent (SQLite: calls; PostgreSQL: the server log's statement lines). */
  statements: number;
  /** Transactions (SQLite: BEGINs plus statements outside one, PRAGMAs left out; PostgreSQL: the server's count less one per connection). */
  transactions: number;
  /** PostgreSQL: connections the process opened; 0 on SQLite. */
  connections: number;
  /** PostgreSQL: pg_stat_statements' sum(calls), statements run by functions and triggers included; 0 on SQLite. */
  server: number;
  /** Calls by statement text (PostgreSQL: the log's, then pg_stat_statements' prefixed `pgss: `). */
  byText: Record<string, number>;
}

const COUNTER = resolve(import.meta.dir, "sql-counter.ts");
let countsDir: string | null = null;
let countFiles = 0;

/** Runs `bun --preload sql-counter.ts CLI ARGS…` and returns its counts; throws on a non-zero exit. */
export async function countSqlite(cli: Cli, args: string[]): Promise<Counted> {
  countsDir ??= tempDir("stmts-counts");
  const file = join(countsDir, `counts-${++countFiles}.json`);
  const r = await run([BUN, "--preload", COUNTER, cli.path, ...args], {
    env: { ...spoolEnv(), SPOOLCTL_BENCH_SQL_COUNTS: file },
  });
  if (r.code !== 0)
    throw new Error(`${cli.label}: spoolctl ${args.join(" ")} exited ${r.code}: ${r.stderr || r.stdout}`);
  const c = JSON.parse(readFileSync(file, "utf8")) as SqlCounts;
  return { statements: c.statements, transactions: c.transactions, connections: 0, server: 0, byText: c.byText };
}

/** The counting PostgreSQL server. */
export interface PgCounter {
  /** Creates an empty database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Counts what `fn` (a whole process on the database of `url`) sends. */
  count(url: string, fn: () => Promise<unknown>): Promise<Counted>;
  stop(): Promise<void>;
}

/** Starts the server described in the header. */
export async function startCountingPg(): Promise<PgCounter> {
  const server: PgServer = await startPgServer({
    settings: {
      shared_preload_libraries: "pg_stat_statements",
      log_statement: "all",
      log_connections: "on",
      log_line_prefix: "'%p/%d/'",
      "pg_stat_statements.track": "all",
      autovacuum: "off",
    },
  });
  const untrack = onAbort(() => server.stopSync());
  const log = join(server.dir, "server.log");
  const admin = new SQL(server.url("postgres"), { max: 1 });
  await admin.unsafe("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  const nameOf = (url: string) => decodeURIComponent(new URL(url).pathname.slice(1));
  const idle = (name: string) =>
    waitFor(
      async () => {
        const [r] = await admin`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${name}`;
        return r.n === 0;
      },
      60_000,
      20,
      `the backends of ${name} to exit`,
    );
  const transactions = async (name: string): Promise<number> => {
    await admin`SELECT pg_stat_clear_snapshot()`;
    const [r] = await admin`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = ${name}`;
    return Number(r.n);
  };
  return {
    createDatabase: (name) => server.createDatabase(name),
    async count(url, fn) {
      const name = nameOf(url);
      await idle(name);
      const logFrom = statSync(log).size;
      const x0 = await transactions(name);
      await admin`SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = ${name}), 0)`;
      await fn();
      await idle(name);
      const x1 = await transactions(name);
      const rows = (await admin`SELECT s.query, s.toplevel, sum(s.calls)::bigint AS calls
        FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
        WHERE d.datname = ${name} GROUP BY s.query, s.toplevel`) as {
        query: string;
        toplevel: boolean;
        calls: string;
      }[];
      const counted: Counted = { statements: 0, transactions: 0, connections: 0, server: 0, byText: {} };
      const logged = readFileSync(log).subarray(logFrom).toString("utf8");
      const prefix = new RegExp(`^\\d+/${name}/LOG:  (?:statement|execute [^:]*): (.*)$`);
      const connection = new RegExp(`^\\d+/${name}/LOG:  connection authorized`);
      for (const line of logged.split("\n")) {
        if (connection.test(line)) counted.connections++;
        const m = prefix.exec(line);
        if (!m) continue;
        counted.statements++;
        const key = m[1]!.replace(/\s+/g, " ").trim().slice(0, 120);
        counted.byText[key] = (counted.byText[key] ?? 0) + 1;
      }
      counted.transactions = x1 - x0 - counted.connections;
      for (const r of rows) {
        const n = Number(r.calls);
        counted.server += n;
        const key = `pgss: ${r.toplevel ? "" : "(nested) "}${r.query.replace(/\s+/g, " ").trim().slice(0, 120)}`;
        counted.byText[key] = (counted.byText[key] ?? 0) + n;
      }
      return counted;
    },
    async stop() {
      await admin.close({ timeout: 0 });
      await server.stop();
      untrack();
    },
  };
}

/** Runs one fixture statement on the queue at `db` (a SQLite path or a postgres:// URL); returns its rows. */
export async function sqlOn(db: string, text: string): Promise<Record<string, unknown>[]> {
  if (!db.startsWith("postgres")) {
    const d = new Database(db);
    try {
      d.exec("PRAGMA busy_timeout = 5000");
      return d.query(text).all() as Record<string, unknown>[];
    } finally {
      d.close();
    }
  }
  const sql = new SQL(db, { max: 1 });
  try {
    return (await sql.unsafe(text)) as Record<string, unknown>[];
  } finally {
    await sql.close({ timeout: 0 });
  }
}

/** Jobs of the queue at `db` by state, e.g. `{ done: 10 }`. */
export async function statesOf(db: string): Promise<Record<string, number>> {
  const rows = await sqlOn(db, "SELECT state, count(*) AS n FROM jobs GROUP BY state ORDER BY state");
  return Object.fromEntries(rows.map((r) => [String(r.state), Number(r.n)]));
}
