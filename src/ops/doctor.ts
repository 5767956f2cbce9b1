/**
 * `doctor` (SPEC §5): read-only readiness checks — project config, database
 * opens, WAL on, integrity, schema version, folders writable, Bun version —
 * each with a remediation. Nothing is created, migrated or repaired.
 */
import { accessSync, constants, existsSync } from "node:fs";
import { dirname } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { CONTRACT_VERSION } from "../contract/envelope.ts";
import { TOOL_VERSION } from "../contract/version.ts";
import type { QueueInspection } from "../store/index.ts";
import { describeLocation, type LocationReport } from "./config.ts";

/** One check's verdict. */
export type CheckStatus = "pass" | "warn" | "fail" | "skip";

/** One check. `blocked_by` names the failed check that made this one skip. */
export interface DoctorCheck {
  id: string;
  status: CheckStatus;
  message: string;
  remediation: string | null;
  blocked_by: string | null;
}

/** `doctor --json` data. `ready` is false when any check failed. */
export interface DoctorData {
  ready: boolean;
  checks: DoctorCheck[];
  summary: { passed: number; warnings: number; failed: number; skipped: number };
  config: { config_exists: boolean; config_path: string | null; config_valid: boolean; db_path: string | null; db_source: LocationReport["db_source"] };
  versions: { contract_version: string; schema_version: number; tool_version: string; bun_version: string };
}

function check(id: string, status: CheckStatus, message: string, remediation: string | null = null, blocked_by: string | null = null): DoctorCheck {
  return { id, status, message, remediation, blocked_by };
}

/** Whether `path`, or its nearest existing ancestor when it does not exist yet, is writable. */
function writableOrCreatable(path: string): { ok: boolean; at: string } {
  let at = path;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  try {
    accessSync(at, constants.W_OK);
    return { ok: true, at };
  } catch {
    return { ok: false, at };
  }
}

/** `a >= b` for dotted versions. */
export function versionAtLeast(a: string, b: string): boolean {
  const pa = a.split(/[.-]/).map((x) => Number.parseInt(x, 10) || 0);
  const pb = b.split(/[.-]/).map((x) => Number.parseInt(x, 10) || 0);
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) > (pb[i] ?? 0);
  return true;
}

function databaseChecks(loc: LocationReport, inspect: (dbPath: string) => QueueInspection): DoctorCheck[] {
  if (loc.db_path === null) {
    return ["db_opens", "wal", "integrity", "schema_version", "db_dir_writable", "spool_writable"].map((id) => check(id, "skip", "no database path", null, "config"));
  }
  const out: DoctorCheck[] = [];
  const q = inspect(loc.db_path);
  if (!q.exists) {
    out.push(check("db_opens", "pass", `${loc.db_path} does not exist yet; the first write (spoolctl add) creates it`));
    for (const id of ["wal", "integrity", "schema_version"]) out.push(check(id, "skip", "no database file yet", null, null));
  } else if (!q.opened) {
    out.push(check("db_opens", "fail", `cannot open ${loc.db_path}: ${q.openError}`, "check that the path is a readable SQLite file, or pass another --db"));
    for (const id of ["wal", "integrity", "schema_version"]) out.push(check(id, "skip", "the database did not open", null, "db_opens"));
  } else {
    out.push(check("db_opens", "pass", `opened ${loc.db_path} (source: ${loc.db_source})`));
    out.push(
      q.journalMode === "wal"
        ? check("wal", "pass", "journal_mode is wal")
        : check("wal", "warn", `journal_mode is ${q.journalMode}, not wal`, "any spoolctl write (e.g. spoolctl add) switches the file to WAL"),
    );
    const problems = q.integrityProblems;
    out.push(
      problems === null ? check("integrity", "fail", `integrity check could not run: ${q.openError}`, "copy the file aside and inspect it with sqlite3")
      : problems.length === 0 ? check("integrity", "pass", "integrity_check ok")
      : check("integrity", "fail", `integrity_check: ${problems.slice(0, 3).join("; ")}`, "stop the workers, back up the file, and restore or rebuild the queue (sqlite3 .recover)"),
    );
    const v = q.schemaVersion;
    const want = q.supportedSchemaVersion;
    out.push(
      v === null ? check("schema_version", "fail", "schema version unreadable", "pass another --db")
      : v === want ? check("schema_version", "pass", `schema version ${v}`)
      : v > want ? check("schema_version", "fail", `schema version ${v} is newer than this spoolctl understands (${want})`, "upgrade spoolctl: bunx spoolctl@latest")
      : v === 0 && q.foreignTables.length > 0 ? check("schema_version", "fail", `not a spoolctl queue (tables: ${q.foreignTables.slice(0, 5).join(", ")})`, "pass the path of a spoolctl queue with --db")
      : check("schema_version", "warn", `schema version ${v}; the next spoolctl write migrates it to ${want}`, "run any write verb, e.g. spoolctl work --once"),
    );
  }
  const dir = writableOrCreatable(dirname(loc.db_path));
  const where = (path: string, at: string) => (at === path ? `${at} is writable` : `${path} does not exist yet; ${at} is writable`);
  out.push(dir.ok ? check("db_dir_writable", "pass", where(dirname(loc.db_path), dir.at)) : check("db_dir_writable", "fail", `${dir.at} is not writable (SQLite needs it for the WAL)`, "fix the folder's permissions, or pass --db in a writable folder"));
  const spool = writableOrCreatable(loc.spool_dir!);
  out.push(spool.ok ? check("spool_writable", "pass", where(loc.spool_dir!, spool.at)) : check("spool_writable", "fail", `${spool.at} is not writable (job output goes there)`, `fix the permissions of ${spool.at}`));
  return out;
}

/**
 * Runs every check. `inspect` is the store's read-only inspection
 * (`inspectQueue`), passed in so that this module stays free of drivers.
 */
export function runDoctor(dbFlag: string | undefined, inspect: (dbPath: string) => QueueInspection, schemaVersion: number): DoctorData {
  const loc = describeLocation(dbFlag);
  const checks: DoctorCheck[] = [];
  checks.push(
    !loc.config_exists ? check("config", "pass", `no project config at ${loc.config_path} (defaults apply)`)
    : loc.config_valid ? check("config", "pass", `${loc.config_path} is valid${loc.ignored_keys.length ? `; unknown keys ignored: ${loc.ignored_keys.join(", ")}` : ""}`)
    : check("config", loc.db_path === null ? "fail" : "warn", `${loc.config_path}: ${loc.config_problem}`, `fix ${loc.config_path} (spoolctl config validate), or pass --db PATH`),
  );
  checks.push(...databaseChecks(loc, inspect));
  const wantBun = String(pkg.engines?.bun ?? ">=0").replace(/^[^\d]*/, "");
  checks.push(
    versionAtLeast(Bun.version, wantBun)
      ? check("bun_version", "pass", `Bun ${Bun.version} (needs ${wantBun} or newer)`)
      : check("bun_version", "fail", `Bun ${Bun.version} is older than ${wantBun}`, "upgrade Bun: bun upgrade"),
  );
  const count = (s: CheckStatus) => checks.filter((c) => c.status === s).length;
  return {
    ready: count("fail") === 0,
    checks,
    summary: { passed: count("pass"), warnings: count("warn"), failed: count("fail"), skipped: count("skip") },
    config: { config_exists: loc.config_exists, config_path: loc.config_path, config_valid: loc.config_valid, db_path: loc.db_path, db_source: loc.db_source },
    versions: { contract_version: CONTRACT_VERSION, schema_version: schemaVersion, tool_version: TOOL_VERSION, bun_version: Bun.version },
  };
}
