/**
 * The batch statements of the SQLite driver (docs/architecture.md "The
 * operations", "Retry", "Cancel"): `retry --all` and `cancel` of many jobs act
 * in SQL, the guard and the filter in the UPDATE's WHERE and the rows changed
 * read back with RETURNING, instead of reading every job first. Each function
 * runs inside the caller's write transaction (`BEGIN IMMEDIATE`).
 */
import type { Database } from "bun:sqlite";
import type { Job, JobFilter, JobState } from "../../model/job.ts";
import { lostNeed, type RetryNeedRow } from "../bulk-rows.ts";
import { activeKeyTaken } from "../writer.ts";
import { jobWhere } from "./job-filter.ts";
import { toJob } from "./rows.ts";

type Row = Record<string, unknown>;

/** The states `retry --all` requeues from (src/ops/retry.ts `RETRYABLE_STATES`), in the order they are requeued. */
const FROM: readonly JobState[] = ["dead", "canceled"];
const RETRYABLE = "jobs.state IN ('dead','canceled')";

/**
 * The dead or canceled jobs matching `filter` that carry an idempotency key,
 * newest first: the only ones `planRetryAll` has to decide on (a job without
 * a key is always requeued). One SELECT.
 */
export function keyedRetryMatches(db: Database, filter: Omit<JobFilter, "limit">): Job[] {
  const w = jobWhere(filter);
  const sql = `SELECT * FROM jobs WHERE ${w.sql} AND ${RETRYABLE} AND jobs.idempotency_key IS NOT NULL ORDER BY id DESC`;
  return (db.query(sql).all(...w.params) as Row[]).map(toJob);
}

/**
 * The unmet needs that are dead or canceled of the dead or canceled jobs
 * matching `filter`, with whether each need matches the filter too, and a
 * `deleted` row (need null) for each such job that lost a need; by job, then
 * need, ascending. One SELECT (docs/architecture.md "Dependencies").
 */
export function retryNeedRows(db: Database, filter: Omit<JobFilter, "limit">): RetryNeedRow[] {
  const w = jobWhere(filter);
  const matching = `SELECT jobs.id FROM jobs WHERE ${w.sql} AND ${RETRYABLE}`;
  const rows = db
    .query(
      `SELECT n.job_id, n.need_id, nj.state AS need_state, nj.id IN (${matching}) AS need_matches
       FROM job_needs n JOIN jobs nj ON nj.id = n.need_id
       WHERE n.met = 0 AND nj.state IN ('dead','canceled') AND n.job_id IN (${matching})
       UNION ALL
       SELECT jobs.id, NULL, 'deleted', 0 FROM jobs WHERE ${w.sql} AND ${RETRYABLE} AND ${lostNeed()}
       ORDER BY 1, 2 NULLS FIRST`,
    )
    .all(...w.params, ...w.params, ...w.params) as (Omit<RetryNeedRow, "need_matches"> & { need_matches: number })[];
  return rows.map((r) => ({ ...r, need_matches: r.need_matches === 1 }));
}

/**
 * Requeues every job matching `filter` that is still dead or canceled, is not
 * in `exclude`, and whose key no active job holds: one UPDATE … RETURNING per
 * state left (SQLite's RETURNING gives the new row, so the state a job left is
 * the statement's), fresh budgets, due at `dueAt` (epoch seconds). Returns the
 * jobs requeued, ascending, with the state each left. Raises
 * `IDEMPOTENCY_CONFLICT` when the unique index of active keys refuses one.
 */
export function requeueMatching(
  db: Database,
  filter: Omit<JobFilter, "limit">,
  exclude: number[],
  dueAt: number,
): { id: number; from: JobState }[] {
  const w = jobWhere(filter);
  const out: { id: number; from: JobState }[] = [];
  for (const from of FROM) {
    const sql = `UPDATE jobs SET state = 'queued', attempts = 0, crashes = 0, next_run_at = ?, finished_at = NULL,
        locked_by = NULL, locked_pid = NULL, locked_at = NULL, heartbeat_at = NULL, cancel_requested = 0
      WHERE ${w.sql} AND jobs.state = ? AND jobs.id NOT IN (SELECT value FROM json_each(?))
        AND (jobs.idempotency_key IS NULL OR NOT EXISTS (SELECT 1 FROM jobs a
          WHERE a.idempotency_key = jobs.idempotency_key AND a.state IN ('queued','running')))
      RETURNING id`;
    try {
      const rows = db.query(sql).all(dueAt, ...w.params, from, JSON.stringify(exclude)) as { id: number }[];
      for (const r of rows) out.push({ id: r.id, from });
    } catch (error) {
      const refused =
        (error as { code?: string }).code === "SQLITE_CONSTRAINT_UNIQUE" &&
        /idempotency_key/.test(String((error as Error).message));
      throw refused ? activeKeyTaken(out.map((r) => r.id)) : error;
    }
  }
  return out.sort((a, b) => a.id - b.id);
}

/** Appends one `retried` ledger row per requeued job, `{"from":…}`, in the order given: one INSERT. */
export function insertRetried(db: Database, jobs: { id: number; from: JobState }[], now: number): void {
  if (jobs.length === 0) return;
  db.query(
    `INSERT INTO job_events (job_id, at, event, worker_id, detail)
     SELECT json_extract(value, '$[0]'), ?, 'retried', NULL, json_object('from', json_extract(value, '$[1]'))
     FROM json_each(?) ORDER BY key`,
  ).run(now, JSON.stringify(jobs.map((j) => [j.id, j.from])));
}

/**
 * Cancels many checked jobs in one UPDATE … RETURNING: each of `queuedIds`
 * still queued becomes `canceled` (`finished_at` = `now`), each of
 * `runningIds` still running gets `cancel_requested` (its worker reads it on
 * its next heartbeat and kills it: the running protocol is unchanged). A job
 * in neither state any more is left alone and absent from the answer.
 */
export function cancelMany(
  db: Database,
  queuedIds: number[],
  runningIds: number[],
  now: number,
): { canceled: number[]; requested: number[] } {
  const rows = db
    .query(
      `UPDATE jobs SET state = CASE WHEN state = 'queued' THEN 'canceled' ELSE state END,
         finished_at = CASE WHEN state = 'queued' THEN ?1 ELSE finished_at END,
         cancel_requested = CASE WHEN state = 'running' THEN 1 ELSE cancel_requested END
       WHERE (id IN (SELECT value FROM json_each(?2)) AND state = 'queued')
          OR (id IN (SELECT value FROM json_each(?3)) AND state = 'running')
       RETURNING id, state`,
    )
    .all(now, JSON.stringify(queuedIds), JSON.stringify(runningIds)) as { id: number; state: JobState }[];
  const ids = (state: JobState) =>
    rows
      .filter((r) => r.state === state)
      .map((r) => r.id)
      .sort((a, b) => a - b);
  return { canceled: ids("canceled"), requested: ids("running") };
}
