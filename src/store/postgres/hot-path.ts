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
import { OUTCOME_SQL, SETTINGS_TEXT } from "./hot-schema.ts";
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
  /** The outcome statement, as spoolctl_record_outcome runs it (hot-schema.ts), for EXPLAIN. */
  recordAttempt: OUTCOME_SQL,
  /** An attempt's outcome and all that follows from it, one statement (hot-schema.ts spoolctl_record_outcome). */
  recordOutcome: `SELECT * FROM spoolctl_record_outcome($1, $2::int, $3::int, $4::float8, $5::int, $6::text, $7::float8,
     $8::bigint, $9, $10::int, $11, $12::float8, $13::int, $14::text, $15::text, $16::int, $17::text, $18::text,
     $19::text[], $20::text[], $21::text[], $22, $23, $24::text, $25::text)`,
  /**
   * Every running attempt's lease renewed in one statement, on the database's clock, and the process groups of
   * those just spawned ($4-$7, sent with their first heartbeat) recorded on the attempts the UPDATE still found
   * the worker's (a pair it no longer owns is not touched).
   */
  heartbeatJobs: `WITH hb AS (
        UPDATE jobs SET heartbeat_at = ${DB_NOW}
        WHERE state = 'running' AND locked_by = $1
          AND (id, last_attempt_no) IN (SELECT * FROM unnest($2::bigint[], $3::int[]))
        RETURNING id, last_attempt_no, cancel_requested, heartbeat_at, xmin::text AS row_version),
      groups AS (
        UPDATE attempts SET pgid = p.pgid, pgid_start_time = p.start_time
        FROM unnest($4::bigint[], $5::int[], $6::int[], $7::text[]) AS p(job_id, attempt_no, pgid, start_time), hb
        WHERE hb.id = p.job_id AND hb.last_attempt_no = p.attempt_no
          AND attempts.job_id = p.job_id AND attempts.attempt_no = p.attempt_no AND attempts.state = 'running'
        RETURNING 1)
      SELECT id, last_attempt_no, cancel_requested, heartbeat_at, row_version, (SELECT count(*) FROM groups)::int AS grouped
      FROM hb`,
  staleRunningJobs: `SELECT * FROM jobs WHERE state = 'running' AND heartbeat_at < ${DB_NOW} - $1::float8 ORDER BY id`,
  runningJobsByWorker:
    "SELECT locked_by AS worker_id, id AS job_id FROM jobs WHERE state = 'running' AND locked_by IS NOT NULL ORDER BY id",
  /** The job, locked, and the settings a result decides with (read-queries.ts getJob). */
  getJobForUpdate: `SELECT j.*, j.xmin::text AS row_version, ${SETTINGS_TEXT} AS settings
     FROM jobs j WHERE id = $1::bigint FOR UPDATE OF j`,
  /** The due-slot pass's look, about once a second per worker: the first entry of idx_schedules_due. */
  earliestSlot: "SELECT next_slot FROM schedules WHERE paused = 0 ORDER BY next_slot LIMIT 1",
  /** The hooks of an outcome and of `batch-done`, read (pipelined with the result) with every job that ends. */
  hooksOn: "SELECT * FROM hooks WHERE on_outcome IN ($1, 'batch-done')",
} as const;

/** Explained statements: the function call recordOutcome is explained by the statement it runs, recordAttempt. */
type Explained = Exclude<keyof typeof HOT_SQL, "recordOutcome">;

/** Sample parameters of each statement, for EXPLAIN. */
const SAMPLE: Record<Explained, unknown[]> = {
  nextDueAt: ["default"],
  drainState: ["default", 0],
  recordAttempt: [
    ...["done", 1, 0, 0, 0, null, 0, 1, "w", 1, "succeeded", 0, null, null, null, null, null, null],
    ...[["succeeded"], ["w"], ["{}"], "spoolctl_explain", "spoolctl_explain_work"],
  ],
  heartbeatJobs: ["w", [1], [1], [1], [1], [1], [null]],
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
      for (const name of Object.keys(SAMPLE) as Explained[]) await explain(name, HOT_SQL[name], SAMPLE[name]);
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
