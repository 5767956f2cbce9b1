/**
 * The SQLite statements on the worker's hot path (docs/architecture.md "The
 * claim", "Waking", "Drain"), kept here so that read-queries.ts and
 * worker-queries.ts run them and
 * {@link explainHotPath} shows how SQLite answers each: every one must be
 * answered from an index in time independent of the backlog (the plan test in
 * test/store/plans.test.ts). Where SQLite's planner, having no statistics,
 * could pick an index that sorts the whole backlog, the index is named
 * (`INDEXED BY`); schema v6 made them all.
 */
import type { Database } from "bun:sqlite";
import type { QueryPlan } from "../store.ts";

/** Hot-path statement texts, by name. */
export const HOT_SQL = {
  /**
   * The next eligible job of a lane, in claim order; ?1 lane, ?2 now, ?3 the claimant's slots or NULL. A
   * paused lane (its pause in force at ?2) yields nothing; the lane's own slots win over ?3
   * (docs/architecture.md "Lanes and slots").
   * `needs_left = 0`: none of its needs is unmet (docs/architecture.md "Dependencies"), read from the index;
   * `held = 0`: not held by `hold` (docs/architecture.md "Holding a job"), the index's next column.
   * A SELECT, then {@link HOT_SQL.claimTake} by id, in the same `BEGIN IMMEDIATE` transaction (one writer:
   * nothing changes in between): an `UPDATE … WHERE id = (SELECT … FROM jobs …)` on the table it reads
   * cost SQLite about three times as much (docs/benchmarks.md "SQL per job").
   */
  claimNext: `SELECT id FROM jobs INDEXED BY idx_jobs_claimable
     WHERE state = 'queued' AND queue = ?1 AND needs_left = 0 AND held = 0 AND next_run_at <= ?2
       AND NOT EXISTS (SELECT 1 FROM lanes WHERE queue = ?1 AND paused_at IS NOT NULL AND (paused_until IS NULL OR paused_until > ?2))
       AND (coalesce((SELECT slots FROM lanes WHERE queue = ?1), ?3) IS NULL
         OR (SELECT count(*) FROM jobs WHERE state = 'running' AND queue = ?1) < coalesce((SELECT slots FROM lanes WHERE queue = ?1), ?3))
     ORDER BY priority DESC, next_run_at ASC, id ASC LIMIT 1`,
  /** The claim of the job {@link HOT_SQL.claimNext} picked; ?1 worker, ?2 pid, ?3 now, ?4 job id. */
  claimTake: `UPDATE jobs SET state = 'running', locked_by = ?1, locked_pid = ?2, locked_at = ?3, heartbeat_at = ?3,
       started_at = ?3, finished_at = NULL, cancel_requested = 0, last_attempt_no = last_attempt_no + 1
     WHERE id = ?4 AND state = 'queued' AND held = 0
     RETURNING *`,
  /** The lane's earliest due time: the first entry of idx_jobs_due that is not held (held jobs are skipped in the range). */
  nextDueAt:
    "SELECT next_run_at AS t FROM jobs INDEXED BY idx_jobs_due WHERE state = 'queued' AND queue = ? AND held = 0 ORDER BY next_run_at LIMIT 1",
  /**
   * What holds a drain: running jobs, due jobs (idx_jobs_due), and jobs that ran
   * before and are not yet due (idx_jobs_backoff); each an index range. A held
   * job holds no drain (docs/architecture.md "Holding a job").
   */
  drainState: `SELECT (SELECT count(*) FROM jobs WHERE state = 'running' AND queue = ?1) AS running,
      (SELECT count(*) FROM jobs INDEXED BY idx_jobs_due WHERE state = 'queued' AND queue = ?1 AND next_run_at <= ?2 AND held = 0)
      + (SELECT count(*) FROM jobs INDEXED BY idx_jobs_backoff
         WHERE state = 'queued' AND queue = ?1 AND last_attempt_no > 0 AND next_run_at > ?2 AND held = 0) AS waiting`,
  recordJob: `UPDATE jobs SET state = ?, attempts = ?, crashes = ?, next_run_at = ?, last_exit_code = ?, last_error = ?,
       finished_at = ?, locked_by = NULL, locked_pid = NULL, locked_at = NULL, heartbeat_at = NULL, cancel_requested = 0
     WHERE id = ? AND state = 'running' AND locked_by = ? AND last_attempt_no = ?
     RETURNING queue`,
  recordAttempt: `UPDATE attempts SET state = ?, finished_at = ?, exit_code = ?, signal = ?, error = ?, failure_reason = ?, stderr_last_line = ?, stderr_signature = ?,
       pgid = coalesce(pgid, ?), pgid_start_time = coalesce(pgid_start_time, ?)
     WHERE job_id = ? AND attempt_no = ? AND state = 'running'`,
  /** The process group of a running attempt, sent with the first heartbeat after the spawn. */
  attemptProcess:
    "UPDATE attempts SET pgid = ?, pgid_start_time = ? WHERE job_id = ? AND attempt_no = ? AND state = 'running'",
  /** One statement for all of a worker's attempts: ?1 now, ?2 worker, ?3 JSON [[job, attempt], …]. */
  heartbeatJobs: `UPDATE jobs SET heartbeat_at = ?1
     WHERE state = 'running' AND locked_by = ?2
       AND (id, last_attempt_no) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?3))
     RETURNING id, last_attempt_no, cancel_requested`,
  staleRunningJobs: "SELECT * FROM jobs WHERE state = 'running' AND heartbeat_at < ? ORDER BY id",
  runningJobsByWorker:
    "SELECT locked_by AS worker_id, id AS job_id FROM jobs WHERE state = 'running' AND locked_by IS NOT NULL ORDER BY id",
  getJob: "SELECT * FROM jobs WHERE id = ?",
  /** The due-slot pass's look, about once a second per worker: the first entry of idx_schedules_due. */
  earliestSlot:
    "SELECT next_slot FROM schedules INDEXED BY idx_schedules_due WHERE paused = 0 ORDER BY next_slot LIMIT 1",
  /** The hooks of an outcome and of `batch-done`, read with every job that ends (a small table). */
  hooksOn: "SELECT * FROM hooks WHERE on_outcome IN (?, 'batch-done')",
  /**
   * A result's dependents (docs/architecture.md "Dependencies"), ?1 JSON [need ids]: the edges of
   * needs that ended and are now met, by idx_job_needs_need; then the failed ones whose dependent
   * is queued. Both start from the needs' edges, never from the queued backlog.
   */
  /**
   * Whether any of ?1 JSON [need ids] has a dependent at all: one index probe, so that a job nothing
   * needs (most) costs one statement, not {@link HOT_SQL.settleMet} and {@link HOT_SQL.settleFailed}.
   */
  settleAny: `SELECT 1 FROM job_needs INDEXED BY idx_job_needs_need
     WHERE need_id IN (SELECT value FROM json_each(?1)) LIMIT 1`,
  settleMet: `UPDATE job_needs INDEXED BY idx_job_needs_need SET met = 1
     WHERE need_id IN (SELECT value FROM json_each(?1)) AND met = 0
       AND (SELECT state FROM jobs WHERE id = need_id) IN ('done','dead','canceled')
       AND (policy = 'done' OR (SELECT state FROM jobs WHERE id = need_id) = 'done')
     RETURNING job_id`,
  settleFailed: `SELECT e.job_id, e.need_id, n.state AS need_state
     FROM job_needs e INDEXED BY idx_job_needs_need CROSS JOIN jobs n CROSS JOIN jobs d
     WHERE e.need_id IN (SELECT value FROM json_each(?1)) AND n.id = e.need_id AND d.id = e.job_id
       AND e.policy = 'success' AND e.met = 0 AND n.state IN ('dead','canceled') AND d.state = 'queued'`,
} as const;

/** Sample parameters of each statement, for EXPLAIN. */
const SAMPLE: Record<keyof typeof HOT_SQL, unknown[]> = {
  claimNext: ["default", 0, 2],
  claimTake: ["w", 1, 0, 1],
  nextDueAt: ["default"],
  drainState: ["default", 0],
  recordJob: ["done", 1, 0, 0, 0, null, 0, 1, "w", 1],
  recordAttempt: ["succeeded", 0, 0, null, null, null, null, null, null, null, 1, 1],
  attemptProcess: [1, null, 1, 1],
  heartbeatJobs: [0, "w", "[[1,1]]"],
  staleRunningJobs: [0],
  runningJobsByWorker: [],
  getJob: [1],
  earliestSlot: [],
  hooksOn: ["dead"],
  settleAny: ["[1]"],
  settleMet: ["[1]"],
  settleFailed: ["[1]"],
};

/** `EXPLAIN QUERY PLAN` of every hot-path statement (nothing is run). */
export function explainHotPath(db: Database): QueryPlan[] {
  return (Object.keys(HOT_SQL) as (keyof typeof HOT_SQL)[]).map((name) => {
    const rows = db.query(`EXPLAIN QUERY PLAN ${HOT_SQL[name]}`).all(...(SAMPLE[name] as never[])) as {
      detail: string;
    }[];
    return { name, plan: rows.map((r) => r.detail) };
  });
}
