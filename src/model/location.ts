/**
 * The names of a queue's location (docs/architecture.md "Location"): where a
 * database path can come from, the project config file and its keys, and the
 * report of where the queue is and why (`config`, `doctor`). Plain data; the
 * reading and resolving is the store's (src/store/location.ts).
 */

/** Where the database path came from. */
export type DbPathSource = "flag" | "env" | "config" | "default";

/** A project config file is read no further than this (bytes); published in `capabilities` limits. */
export const CONFIG_FILE_MAX_BYTES = 1024 * 1024;

/** The project config file, relative to the folder holding `.spoolctl/`. */
export const CONFIG_FILE = ".spoolctl/config.json";

/** Keys `.spoolctl/config.json` understands. */
export const CONFIG_KEYS = ["db_path"] as const;

/** The database path precedence, highest first (docs/architecture.md "Location"). */
export const DB_PATH_PRECEDENCE = ["flag", "environment", "project_config", "default"] as const;

/** Where the queue is and why. `db_path` is null when the project config is broken and nothing overrides it. */
export interface LocationReport {
  config_path: string;
  config_exists: boolean;
  config_valid: boolean;
  config_problem: string | null;
  ignored_keys: string[];
  db_path: string | null;
  db_source: (typeof DB_PATH_PRECEDENCE)[number] | null;
  spool_dir: string | null;
  precedence: (typeof DB_PATH_PRECEDENCE)[number][];
}
