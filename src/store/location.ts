/**
 * Where the queue lives (SPEC §4 "Database path"): `--db` > `SPOOLCTL_DB` >
 * `db_path` in `.spoolctl/config.json` (relative to that file) > `./.spoolctl/queue.db`.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { SpoolError } from "../contract/errors.ts";

/** Where the database path came from. */
export type DbPathSource = "flag" | "env" | "config" | "default";

/** A resolved location: database file and its spool folder, both absolute. */
export interface QueueLocation {
  dbPath: string;
  spoolDir: string;
  source: DbPathSource;
}

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

function fromConfig(cwd: string): string | null {
  const file = join(cwd, CONFIG_FILE);
  if (!existsSync(file)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new SpoolError("INVALID_INPUT", `${file} is not valid JSON: ${(error as Error).message}`, {
      remediation: `fix ${file}, or pass --db PATH`,
    });
  }
  const dbPath = (parsed as { db_path?: unknown })?.db_path;
  if (dbPath === undefined) return null;
  if (typeof dbPath !== "string" || dbPath === "") {
    throw new SpoolError("INVALID_INPUT", `${file}: db_path must be a non-empty string`, { remediation: `fix ${file}, or pass --db PATH` });
  }
  return resolve(dirname(file), dbPath);
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
