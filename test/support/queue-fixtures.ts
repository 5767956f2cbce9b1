/**
 * The only place where the end-to-end tests speak a database's own language.
 *
 * Two things live here:
 *
 * 1. Which database the suite runs against, from `SPOOLCTL_TEST_DB`:
 *    unset or `sqlite` → a SQLite file per {@link TempQueue} (today's default);
 *    a `postgres://…` URL (an admin URL: a role that may CREATE DATABASE) → a
 *    fresh database per TempQueue on that server, dropped by its cleanup.
 *
 * 2. Test-only state shortcuts that no verb and no driver method offers, each
 *    one statement per driver (PostgreSQL has the same table and column names as
 *    SQLite: jobs, attempts, job_events, workers, settings, meta; times are
 *    epoch seconds there too). Every shortcut says why a test needs it. State
 *    CHECKS never come here: they go through the CLI's JSON or the driver
 *    (TempQueue.job(), .attempts(), .events() …).
 */
import { Database } from "bun:sqlite";
import { mkdirSync, renameSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import type { JobState } from "../../src/model/job.ts";

/** Which database the tests run against. */
export type TestDb = { driver: "sqlite" } | { driver: "postgres"; adminUrl: string };

function readTestDb(): TestDb {
  const value = process.env.SPOOLCTL_TEST_DB ?? "";
  if (value === "" || value === "sqlite") return { driver: "sqlite" };
  if (/^postgres(ql)?:\/\//i.test(value)) return { driver: "postgres", adminUrl: value };
  throw new Error(`SPOOLCTL_TEST_DB must be unset, "sqlite" or a postgres:// URL, not ${JSON.stringify(value)}`);
}

/** `SPOOLCTL_TEST_DB`, parsed once. */
export const TEST_DB: TestDb = readTestDb();

/** True when the suite runs against PostgreSQL: SQLite-only tests skip (`test.skipIf(ON_POSTGRES)`). */
export const ON_POSTGRES = TEST_DB.driver === "postgres";

// Bun's SQL client takes PGDATABASE over the database named in a URL: with it set,
// every client here (and every CLI run) would open the same database.
if (ON_POSTGRES) delete process.env.PGDATABASE;

/** What a fixture needs of a queue (TempQueue has it). */
export interface FixtureQueue {
  readonly driver: "sqlite" | "postgres";
  /** The SQLite file, or the PostgreSQL database URL. */
  readonly db: string;
}

// ---------------------------------------------------------------------------
// One database per TempQueue on the PostgreSQL server.

let counter = 0;

/** A database name unique across processes: spoolctl_t_<pid>_<n>_<random>. */
function databaseName(): string {
  const rand = Math.floor(Math.random() * 0x10000)
    .toString(16)
    .padStart(4, "0");
  return `spoolctl_t_${process.pid}_${++counter}_${rand}`;
}

/** `adminUrl` with its database replaced by `name`. */
function withDatabase(adminUrl: string, name: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${encodeURIComponent(name)}`;
  return u.toString();
}

/** Env for a child bun that talks to the server: PGDATABASE would override the URL's database. */
function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "PGDATABASE") env[k] = v;
  return { ...env, ...extra };
}

const ADMIN_SCRIPT = `
const { SQL } = require("bun");
const sql = new SQL(process.env.ADMIN_URL, { max: 1, connectionTimeout: 10 });
try {
  await sql.unsafe(process.env.STATEMENT);
} finally {
  await sql.close({ timeout: 0 });
}
`;

/**
 * Runs one admin statement (CREATE/DROP DATABASE) synchronously, in a child
 * bun: a TempQueue is made in synchronous hooks (`beforeEach(() => q = new
 * TempQueue())`), and CREATE DATABASE cannot run inside a transaction anyway.
 */
function adminStatementSync(adminUrl: string, statement: string): void {
  const r = Bun.spawnSync([process.execPath, "-e", ADMIN_SCRIPT], {
    env: childEnv({ ADMIN_URL: adminUrl, STATEMENT: statement }),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0)
    throw new Error(`${statement} failed on ${redact(adminUrl)} (exit ${r.exitCode}): ${r.stderr.toString().trim()}`);
}

function redact(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = "***";
  return u.toString();
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Creates a fresh, empty database on the SPOOLCTL_TEST_DB server; returns its name and URL. */
export function createPgDatabase(): { name: string; url: string } {
  if (TEST_DB.driver !== "postgres") throw new Error("createPgDatabase: SPOOLCTL_TEST_DB is not a postgres:// URL");
  const name = databaseName();
  adminStatementSync(TEST_DB.adminUrl, `CREATE DATABASE ${quoteIdent(name)}`);
  return { name, url: withDatabase(TEST_DB.adminUrl, name) };
}

/** Drops a database made by {@link createPgDatabase}, closing whatever connection a killed worker left (PostgreSQL 13+). */
export function dropPgDatabase(name: string): void {
  if (TEST_DB.driver !== "postgres") return;
  if (process.env.SPOOLCTL_TEST_PG_KEEP === "1") return; // kept for a post-mortem
  adminStatementSync(TEST_DB.adminUrl, `DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
}

// ---------------------------------------------------------------------------
// Raw statements, one per driver.

/**
 * Runs one statement on the queue: `sqlite` with `?` placeholders, `postgres`
 * with `$1, $2 …`. Returns the rows (for the few fixtures that read).
 */
async function statement(
  q: FixtureQueue,
  sqlite: string,
  postgres: string,
  params: (string | number | null)[],
): Promise<Record<string, unknown>[]> {
  if (q.driver === "sqlite") {
    const db = new Database(q.db);
    try {
      db.exec("PRAGMA busy_timeout = 5000"); // a worker may hold the write lock for a moment
      return db.query(sqlite).all(...params) as Record<string, unknown>[];
    } finally {
      db.close();
    }
  }
  const sql = new SQL(q.db, { max: 1, connectionTimeout: 10 });
  try {
    return [...(await sql.unsafe(postgres, params))] as Record<string, unknown>[];
  } finally {
    await sql.close({ timeout: 0 });
  }
}

/** Job columns a test may set directly, and only these (they go into the statement by name). */
export interface JobPatch {
  /** When the job is due: move a retry backoff or a user delay to now, or order due times for the claim-order test. */
  next_run_at?: number;
  /** When it was added: age a job for `prune` / `list` windows. */
  created_at?: number;
  /** When it finished: age a terminal job for `prune --older-than`. */
  finished_at?: number | null;
  /** Its state, to stage a state no verb can produce on demand (a "running" job with no worker, for prune). */
  state?: JobState;
}

const JOB_PATCH_COLUMNS = ["next_run_at", "created_at", "finished_at", "state"] as const;

/**
 * Sets job columns directly. Why: no verb or driver method moves time. A
 * retry backoff (2 s, 4 s … 60 s) or an `--after 1h` would otherwise have to be
 * slept through, and prune's `--older-than 7d` needs jobs that finished days
 * ago. Every use says which of those it stands for.
 */
export async function patchJobs(q: FixtureQueue, ids: number[], patch: JobPatch): Promise<void> {
  const cols = JOB_PATCH_COLUMNS.filter((c) => patch[c] !== undefined);
  if (cols.length === 0 || ids.length === 0) return;
  const values = cols.map((c) => patch[c] as string | number | null);
  for (const id of ids) {
    await statement(
      q,
      `UPDATE jobs SET ${cols.map((c) => `${c} = ?`).join(", ")} WHERE id = ?`,
      `UPDATE jobs SET ${cols.map((c, i) => `${c} = $${i + 1}`).join(", ")} WHERE id = $${cols.length + 1}`,
      [...values, id],
    );
  }
}

/**
 * Makes the next job's id `next`, as if that many jobs had been added and
 * pruned: a test-only shortcut to a large id range (a text search's window,
 * docs/architecture.md "Job filters") without adding the jobs. PostgreSQL
 * moves its id sequence; SQLite, whose next id is the largest plus one,
 * renumbers the newest job (and its ledger rows) to `next - 1`, so give it
 * one that has not run.
 */
export async function skipJobIdsTo(q: FixtureQueue, next: number): Promise<void> {
  if (q.driver === "postgres") {
    await statement(q, "", "SELECT setval(pg_get_serial_sequence('jobs', 'id'), $1)", [next - 1]);
    return;
  }
  const [row] = (await statement(q, "SELECT max(id) AS id FROM jobs", "", [])) as { id: number }[];
  await statement(q, "UPDATE job_events SET job_id = ? WHERE job_id = ?", "", [next - 1, row!.id]);
  await statement(q, "UPDATE jobs SET id = ? WHERE id = ?", "", [next - 1, row!.id]);
}

/**
 * Moves a job's attempt output into the spool layout of earlier versions,
 * `output/<job>/<attempt>/stdout|stderr`, files and recorded paths. Why: it
 * stands for a spool written before the flat layout, which readers and prune
 * must still handle (docs/architecture.md "Output").
 */
export async function useOldOutputLayout(q: FixtureQueue, spoolDir: string, jobId: number): Promise<void> {
  const rows = await statement(
    q,
    "SELECT attempt_no, stdout_path, stderr_path FROM attempts WHERE job_id = ?",
    "SELECT attempt_no, stdout_path, stderr_path FROM attempts WHERE job_id = $1",
    [jobId],
  );
  for (const row of rows) {
    const dir = join(spoolDir, "output", String(jobId), String(row.attempt_no));
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    renameSync(row.stdout_path as string, join(dir, "stdout"));
    renameSync(row.stderr_path as string, join(dir, "stderr"));
    await statement(
      q,
      "UPDATE attempts SET stdout_path = ?, stderr_path = ? WHERE job_id = ? AND attempt_no = ?",
      "UPDATE attempts SET stdout_path = $1, stderr_path = $2 WHERE job_id = $3 AND attempt_no = $4",
      [join(dir, "stdout"), join(dir, "stderr"), jobId, row.attempt_no as number],
    );
  }
}

/**
 * Forgets the process group recorded on a job's attempts. Why: it stages the
 * window in which a worker spawned the job's child but died before recording
 * its group — too short to hit with a real SIGKILL — so that the reaper must
 * find the orphan by its attempt marker instead.
 */
export async function forgetAttemptGroups(q: FixtureQueue, jobId: number): Promise<void> {
  await statement(
    q,
    "UPDATE attempts SET pgid = NULL, pgid_start_time = NULL WHERE job_id = ?",
    "UPDATE attempts SET pgid = NULL, pgid_start_time = NULL WHERE job_id = $1",
    [jobId],
  );
}

/**
 * Sets the schema version in `meta`. Why: a queue written by a newer spoolctl
 * cannot be made any other way, and the binary must refuse it untouched.
 */
export async function setSchemaVersion(q: FixtureQueue, version: number): Promise<void> {
  await statement(
    q,
    "UPDATE meta SET value = ? WHERE key = 'schema_version'",
    "UPDATE meta SET value = $1 WHERE key = 'schema_version'",
    [String(version)],
  );
}

/**
 * The schema version in `meta`, read directly. Why: a queue newer than the
 * binary is refused by every open, the driver's included, so only a raw read
 * can show it was left as it was.
 */
export async function schemaVersion(q: FixtureQueue): Promise<string | null> {
  const rows = await statement(
    q,
    "SELECT value FROM meta WHERE key = 'schema_version'",
    "SELECT value FROM meta WHERE key = 'schema_version'",
    [],
  );
  return rows[0] ? String(rows[0].value) : null;
}

// ---------------------------------------------------------------------------
// SQLite files as files: fixtures of the SQLite-only tests (each test that uses
// them skips on PostgreSQL and says why). They touch no queue state a driver
// method could read.

/** Makes a SQLite file that is not a queue: an application's database with one table, `users`, and one row. */
export function makeForeignSqliteFile(path: string): void {
  const db = new Database(path);
  try {
    db.exec("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)");
    db.exec("INSERT INTO users (name) VALUES ('ada')");
  } finally {
    db.close();
  }
}

/** What SQLite itself says about a file (opened read-only): its journal mode and its tables. */
export function sqliteFileFacts(path: string): { journal_mode: string; tables: string[] } {
  const db = new Database(path, { readonly: true });
  try {
    const { journal_mode } = db.query("PRAGMA journal_mode").get() as { journal_mode: string };
    const tables = (
      db.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]
    ).map((t) => t.name);
    return { journal_mode, tables };
  } finally {
    db.close();
  }
}

/** Switches a SQLite file's journal mode (e.g. a queue file back to a rollback journal, `DELETE`). */
export function setSqliteJournalMode(path: string, mode: "DELETE" | "WAL"): void {
  const db = new Database(path);
  try {
    db.exec(`PRAGMA journal_mode = ${mode}`);
  } finally {
    db.close();
  }
}

/**
 * A script (`bun SCRIPT FILE SECONDS`) that takes SQLite's write lock on FILE
 * (`BEGIN IMMEDIATE`), prints `locked`, holds it for SECONDS, lets go and
 * prints `released`: the lock another process holds, for the LOCKED tests.
 */
export const SQLITE_LOCK_HOLDER = `import { Database } from "bun:sqlite";
const db = new Database(process.argv[2]);
db.exec("PRAGMA busy_timeout = 5000");
db.exec("BEGIN IMMEDIATE");
console.log("locked");
await Bun.sleep(Number(process.argv[3]) * 1000);
db.exec("ROLLBACK");
console.log("released");
`;
