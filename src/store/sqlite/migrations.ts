/**
 * Schema migrations of the SQLite driver (docs/architecture.md "Migrations"). Each step runs under
 * `BEGIN IMMEDIATE` and re-reads the version inside the transaction, so two
 * processes opening a fresh or old file at once never double-apply a step.
 */
import type { Database } from "bun:sqlite";
import { SpoolError } from "../../contract/errors.ts";
import { STEPS } from "./schema-steps.ts";

/** The v1 schema, for the test that migrates an old file. */
export const V1_SCHEMA_FOR_TESTS: string = STEPS[0]!;

/** The schema version this binary writes. */
export const SCHEMA_VERSION = STEPS.length;

/** The queue's identity from `meta` (schema v4 on). */
export function readQueueId(db: Database): string {
  const row = db.query("SELECT value FROM meta WHERE key='queue_id'").get() as { value: string } | null;
  return row?.value ?? "";
}

/** The file's schema version; 0 for a fresh file. */
export function readSchemaVersion(db: Database): number {
  const hasMeta = db.query("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").get();
  if (!hasMeta) return 0;
  const row = db.query("SELECT value FROM meta WHERE key='schema_version'").get() as { value: string } | null;
  return row ? Number(row.value) : 0;
}

/** What a file's `meta` says: its schema version (0: none) and its queue id ("" before v4). */
export interface SchemaState {
  version: number;
  queueId: string;
}

/**
 * The open's one schema probe (docs/architecture.md "Migrations"): one
 * statement on a spoolctl file, refusing it when it is newer than this binary;
 * a file without `meta` is looked at further only then, to refuse someone
 * else's database ({@link refuseIfForeign}). Called before any pragma that
 * writes. Raises `INTERNAL` (exit 3) as those do.
 */
export function checkSchema(db: Database, path: string): SchemaState {
  let rows: { key: string; value: string }[];
  try {
    rows = db.query("SELECT key, value FROM meta WHERE key IN ('schema_version', 'queue_id')").all() as {
      key: string;
      value: string;
    }[];
  } catch (error) {
    if (!/no such table: meta/.test(String((error as Error)?.message))) throw error;
    refuseIfForeign(db, path); // no meta: a fresh file, or someone else's
    return { version: 0, queueId: "" };
  }
  const get = (k: string) => rows.find((r) => r.key === k)?.value;
  const state = { version: Number(get("schema_version") ?? 0), queueId: get("queue_id") ?? "" };
  if (state.version > SCHEMA_VERSION) refuseNewer(state.version, path);
  return state;
}

function refuseNewer(version: number, path: string): never {
  throw new SpoolError(
    "INTERNAL",
    `${path} has schema version ${version}, newer than this spoolctl understands (${SCHEMA_VERSION}); it was left untouched`,
    { remediation: "upgrade spoolctl (bunx spoolctl@latest) to open this queue" },
  );
}

/**
 * Raises `INTERNAL` (exit 3) when the file holds a database that spoolctl did
 * not create: schema objects but no schema version (no spoolctl `meta` table).
 * Every step of {@link migrate} writes the version in the same transaction as
 * its tables, so a version-0 file with tables can only be someone else's.
 * Called, like {@link checkSchema}, before any pragma that writes, so the
 * file keeps every byte (no WAL switch, no tables added).
 */
function refuseIfForeign(db: Database, path: string): void {
  // Both reads in one snapshot: another opener may commit the first migration step between them.
  const objects = db.transaction(() => {
    if (readSchemaVersion(db) !== 0) return [];
    return db.query("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name LIMIT 6").all() as {
      name: string;
    }[];
  })();
  if (objects.length === 0) return; // an empty file: a new queue
  const names =
    objects
      .slice(0, 5)
      .map((o) => o.name)
      .join(", ") + (objects.length > 5 ? ", …" : "");
  throw new SpoolError(
    "INTERNAL",
    `${path} is not a spoolctl queue: it is a SQLite database with other tables (${names}); it was left untouched`,
    {
      remediation:
        "pass --db with the path of a spoolctl queue (or of a new file to create one); spoolctl never changes a database it did not create",
      detail: { path, tables: objects.slice(0, 5).map((o) => o.name) },
    },
  );
}

/**
 * Brings the file to {@link SCHEMA_VERSION}, one step per transaction
 * (`seen`: the version the caller just read, if any; each step re-reads it).
 * Raises `INTERNAL` (exit 3) for a file newer than this binary, touching nothing.
 */
export function migrate(db: Database, path: string, seen = readSchemaVersion(db)): void {
  if (seen === SCHEMA_VERSION) return;
  if (seen > SCHEMA_VERSION) refuseNewer(seen, path);
  for (;;) {
    db.exec("BEGIN IMMEDIATE");
    try {
      const version = readSchemaVersion(db);
      if (version > SCHEMA_VERSION) refuseNewer(version, path);
      if (version === SCHEMA_VERSION) {
        db.exec("COMMIT");
        return;
      }
      db.exec(STEPS[version]!);
      db.query(
        "INSERT INTO meta (key, value) VALUES ('schema_version', ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
      ).run(String(version + 1));
      db.exec("COMMIT");
    } catch (error) {
      if (db.inTransaction) db.exec("ROLLBACK");
      throw error;
    }
  }
}
