/**
 * SQLite rows as the store's model types (docs/architecture.md "The driver
 * contract"): JSON columns parsed, 0/1 integers as booleans. Shared by the
 * driver's query modules, as src/store/postgres/rows.ts is by PostgreSQL's.
 */
import type { Job, WorkerRecord } from "../../model/job.ts";

type Row = Record<string, unknown>;

/** A `jobs` row as a {@link Job} (JSON columns parsed). */
export function toJob(row: Row): Job {
  return {
    ...(row as unknown as Job),
    argv: JSON.parse(row.argv as string),
    tags: JSON.parse(row.tags as string),
    env: JSON.parse(row.env as string),
    cancel_requested: row.cancel_requested === 1,
    held: row.held === 1,
    trace: typeof row.trace === "string" ? JSON.parse(row.trace) : null,
  };
}

/** A `workers` row as a {@link WorkerRecord} (`stop_requested` as a boolean). */
export function toWorker(row: Row): WorkerRecord {
  return { ...(row as unknown as WorkerRecord), stop_requested: row.stop_requested === 1 };
}
