/**
 * The batch statements of the PostgreSQL driver (docs/architecture.md "The
 * operations", "Retry", "Cancel"), as the SQLite driver's bulk.ts: `retry
 * --all` and `cancel` of many jobs act in SQL, the guard and the filter in the
 * UPDATE's WHERE and the rows changed read back with RETURNING. Under READ
 * COMMITTED an UPDATE re-checks its WHERE on the newest version of a row
 * another transaction changed meanwhile, so a job that left the guarded state
 * between this transaction's reads and its UPDATE is left alone.
 */
import type { SQL } from "bun";
import type { Job, JobFilter, JobState } from "../../model/job.ts";
import { lostNeed, type RetryNeedRow } from "../bulk-rows.ts";
import { activeKeyTaken } from "../writer.ts";
import { isActiveKeyViolation } from "./errors.ts";
import { jobWhere } from "./job-filter.ts";
import { toJob } from "./rows.ts";

type Row = Record<string, unknown>;

/** The states `retry --all` requeues from (src/ops/retry.ts `RETRYABLE_STATES`), in the order they are requeued. */
const FROM: readonly JobState[] = ["dead", "canceled"];
const RETRYABLE = "jobs.state IN ('dead','canceled')";

/** Positional parameters for `tx.unsafe`: `p(v)` adds one and returns its placeholder. */
function paramList(): { params: unknown[]; p: (v: unknown) => string } {
  const params: unknown[] = [];
  return {
    params,
    p: (v) => {
      params.push(v);
      return `$${params.length}`;
    },
  };
}

/** The dead or canceled jobs matching `filter` that carry an idempotency key, newest first (see the SQLite driver's). */
export async function keyedRetryMatches(tx: SQL, filter: Omit<JobFilter, "limit">): Promise<Job[]> {
  const { params, p } = paramList();
  const sql = `SELECT * FROM jobs WHERE ${jobWhere(filter, p)} AND ${RETRYABLE}
    AND jobs.idempotency_key IS NOT NULL ORDER BY id DESC`;
  return ((await tx.unsafe(sql, params)) as Row[]).map(toJob);
}

/** The dead or canceled unmet needs of the jobs `retry --all` matches (see the SQLite driver's). */
export async function retryNeedRows(tx: SQL, filter: Omit<JobFilter, "limit">): Promise<RetryNeedRow[]> {
  const { params, p } = paramList();
  const needMatches = `SELECT jobs.id FROM jobs WHERE ${jobWhere(filter, p)} AND ${RETRYABLE}`;
  const dependents = `SELECT jobs.id FROM jobs WHERE ${jobWhere(filter, p)} AND ${RETRYABLE}`;
  const losers = `SELECT jobs.id FROM jobs WHERE ${jobWhere(filter, p)} AND ${RETRYABLE} AND ${lostNeed()}`;
  const rows = (await tx.unsafe(
    `SELECT n.job_id, n.need_id, nj.state AS need_state, nj.id IN (${needMatches}) AS need_matches
     FROM job_needs n JOIN jobs nj ON nj.id = n.need_id
     WHERE NOT n.met AND nj.state IN ('dead','canceled') AND n.job_id IN (${dependents})
     UNION ALL
     SELECT l.id, NULL, 'deleted', false FROM (${losers}) l
     ORDER BY 1, 2 NULLS FIRST`,
    params,
  )) as Row[];
  return rows.map((r) => ({
    job_id: Number(r.job_id),
    need_id: r.need_id === null ? null : Number(r.need_id),
    need_state: r.need_state as JobState | "deleted",
    need_matches: r.need_matches === true,
  }));
}

/**
 * Requeues every job matching `filter` still dead or canceled, not in
 * `exclude`, whose key no active job holds: one UPDATE … RETURNING per state
 * left, due at `dueAt` (epoch seconds); returns them ascending with the state
 * each left. Raises `IDEMPOTENCY_CONFLICT` when the unique index of active
 * keys refuses one (a job made active meanwhile by another transaction).
 */
export async function requeueMatching(
  tx: SQL,
  filter: Omit<JobFilter, "limit">,
  exclude: number[],
  dueAt: number,
): Promise<{ id: number; from: JobState }[]> {
  const out: { id: number; from: JobState }[] = [];
  for (const from of FROM) {
    const { params, p } = paramList();
    const sql = `UPDATE jobs SET state = 'queued', attempts = 0, crashes = 0, next_run_at = ${p(dueAt)}::float8,
        finished_at = NULL, locked_by = NULL, locked_pid = NULL, locked_at = NULL, heartbeat_at = NULL,
        cancel_requested = false
      WHERE ${jobWhere(filter, p)} AND jobs.state = ${p(from)} AND jobs.id <> ALL(${p(exclude)}::bigint[])
        AND (jobs.idempotency_key IS NULL OR NOT EXISTS (SELECT 1 FROM jobs a
          WHERE a.idempotency_key = jobs.idempotency_key AND a.state IN ('queued','running')))
      RETURNING id`;
    try {
      for (const r of (await tx.unsafe(sql, params)) as Row[]) out.push({ id: Number(r.id), from });
    } catch (error) {
      if (isActiveKeyViolation(error)) throw activeKeyTaken(out.map((r) => r.id));
      throw error;
    }
  }
  return out.sort((a, b) => a.id - b.id);
}

/**
 * Cancels many checked jobs in one UPDATE … RETURNING (see the SQLite
 * driver's): queued ones of `queuedIds` become `canceled`, running ones of
 * `runningIds` get `cancel_requested`; a job in neither state any more is
 * left alone and absent from the answer. `now`: epoch seconds.
 */
export async function cancelMany(
  tx: SQL,
  queuedIds: number[],
  runningIds: number[],
  now: number,
): Promise<{ canceled: number[]; requested: number[] }> {
  const rows = (await tx`UPDATE jobs SET state = CASE WHEN state = 'queued' THEN 'canceled' ELSE state END,
      finished_at = CASE WHEN state = 'queued' THEN ${now}::float8 ELSE finished_at END,
      cancel_requested = CASE WHEN state = 'running' THEN true ELSE cancel_requested END
    WHERE (id = ANY(${queuedIds}::bigint[]) AND state = 'queued')
       OR (id = ANY(${runningIds}::bigint[]) AND state = 'running')
    RETURNING id, state`) as Row[];
  const ids = (state: JobState) =>
    rows
      .filter((r) => r.state === state)
      .map((r) => Number(r.id))
      .sort((a, b) => a - b);
  return { canceled: ids("canceled"), requested: ids("running") };
}
