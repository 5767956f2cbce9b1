/**
 * Where the queue is and why (docs/architecture.md "Location"), for `config`
 * and `doctor`: the project config file, the `--db` precedence and the
 * resolved location, read without opening the queue; and `config validate`'s
 * check of a project config file. The report's shape is src/model/location.ts.
 */

import { resolve } from "node:path";
import { SpoolError } from "../contract/errors.ts";
import type { ConfigValidation } from "../describe/schemas-operator.ts";
import {
  CONFIG_FILE,
  CONFIG_KEYS,
  DB_PATH_PRECEDENCE,
  type DbPathSource,
  type LocationReport,
} from "../model/location.ts";
import { projectConfigFile, readProjectConfig, resolveLocation } from "./location.ts";

/** Source names as the contract spells them. */
const SOURCE_NAMES: Record<DbPathSource, "flag" | "environment" | "project_config" | "default"> = {
  flag: "flag",
  env: "environment",
  config: "project_config",
  default: "default",
};

/** Describes the queue location without opening it. Never throws. */
export function describeLocation(flag: string | undefined, env = process.env, cwd = process.cwd()): LocationReport {
  const config = readProjectConfig(projectConfigFile(cwd));
  const base = {
    config_path: config.path,
    config_exists: config.exists,
    config_valid: config.valid,
    config_problem: config.problem,
    ignored_keys: config.unknownKeys,
    precedence: [...DB_PATH_PRECEDENCE],
  };
  try {
    const loc = resolveLocation(flag, env, cwd);
    return { ...base, db_path: loc.dbPath, db_source: SOURCE_NAMES[loc.source], spool_dir: loc.spoolDir };
  } catch {
    return { ...base, db_path: null, db_source: null, spool_dir: null };
  }
}

/**
 * Checks a project config file without opening the queue. `path` defaults to
 * `./.spoolctl/config.json`; a missing default file is valid (nothing to
 * check). Raises `NOT_FOUND` for a named file that does not exist and
 * `INVALID_INPUT` (with the report in `detail`) for an invalid one.
 */
export function validateConfig(path: string | undefined, cwd = process.cwd()): ConfigValidation {
  const file = path === undefined ? projectConfigFile(cwd) : resolve(cwd, path);
  const config = readProjectConfig(file);
  if (!config.exists && path !== undefined) {
    throw new SpoolError("NOT_FOUND", `no config file at ${file}`, {
      remediation: `give the path of a JSON file, or run spoolctl config validate for ./${CONFIG_FILE}`,
    });
  }
  const report: ConfigValidation = {
    config_path: file,
    exists: config.exists,
    valid: config.valid,
    problem: config.problem,
    format: "json",
    schema_version: 1,
    recognized_keys: [...CONFIG_KEYS],
    unknown_keys: config.unknownKeys,
  };
  if (!config.valid) {
    throw new SpoolError("INVALID_INPUT", `${file}: ${config.problem}`, {
      remediation: `write a JSON object such as {"db_path": "queue.db"} (db_path is relative to the file's folder)`,
      detail: { ...report },
    });
  }
  return report;
}
