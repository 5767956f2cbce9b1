/**
 * Rows as the model's shapes, equal to what the SQLite driver returns. Bun's
 * client returns int8 (`bigint` ids, `count(*)`) as strings and numeric as
 * strings: every such column is turned into a number here (ids stay below
 * 2^53), and the SQL casts counts and epochs to int/float8 where it can.
 */
import type { Attempt, Job, JobEvent, WorkerRecord } from "../../model/job.ts";

type Row = Record<string, unknown>;

const num = (v: unknown): number => (typeof v === "number" ? v : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));

/** A `jobs` row as a {@link Job}: JSON columns parsed, id a number (column order kept). */
export function toJob(row: Row): Job {
  return {
    ...(row as unknown as Job),
    id: num(row.id),
    argv: JSON.parse(row.argv as string),
    tags: JSON.parse(row.tags as string),
    env: JSON.parse(row.env as string),
    cancel_requested: row.cancel_requested === true,
    held: row.held === true,
    trace: typeof row.trace === "string" ? JSON.parse(row.trace) : null,
  };
}

/** An `attempts` row. */
export function toAttempt(row: Row): Attempt {
  return { ...(row as unknown as Attempt), job_id: num(row.job_id) };
}

/** A `job_events` row. */
export function toEvent(row: Row): JobEvent {
  return { ...(row as unknown as JobEvent), id: num(row.id), job_id: num(row.job_id) };
}

/** A `workers` row. */
export function toWorker(row: Row): WorkerRecord {
  return { ...(row as unknown as WorkerRecord), stop_requested: row.stop_requested === true };
}

export { num, numOrNull };
