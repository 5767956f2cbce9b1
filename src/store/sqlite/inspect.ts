/**
 * Read-only inspection of a SQLite queue file for `doctor` (docs/architecture.md
 * "The driver contract"): opens the file read-only — no migration, no pragma change, nothing
 * created — and reports journal mode, schema version, the integrity check and
 * whether the folder is writable, as the driver's readiness checks.
 */
import { Database } from "bun:sqlite";
import { accessSync, constants, existsSync } from "node:fs";
import { dirname } from "node:path";
import type { StoreCheck } from "../../model/storage.ts";
import { BUSY_TIMEOUT_MS, deniedFolderError } from "./errors.ts";
import { readSchemaVersion, SCHEMA_VERSION } from "./migrations.ts";

/** What {@link inspectSqliteQueue} found. Fields are null when the step could not run. */
interface QueueInspection {
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
function inspectSqliteQueue(path: string): QueueInspection {
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
      const tables = db
        .query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .all() as { name: string }[];
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

function check(
  id: string,
  status: StoreCheck["status"],
  message: string,
  remediation: string | null = null,
): StoreCheck {
  return { id, status, message, remediation };
}

/** Whether `path`, or its nearest existing ancestor when it does not exist yet, is writable. */
export function writableOrCreatable(path: string): { ok: boolean; at: string } {
  let at = path;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  try {
    accessSync(at, constants.W_OK);
    return { ok: true, at };
  } catch {
    return { ok: false, at };
  }
}

/**
 * The SQLite driver's checks for `doctor`: `db_opens`, `wal`, `integrity`,
 * `schema_version` and `db_dir_writable`, read-only.
 */
export function sqliteChecks(path: string): StoreCheck[] {
  const out: StoreCheck[] = [];
  const q = inspectSqliteQueue(path);
  const denied = q.exists ? null : deniedFolderError(path, false);
  if (denied) {
    // Not "does not exist yet": a folder on the way is closed to this user.
    out.push(check("db_opens", "fail", denied.message, denied.remediation));
    for (const id of ["wal", "integrity", "schema_version"]) out.push(check(id, "skip", "the database did not open"));
  } else if (!q.exists) {
    out.push(check("db_opens", "pass", `${path} does not exist yet; the first write (spoolctl add) creates it`));
    for (const id of ["wal", "integrity", "schema_version"]) out.push(check(id, "skip", "no database file yet"));
  } else if (!q.opened) {
    out.push(
      check(
        "db_opens",
        "fail",
        `cannot open ${path}: ${q.openError}`,
        "check that the path is a readable SQLite file, or pass another --db",
      ),
    );
    // A file SQLite calls damaged as it opens (its schema pages are hit) fails the integrity check too.
    const damaged = /malformed/i.test(q.openError ?? "");
    out.push(check("wal", "skip", "the database did not open"));
    out.push(
      damaged
        ? check(
            "integrity",
            "fail",
            `the file is damaged where SQLite reads its schema: ${q.openError}`,
            "stop the workers, back up the file, and restore or rebuild the queue (sqlite3 .recover)",
          )
        : check("integrity", "skip", "the database did not open"),
    );
    out.push(check("schema_version", "skip", "the database did not open"));
  } else {
    out.push(check("db_opens", "pass", `opened ${path}`));
    out.push(
      q.journalMode === "wal"
        ? check("wal", "pass", "journal_mode is wal")
        : check(
            "wal",
            "warn",
            `journal_mode is ${q.journalMode}, not wal`,
            "any spoolctl write (e.g. spoolctl add) switches the file to WAL",
          ),
    );
    const problems = q.integrityProblems;
    out.push(
      problems === null
        ? check(
            "integrity",
            "fail",
            `integrity check could not run: ${q.openError}`,
            "copy the file aside and inspect it with sqlite3",
          )
        : problems.length === 0
          ? check("integrity", "pass", "integrity_check ok")
          : check(
              "integrity",
              "fail",
              `integrity_check: ${problems.slice(0, 3).join("; ")}`,
              "stop the workers, back up the file, and restore or rebuild the queue (sqlite3 .recover)",
            ),
    );
    const v = q.schemaVersion;
    const want = q.supportedSchemaVersion;
    out.push(
      v === null
        ? check("schema_version", "fail", "schema version unreadable", "pass another --db")
        : v === want
          ? check("schema_version", "pass", `schema version ${v}`)
          : v > want
            ? check(
                "schema_version",
                "fail",
                `schema version ${v} is newer than this spoolctl understands (${want})`,
                "upgrade spoolctl: bunx spoolctl@latest",
              )
            : v === 0 && q.foreignTables.length > 0
              ? check(
                  "schema_version",
                  "fail",
                  `not a spoolctl queue (tables: ${q.foreignTables.slice(0, 5).join(", ")})`,
                  "pass the path of a spoolctl queue with --db",
                )
              : check(
                  "schema_version",
                  "warn",
                  `schema version ${v}; the next spoolctl write migrates it to ${want}`,
                  "run any write verb, e.g. spoolctl work --once",
                ),
    );
  }
  const dir = writableOrCreatable(dirname(path));
  const where = (p: string, at: string) =>
    at === p ? `${at} is writable` : `${p} does not exist yet; ${at} is writable`;
  out.push(
    dir.ok
      ? check("db_dir_writable", "pass", where(dirname(path), dir.at))
      : check(
          "db_dir_writable",
          "fail",
          `${dir.at} is not writable (SQLite needs it for the WAL)`,
          "fix the folder's permissions, or pass --db in a writable folder",
        ),
  );
  return out;
}
