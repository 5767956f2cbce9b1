/**
 * Schema migrations of the PostgreSQL driver. Table and column names are
 * SQLite's (src/store/sqlite/migrations.ts), and version N means the same
 * schema as SQLite's version N, so `doctor` and `capabilities` report one
 * schema version. Times are double precision epoch seconds; JSON columns
 * (argv, tags, env) are text holding the JSON as written, as in SQLite (jsonb
 * would reorder keys and refuses \u0000).
 *
 * Each step runs in its own transaction under a transaction-level advisory
 * lock on a fixed key, and re-reads the version inside it: ten workers
 * starting at once on an empty database apply every step once, in order.
 * The steps themselves are schema-steps.ts; this file is their runner and
 * the version checks around it.
 */
import type { SQL } from "bun";
import { SpoolError } from "../../contract/errors.ts";
import { LOCK_CLASS, LOCK_MIGRATE } from "./advisory-locks.ts";
import { STEPS } from "./schema-steps.ts";

/** Tables the schema creates; one of them in a database without spoolctl's version means someone else's database. */
const SPOOLCTL_TABLES = [
  "meta",
  "jobs",
  "attempts",
  "job_events",
  "workers",
  "batches",
  "settings",
  "lane_counts",
  "lanes",
  "event_ids",
  "attempt_output",
  "schedules",
  "schedule_slots",
  "hooks",
  "job_needs",
  "metric_counts",
  "dead_jobs",
  "dead_counts",
];

/** The schema version this binary writes (one ahead of SQLite's: v11 concerns PostgreSQL's ledger only). */
export const PG_SCHEMA_VERSION = STEPS.length;

type Sql = SQL;

/** What the database holds: its schema version (0: none) and queue id ("" before v4). */
export interface SchemaState {
  version: number;
  queueId: string;
}

/**
 * Reads the schema version and queue id; version 0 when there is no `meta`
 * table. Raises the driver error of a `meta` table that is not spoolctl's
 * shape (the caller refuses the database).
 */
export async function readSchemaState(sql: Sql): Promise<SchemaState> {
  const [has] = await sql`SELECT to_regclass('meta') IS NOT NULL AS has`;
  if (!has.has) return { version: 0, queueId: "" };
  const rows = (await sql`SELECT key, value FROM meta WHERE key IN ('schema_version', 'queue_id')`) as {
    key: string;
    value: string;
  }[];
  const get = (k: string) => rows.find((r) => r.key === k)?.value;
  return { version: Number(get("schema_version") ?? 0), queueId: get("queue_id") ?? "" };
}

/** Tables of spoolctl's names that exist in the schema the connection uses. */
export async function existingSpoolctlTables(sql: Sql): Promise<string[]> {
  const rows = (await sql`SELECT c.relname AS name FROM pg_class c
    WHERE c.relnamespace = current_schema()::regnamespace AND c.relname = ANY(${SPOOLCTL_TABLES}::text[]) ORDER BY 1`) as {
    name: string;
  }[];
  return rows.map((r) => r.name);
}

export function refuseNewer(version: number, location: string): never {
  throw new SpoolError(
    "INTERNAL",
    `${location} has schema version ${version}, newer than this spoolctl understands (${PG_SCHEMA_VERSION}); it was left untouched`,
    { remediation: "upgrade spoolctl (bunx spoolctl@latest) to open this queue" },
  );
}

export function refuseForeign(location: string, tables: string[]): never {
  throw new SpoolError(
    "INTERNAL",
    `${location} is not a spoolctl queue: its schema has tables spoolctl would create (${tables.slice(0, 5).join(", ")}) but no spoolctl schema version; it was left untouched`,
    {
      remediation:
        "point --db at a database of its own for the queue (createdb spoolctl), or at one spoolctl created; spoolctl never changes tables it did not create",
      detail: { tables: tables.slice(0, 5) },
    },
  );
}

/**
 * Brings the database to {@link PG_SCHEMA_VERSION}, one step per transaction,
 * each under the migration advisory lock with the version re-read inside.
 * Raises `INTERNAL` for a newer schema or a foreign database, touching nothing.
 */
export async function migrate(sql: Sql, location: string): Promise<void> {
  for (;;) {
    const done = await sql.begin(async (tx) => {
      // Another process's step holds the lock for as long as that step takes (seconds on a busy
      // server): wait it out rather than fail at the connection's short lock_timeout; the step's
      // own DDL then waits only as long as usual, so it never queues the workers' queries long.
      await tx`SET LOCAL lock_timeout = '120s'`;
      await tx`SELECT pg_advisory_xact_lock(${LOCK_CLASS}::int, ${LOCK_MIGRATE}::int)`;
      await tx`SET LOCAL lock_timeout TO DEFAULT`;
      let state: SchemaState;
      try {
        state = await readSchemaState(tx);
      } catch {
        refuseForeign(location, await existingSpoolctlTables(tx));
      }
      const version = state.version;
      if (version > PG_SCHEMA_VERSION) refuseNewer(version, location);
      if (version === PG_SCHEMA_VERSION) return true;
      if (version === 0) {
        const tables = await existingSpoolctlTables(tx);
        if (tables.length > 0) refuseForeign(location, tables);
      }
      await tx.unsafe(STEPS[version]!);
      await tx`INSERT INTO meta (key, value) VALUES ('schema_version', ${String(version + 1)})
        ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
      return version + 1 === PG_SCHEMA_VERSION;
    });
    if (done) return;
  }
}
