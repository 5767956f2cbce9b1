/**
 * Where the queue lives (SPEC §4 "Database path"): `--db` > `SPOOLCTL_DB` >
 * `db_path` in `.spoolctl/config.json` (relative to that file) > `./.spoolctl/queue.db`.
 */
import { existsSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { SpoolError } from "../contract/errors.ts";
import { formatBytes, readBounded } from "./read-bounded.ts";

/** Where the database path came from. */
export type DbPathSource = "flag" | "env" | "config" | "default";

/** A resolved location: database file and its spool folder, both absolute. */
export interface QueueLocation {
  dbPath: string;
  spoolDir: string;
  source: DbPathSource;
}

/** A project config file is read no further than this (bytes); published in `capabilities` limits. */
export const CONFIG_FILE_MAX_BYTES = 1024 * 1024;

/** The project config file, relative to the working directory. */
export const CONFIG_FILE = ".spoolctl/config.json";

/**
 * The spool folder of a database: beside it, named after it
 * (`queue.db` → `queue.spool/`), so two queues in one folder never share one.
 */
export function spoolDirFor(dbPath: string): string {
  const name = basename(dbPath).replace(/\.(db|sqlite3?)$/i, "");
  return join(dirname(dbPath), `${name}.spool`);
}

/** Keys `.spoolctl/config.json` understands. */
export const CONFIG_KEYS = ["db_path"] as const;

/** What a project config file holds, or why it is unusable. */
export interface ProjectConfig {
  /** Absolute path of the file. */
  path: string;
  exists: boolean;
  /** False when the file exists but is not a JSON object with valid known keys. */
  valid: boolean;
  /** Why it is invalid, or null. */
  problem: string | null;
  /** `db_path`, resolved against the file's folder, or null when absent. */
  dbPath: string | null;
  /** Keys present in the file that spoolctl does not know (ignored). */
  unknownKeys: string[];
}

/** Reads and checks a project config file; never throws. */
export function readProjectConfig(file: string): ProjectConfig {
  const out: ProjectConfig = { path: file, exists: existsSync(file), valid: true, problem: null, dbPath: null, unknownKeys: [] };
  if (!out.exists) return out;
  const fail = (problem: string): ProjectConfig => ({ ...out, valid: false, problem });
  let parsed: unknown;
  try {
    // Capped: `config validate /dev/zero` must not read for ever.
    const read = readBounded(file, CONFIG_FILE_MAX_BYTES);
    if (read.tooLarge) return fail(`larger than ${formatBytes(CONFIG_FILE_MAX_BYTES)}, the limit for a config file`);
    parsed = JSON.parse(read.bytes.toString("utf8"));
  } catch (error) {
    return fail(`not valid JSON: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return fail("expected a JSON object");
  out.unknownKeys = Object.keys(parsed).filter((k) => !(CONFIG_KEYS as readonly string[]).includes(k));
  const dbPath = (parsed as { db_path?: unknown }).db_path;
  if (dbPath === undefined) return out;
  if (typeof dbPath !== "string" || dbPath === "") return fail("db_path must be a non-empty string");
  return { ...out, dbPath: resolve(dirname(file), dbPath) };
}

function fromConfig(cwd: string): string | null {
  const config = readProjectConfig(join(cwd, CONFIG_FILE));
  if (!config.valid) {
    throw new SpoolError("INVALID_INPUT", `${config.path}: ${config.problem}`, { remediation: `fix ${config.path}, or pass --db PATH` });
  }
  return config.dbPath;
}

/**
 * Resolves the queue location.
 * @param flag the `--db` value, if given.
 * Raises `INVALID_INPUT` for an empty path or a broken config file.
 */
export function resolveLocation(flag: string | undefined, env = process.env, cwd = process.cwd()): QueueLocation {
  let dbPath: string;
  let source: DbPathSource;
  if (flag !== undefined) {
    if (flag === "") throw new SpoolError("INVALID_INPUT", "--db needs a path", { remediation: "write --db PATH" });
    dbPath = resolve(cwd, flag);
    source = "flag";
  } else if (env.SPOOLCTL_DB) {
    dbPath = resolve(cwd, env.SPOOLCTL_DB);
    source = "env";
  } else {
    const configured = fromConfig(cwd);
    dbPath = configured ?? resolve(cwd, ".spoolctl/queue.db");
    source = configured ? "config" : "default";
  }
  return { dbPath, spoolDir: spoolDirFor(dbPath), source };
}
