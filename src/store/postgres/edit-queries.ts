/**
 * The PostgreSQL statements of `hold`, `release` and `edit` (docs/architecture.md
 * "Holding a job", "Editing a job"), the SQLite driver's (src/store/sqlite/edit-queries.ts)
 * statement for statement: each guarded by `state = 'queued'`. Under READ
 * COMMITTED an UPDATE that meets a row a claim locked waits for it and
 * re-checks the guard on the claimed row, which then fails: the job is left alone.
 */
import type { SQL } from "bun";
import type { Job, JobEdit } from "../../model/job.ts";
import { num, toJob } from "./rows.ts";

/** Sets `held` on each of `jobIds` still queued whose flag differs; returns their ids, ascending. */
export async function setHeld(tx: SQL, jobIds: number[], held: boolean): Promise<number[]> {
  const rows = (await tx`UPDATE jobs SET held = ${held}
    WHERE id = ANY(${jobIds}::bigint[]) AND state = 'queued' AND held <> ${held} RETURNING id`) as { id: unknown }[];
  return rows.map((r) => num(r.id)).sort((a, b) => a - b);
}

/** The columns `edit` may set, with the cast of each value. */
const EDIT_COLUMNS: Record<keyof JobEdit, { cast: string; value: (v: unknown) => unknown }> = {
  argv: { cast: "text", value: (v) => JSON.stringify(v) },
  env: { cast: "text", value: (v) => JSON.stringify(v) },
  cwd: { cast: "text", value: (v) => v },
  queue: { cast: "text", value: (v) => v },
  priority: { cast: "int", value: (v) => v },
  timeout_seconds: { cast: "float8", value: (v) => v },
  max_retries: { cast: "int", value: (v) => v },
  next_run_at: { cast: "float8", value: (v) => v },
};

/** Applies `edit` to job `jobId` if it is still queued; the row as written, or null. */
export async function editQueuedJob(tx: SQL, jobId: number, edit: JobEdit): Promise<Job | null> {
  const keys = (Object.keys(EDIT_COLUMNS) as (keyof JobEdit)[]).filter((k) => edit[k] !== undefined);
  const sets = keys.map((k, i) => `${k} = $${i + 1}::${EDIT_COLUMNS[k].cast}`);
  const params = keys.map((k) => EDIT_COLUMNS[k].value(edit[k]));
  const sql = `UPDATE jobs SET ${sets.length ? sets.join(", ") : "id = id"}
    WHERE id = $${keys.length + 1}::bigint AND state = 'queued' RETURNING *`;
  const [row] = await tx.unsafe(sql, [...params, jobId]);
  return row ? toJob(row) : null;
}
