/**
 * Opening a queue by location. The SQLite driver is the only one today; this is
 * the seam where a PostgreSQL driver (SPEC §10) will be chosen.
 */
import type { QueueLocation } from "./location.ts";
import { inspectSqliteQueue, type QueueInspection } from "./sqlite/inspect.ts";
import { openSqliteStore } from "./sqlite/open.ts";
import type { Store } from "./store.ts";

export type { Store, StoreReader, StoreWriter } from "./store.ts";
export type { QueueInspection } from "./sqlite/inspect.ts";
/** The schema version this binary writes (SPEC §3 `meta`). */
export { SCHEMA_VERSION } from "./sqlite/migrations.ts";

/**
 * Opens the queue at `location`. With `create: false` a missing file reads as
 * an empty queue and nothing is created; with `readOnly` (verbs that never
 * write) the file is opened read-only. Errors: see {@link openSqliteStore}.
 */
export function openQueue(location: QueueLocation, opts: { create: boolean; readOnly?: boolean }): Store {
  return openSqliteStore({ path: location.dbPath, spoolDir: location.spoolDir, create: opts.create, readOnly: opts.readOnly });
}

/** Inspects the queue file read-only for `doctor`: nothing is created, migrated or changed. */
export function inspectQueue(location: QueueLocation): QueueInspection {
  return inspectSqliteQueue(location.dbPath);
}
