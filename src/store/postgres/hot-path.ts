/**
 * The PostgreSQL statements on the worker's hot path (docs/architecture.md
 * "The claim", "Waking", "Drain"), kept here so that read-queries.ts,
 * worker-queries.ts and claim.ts run them and {@link explainHotPath} shows how the server answers each: every
 * one must be answered from an index in time independent of the backlog (the
 * plan test in test/store/plans.test.ts). The text matches SQLite's
 * (src/store/sqlite/hot-path.ts) statement for statement.
 */
import type { SQL } from "bun";
import type { QueryPlan } from "../store.ts";
import { claimParams, claimSql } from "./claim.ts";
import { SETTLE_ROUND_SQL } from "./needs.ts";

/** The database's clock inside a statement, epoch seconds. */
const DB_NOW = "extract(epoch from now())::float8";

/** Hot-path statement texts, by name (parameters $1 …). */
export const HOT_SQL = {
  nextDueAt:
    "SELECT next_run_at AS t FROM jobs WHERE state = 'queued' AND queue = $1 AND NOT held ORDER BY next_run_at LIMIT 1",
  /** What holds a drain (see SQLite's): running, due, and run before but not yet due; each an index range. */
  drainState: `SELECT (SELECT count(*) FROM jobs WHERE state = 'running' AND queue = $1)::int AS running,
      ((SELECT count(*) FROM jobs WHERE state = 'queued' AND queue = $1 AND next_run_at <= $2::float8 AND NOT held)
      + (SELECT count(*) FROM jobs
         WHERE state = 'queued' AND queue = $1 AND last_attempt_no > 0 AND next_run_at > $2::float8 AND NOT held))::int AS waiting`,
  /** The outcome, fenced by (job, attempt, worker) in the UPDATE itself; the attempt row is closed only if the job row was. */
  recordAttempt: `WITH job AS (
        UPDATE jobs SET state = $1, attempts = $2::int, crashes = $3::int, next_run_at = $4::float8,
          last_exit_code = $5::int, last_error = $6::text, finished_at = $7::float8,
          locked_by = NULL, locked_pid = NULL, locked_at = NULL, heartbeat_at = NULL, cancel_requested = false
        WHERE id = $8::bigint AND state = 'running' AND locked_by = $9 AND last_attempt_no = $10::int
        RETURNING id, queue),
      attempt AS (
        UPDATE attempts SET state = $11, finished_at = $12::float8, exit_code = $5::int, signal = $13::int,
          error = $6::text, failure_reason = $14::text, stderr_last_line = $15::text, stderr_signature = $18::text,
          pgid = coalesce(pgid, $16::int), pgid_start_time = coalesce(pgid_start_time, $17::text)
        WHERE job_id = $8::bigint AND attempt_no = $10::int AND state = 'running' AND EXISTS (SELECT 1 FROM job)
        RETURNING 1)
      SELECT (SELECT count(*) FROM job)::int AS n, (SELECT queue FROM job) AS queue`,
  heartbeatJobs: `UPDATE jobs SET heartbeat_at = ${DB_NOW}
     WHERE state = 'running' AND locked_by = $1
       AND (id, last_attempt_no) IN (SELECT * FROM unnest($2::bigint[], $3::int[]))
     RETURNING id, last_attempt_no, cancel_requested`,
  /** Process groups of running attempts, sent with the first heartbeat after their spawn. */
  attemptProcess: `UPDATE attempts SET pgid = p.pgid, pgid_start_time = p.start_time
     FROM unnest($1::bigint[], $2::int[], $3::int[], $4::text[]) AS p(job_id, attempt_no, pgid, start_time)
     WHERE attempts.job_id = p.job_id AND attempts.attempt_no = p.attempt_no AND attempts.state = 'running'`,
  staleRunningJobs: `SELECT * FROM jobs WHERE state = 'running' AND heartbeat_at < ${DB_NOW} - $1::float8 ORDER BY id`,
  runningJobsByWorker:
    "SELECT locked_by AS worker_id, id AS job_id FROM jobs WHERE state = 'running' AND locked_by IS NOT NULL ORDER BY id",
  getJobForUpdate: "SELECT * FROM jobs WHERE id = $1::bigint FOR UPDATE",
  /** The due-slot pass's look, about once a second per worker: the first entry of idx_schedules_due. */
  earliestSlot: "SELECT next_slot FROM schedules WHERE paused = 0 ORDER BY next_slot LIMIT 1",
  /** The hooks of an outcome and of `batch-done`, read (pipelined with the result) with every job that ends. */
  hooksOn: "SELECT * FROM hooks WHERE on_outcome IN ($1, 'batch-done')",
} as const;

/** Sample parameters of each statement, for EXPLAIN. */
const SAMPLE: Record<keyof typeof HOT_SQL, unknown[]> = {
  nextDueAt: ["default"],
  drainState: ["default", 0],
  recordAttempt: ["done", 1, 0, 0, 0, null, 0, 1, "w", 1, "succeeded", 0, null, null, null, null, null, null],
  attemptProcess: [[1], [1], [1], [null]],
  heartbeatJobs: ["w", [1], [1]],
  staleRunningJobs: [30],
  runningJobsByWorker: [],
  getJobForUpdate: [1],
  earliestSlot: [],
  hooksOn: ["dead"],
};

/**
 * `EXPLAIN` of every hot-path statement (nothing is run), the claim with and
 * without `--slots` included, with sequential scans priced out
 * (`enable_seqscan = off`): on a small table the planner rightly prefers a
 * scan, and the question asked here is whether an index can answer at all.
 */
export async function explainHotPath(sql: SQL): Promise<QueryPlan[]> {
  return (await sql
    .begin(async (tx) => {
      await tx`SET LOCAL enable_seqscan = off`;
      const plans: QueryPlan[] = [];
      const explain = async (name: string, text: string, params: unknown[]) => {
        let rows: { "QUERY PLAN": string }[];
        try {
          rows = (await tx.unsafe(`EXPLAIN ${text}`, params)) as { "QUERY PLAN": string }[];
        } catch (error) {
          throw new Error(`EXPLAIN ${name}: ${(error as Error).message}`);
        }
        plans.push({ name, plan: rows.map((r) => r["QUERY PLAN"]) });
      };
      const sample = claimParams(
        { queue: "default", workerId: "w", workerPid: 1, workerStartTime: null, slots: 2, limit: 4, now: 0 },
        "/spool",
        "spoolctl_explain",
      );
      await explain("claimNext", claimSql(false), sample);
      await explain("claimNextSlotted", claimSql(true), sample);
      for (const name of Object.keys(HOT_SQL) as (keyof typeof HOT_SQL)[])
        await explain(name, HOT_SQL[name], SAMPLE[name]);
      await explain("settleRound", SETTLE_ROUND_SQL, [[1]]);
      // Nothing was written (EXPLAIN plans only), but leave no doubt.
      throw new ExplainDone(plans);
    })
    .catch((error) => {
      if (error instanceof ExplainDone) return error.plans;
      throw error;
    })) as QueryPlan[];
}

/** Rolls the EXPLAIN transaction back while carrying its result out. */
class ExplainDone extends Error {
  constructor(readonly plans: QueryPlan[]) {
    super("explained");
  }
}
