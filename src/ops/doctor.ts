/**
 * `doctor` (docs/architecture.md "The driver contract"): read-only readiness checks — project config, database
 * opens, WAL on, integrity, schema version, folders writable, Bun version —
 * each with a remediation. Nothing is created, migrated or repaired.
 */
import pkg from "../../package.json" with { type: "json" };
import { CONTRACT_VERSION } from "../contract/envelope.ts";
import { TOOL_VERSION } from "../contract/version.ts";
import type { DoctorCheck, DoctorData } from "../describe/schemas-operator.ts";
import type { LocationReport } from "../model/location.ts";
import type { DiskSpace, StoreCheck } from "../model/storage.ts";
import { SOURCE_WORDS } from "./location-words.ts";
import { counted } from "./values.ts";
import type { WorkerHealth } from "./worker-health.ts";

/** One check's verdict. */
type CheckStatus = DoctorCheck["status"];

// Defined once, as the JSON Schemas `spoolctl schema` prints.
export type { DoctorData };

function check(
  id: string,
  status: CheckStatus,
  message: string,
  remediation: string | null = null,
  blocked_by: string | null = null,
): DoctorCheck {
  return { id, status, message, remediation, blocked_by };
}

/** `a >= b` for dotted versions. */
function versionAtLeast(a: string, b: string): boolean {
  const pa = a.split(/[.-]/).map((x) => Number.parseInt(x, 10) || 0);
  const pb = b.split(/[.-]/).map((x) => Number.parseInt(x, 10) || 0);
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) > (pb[i] ?? 0);
  return true;
}

/** Each `db_source` in words, as the other verbs' errors say it (src/ops/location-words.ts). */
function sourceWords(loc: LocationReport): string {
  if (loc.db_source === "flag") return SOURCE_WORDS.flag;
  if (loc.db_source === "environment") return SOURCE_WORDS.env;
  if (loc.db_source === "project_config") return `db_path of ${loc.config_path}`;
  return SOURCE_WORDS.default;
}

/** A failed `db_opens` that could not reach or log into the database also says where its location came from. */
function failedOpenText(message: string, loc: LocationReport): string {
  if (!/^(cannot reach|PostgreSQL refused the login|the database of )/.test(message)) return message;
  const at = `at ${loc.db_path}`;
  const words = `(${sourceWords(loc)})`;
  return message.includes(at) ? message.replace(at, `${at} ${words}`) : `${message} ${words}`;
}

/**
 * The database's checks (from its driver, read-only) and the spool folder's,
 * read through `probes` (see {@link DoctorProbes}).
 */
async function databaseChecks(loc: LocationReport, probes: DoctorProbes): Promise<DoctorCheck[]> {
  if (loc.db_path === null) {
    return ["db_opens", "wal", "integrity", "schema_version", "db_dir_writable", "spool_writable"].map((id) =>
      check(id, "skip", "no database path", null, "config"),
    );
  }
  const out: DoctorCheck[] = [];
  for (const c of await probes.diagnose(loc.db_path)) {
    const blocked =
      c.status === "skip" ? (out.find((o) => o.id === "db_opens" && o.status === "fail") ? "db_opens" : null) : null;
    out.push(
      check(
        c.id,
        c.status,
        c.id === "db_opens" && c.status === "pass"
          ? `${c.message} (source: ${loc.db_source})`
          : c.id === "db_opens" && c.status === "fail"
            ? failedOpenText(c.message, loc)
            : c.message,
        c.remediation,
        blocked,
      ),
    );
  }
  const spool = probes.writable(loc.spool_dir!);
  const where = (path: string, at: string) =>
    at === path ? `${at} is writable` : `${path} does not exist yet; ${at} is writable`;
  out.push(
    spool.ok
      ? check("spool_writable", "pass", where(loc.spool_dir!, spool.at))
      : check(
          "spool_writable",
          "fail",
          `${spool.at} is not writable (job output goes there)`,
          `fix the permissions of ${spool.at}`,
        ),
  );
  out.push(diskSpaceCheck(loc.db_path, probes.disks(loc.db_path, loc.spool_dir!)));
  return out;
}

/**
 * `disk_space`: whether the disks of the database's folder (SQLite) and the
 * spool have room; a full one fails, because workers pause claiming until
 * space is freed (docs/architecture.md "Storage conditions").
 */
function diskSpaceCheck(dbPath: string, disks: DiskSpace[]): DoctorCheck {
  const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;
  const full = disks.filter((d) => d.full);
  if (full.length > 0) {
    return check(
      "disk_space",
      "fail",
      `${full.map((d) => `the ${d.role} disk (${d.path}) is full: ${mib(d.freeBytes)} free`).join("; ")}; workers pause claiming, and results wait to be written`,
      `free space on that disk (old output: spoolctl prune --older-than 7d --yes${dbPath && !dbPath.includes("://") ? ` --db ${dbPath}` : ""}); workers carry on by themselves`,
    );
  }
  return check(
    "disk_space",
    "pass",
    disks.map((d) => `${d.role} disk ${mib(d.freeBytes)} free`).join(", ") || "free space unknown",
  );
}

/**
 * What `doctor` reads of the queue and this host, passed in by the command
 * (the store's functions) so that this module does no I/O and knows no driver.
 */
export interface DoctorProbes {
  /** The driver's read-only checks of the queue at a location (a path or URL): the store's `diagnoseQueue`. */
  diagnose(dbPath: string): Promise<StoreCheck[]>;
  /** Whether folder `dir` is writable or can be created; `at` is the nearest existing folder that decided it. */
  writable(dir: string): { ok: boolean; at: string };
  /** The disks on this host that the queue at `dbPath` (path or URL) with spool `spoolDir` writes to. */
  disks(dbPath: string, spoolDir: string): DiskSpace[];
}

/**
 * Runs every check (docs/architecture.md "The driver contract") of the queue
 * at `loc` (the store's `describeLocation`); nothing is created, migrated or changed.
 */
export async function runDoctor(loc: LocationReport, probes: DoctorProbes, schemaVersion: number): Promise<DoctorData> {
  const checks: DoctorCheck[] = [];
  checks.push(
    !loc.config_exists
      ? check("config", "pass", `no project config at ${loc.config_path} (defaults apply)`)
      : loc.config_valid
        ? check(
            "config",
            "pass",
            `${loc.config_path} is valid${loc.ignored_keys.length ? `; unknown keys ignored: ${loc.ignored_keys.join(", ")}` : ""}`,
          )
        : check(
            "config",
            loc.db_path === null ? "fail" : "warn",
            `${loc.config_path}: ${loc.config_problem}`,
            `fix ${loc.config_path} (spoolctl config validate), or pass --db PATH`,
          ),
  );
  checks.push(...(await databaseChecks(loc, probes)));
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
    config: {
      config_exists: loc.config_exists,
      config_path: loc.config_path,
      config_valid: loc.config_valid,
      db_path: loc.db_path,
      db_source: loc.db_source,
    },
    versions: {
      contract_version: CONTRACT_VERSION,
      schema_version: schemaVersion,
      tool_version: TOOL_VERSION,
      bun_version: Bun.version,
    },
  };
}

/**
 * The `running_jobs` check (docs/architecture.md "Dead workers in the views"):
 * a warning naming the running jobs whose worker is dead, whose lease expired
 * or that stopped heartbeating, with what will happen; `liveWorkers` says
 * whether a worker is there to reap them. Added to `data`, whose summary is
 * recounted (a warning never makes the queue not ready).
 */
export function addStrandedCheck(
  data: DoctorData,
  stranded: WorkerHealth[],
  liveWorkers: number,
  dbFlag: string | undefined,
): void {
  const c =
    stranded.length === 0
      ? check("running_jobs", "pass", "every running job's worker is alive and heartbeating")
      : check(
          "running_jobs",
          "warn",
          `${counted(stranded.length, "running job")} whose worker is gone: ${stranded
            .slice(0, 5)
            .map((h) => `job ${h.job_id} (${h.fate})`)
            .join("; ")}${stranded.length > 5 ? "; …" : ""}`,
          stranded.some((h) => h.worker_state === "dead" || h.worker_state === "lease_expired")
            ? liveWorkers === 0
              ? `no worker is running to reap them: start one (spoolctl work${dbFlag ? ` --db ${dbFlag}` : ""}), or cancel them (spoolctl cancel ID --running --yes)`
              : "a running worker reaps them within a heartbeat of their lease expiring"
            : "a stopped worker resumes with kill -CONT PID; spoolctl workers shows it as stale",
        );
  data.checks.push(c);
  data.summary.passed += c.status === "pass" ? 1 : 0;
  data.summary.warnings += c.status === "warn" ? 1 : 0;
}
