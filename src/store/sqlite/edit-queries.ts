/**
 * The SQLite statements of `hold`, `release` and `edit` (docs/architecture.md
 * "Holding a job", "Editing a job"): each one statement guarded by
 * `state = 'queued'`, so a job a claim took meanwhile is left alone.
 */
import type { Database } from "bun:sqlite";
import type { Job, JobEdit } from "../../model/job.ts";
import { toJob } from "./rows.ts";

type Row = Record<string, unknown>;

/** Sets `held` on each of `jobIds` still queued whose flag differs; returns their ids, ascending. */
export function setHeld(db: Database, jobIds: number[], held: boolean): number[] {
  const flag = held ? 1 : 0;
  const rows = db
    .query(
      `UPDATE jobs SET held = ?1
       WHERE id IN (SELECT value FROM json_each(?2)) AND state = 'queued' AND held <> ?1 RETURNING id`,
    )
    .all(flag, JSON.stringify(jobIds)) as { id: number }[];
  return rows.map((r) => r.id).sort((a, b) => a - b);
}

/** The columns `edit` may set, with how each value is stored. */
const EDIT_COLUMNS: Record<keyof JobEdit, (v: unknown) => string | number | null> = {
  argv: (v) => JSON.stringify(v),
  env: (v) => JSON.stringify(v),
  cwd: (v) => v as string | null,
  queue: (v) => v as string,
  priority: (v) => v as number,
  timeout_seconds: (v) => v as number,
  max_retries: (v) => v as number,
  next_run_at: (v) => v as number,
};

/** Applies `edit` to job `jobId` if it is still queued; the row as written, or null. */
export function editQueuedJob(db: Database, jobId: number, edit: JobEdit): Job | null {
  const keys = (Object.keys(EDIT_COLUMNS) as (keyof JobEdit)[]).filter((k) => edit[k] !== undefined);
  const sets = keys.map((k) => `${k} = ?`);
  const params = keys.map((k) => EDIT_COLUMNS[k](edit[k]));
  // Nothing to set still checks the guard, so "no longer queued" reads the same either way.
  const sql = `UPDATE jobs SET ${sets.length ? sets.join(", ") : "id = id"} WHERE id = ? AND state = 'queued' RETURNING *`;
  const row = db.query(sql).get(...params, jobId) as Row | null;
  return row ? toJob(row) : null;
}
