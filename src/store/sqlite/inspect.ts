/**
 * Read-only inspection of a SQLite queue file for `doctor` (SPEC §5): opens the
 * file read-only — no migration, no pragma change, nothing created — and reports
 * journal mode, schema version and the integrity check.
 */
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { BUSY_TIMEOUT_MS } from "./open.ts";
import { SCHEMA_VERSION, readSchemaVersion } from "./migrations.ts";

/** What {@link inspectSqliteQueue} found. Fields are null when the step could not run. */
export interface QueueInspection {
  /** Whether the database file exists. */
  exists: boolean;
  /** Whether it opened read-only; when false, `openError` says why. */
  opened: boolean;
  openError: string | null;
  /** `PRAGMA journal_mode` (`wal` expected). */
  journalMode: string | null;
  /** The file's schema version (0: no spoolctl schema yet). */
  schemaVersion: number | null;
  /** The schema version this binary writes. */
  supportedSchemaVersion: number;
  /** Tables of the file that are not spoolctl's, when it has no spoolctl schema (a foreign database). */
  foreignTables: string[];
  /** Problems reported by `PRAGMA integrity_check` ([] = ok). */
  integrityProblems: string[] | null;
}

/** Inspects the queue file at `path` without changing it. */
export function inspectSqliteQueue(path: string): QueueInspection {
  const out: QueueInspection = {
    exists: existsSync(path),
    opened: false,
    openError: null,
    journalMode: null,
    schemaVersion: null,
    supportedSchemaVersion: SCHEMA_VERSION,
    foreignTables: [],
    integrityProblems: null,
  };
  if (!out.exists) return out;
  let db: Database;
  try {
    db = new Database(path, { readonly: true });
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    out.journalMode = (db.query("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode;
  } catch (error) {
    out.openError = (error as Error).message;
    return out;
  }
  try {
    out.opened = true;
    out.schemaVersion = readSchemaVersion(db);
    if (out.schemaVersion === 0) {
      const tables = db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string }[];
      out.foreignTables = tables.map((t) => t.name);
    }
    const rows = db.query("PRAGMA integrity_check(20)").all() as { integrity_check: string }[];
    out.integrityProblems = rows.map((r) => r.integrity_check).filter((m) => m !== "ok");
  } catch (error) {
    out.openError = (error as Error).message;
    out.opened = out.schemaVersion !== null;
  } finally {
    db.close(false);
  }
  return out;
}
