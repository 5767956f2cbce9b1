/**
 * The claim on PostgreSQL (docs/architecture.md "The claim", "Rules that rest
 * on isolation"), one statement:
 *
 * 1. the next eligible jobs of the lane in claim order, locked with
 *    `FOR UPDATE SKIP LOCKED` (claimers never wait for each other, and never
 *    take the same job) in a MATERIALIZED CTE, so the planner cannot run the
 *    subquery more than once and update more rows than asked; a job with an
 *    unmet need (`needs_left > 0`, docs/architecture.md "Dependencies") is
 *    never eligible, and the index answers that too;
 * 2. moved to `running`, the lease starting at `req.now` (Store.now() when the
 *    claim is sent, unless the caller dated it: ClaimRequest.now; the
 *    database's clock as measured at connect, so hosts with skewed clocks
 *    agree; the conformance suite backdates claims through it);
 * 3. their attempt rows and their `claimed` events (in claim order, numbered
 *    at commit: events.ts), and the NOTIFY, in data-modifying CTEs.
 *
 * Without slots the statement runs on its own (autocommit): one round
 * trip, holding the lane's row FOR SHARE, so that a pause of the lane is
 * ordered with it (docs/architecture.md "Lanes and slots"). With slots (the
 * claimant's `--slots`, or the lane's own, set by `lane set --slots`), in a
 * READ COMMITTED transaction after locking the lane's row in `lanes` (FOR
 * UPDATE: one slotted claim of a lane at a time, fleet-wide); the statement
 * counts the lane's running jobs with a snapshot taken after the lock was
 * granted, so it sees every claim committed before: the ceiling is exact.
 * Jobs only become `running` through a claim.
 *
 * A claim whose connection was lost may or may not have committed: see
 * {@link findClaimed}, which the store uses to find out before claiming again.
 */

import { join } from "node:path";
import type { SQL } from "bun";
import type { Attempt, Job } from "../../model/job.ts";
import type { ClaimedJob, DatedClaim } from "../attempt-types.ts";
import { toAttempt, toJob } from "./rows.ts";

type Row = Record<string, unknown>;

/** Locks the lane's slot row, creating it the first time. */
export async function lockLane(tx: SQL, queue: string): Promise<void> {
  const locked = await tx`SELECT queue FROM lanes WHERE queue = ${queue} FOR UPDATE`;
  if (locked.length > 0) return;
  await tx`INSERT INTO lanes (queue) VALUES (${queue}) ON CONFLICT (queue) DO NOTHING`;
  await tx`SELECT queue FROM lanes WHERE queue = ${queue} FOR UPDATE`;
}

/** Claim order: priority DESC, next_run_at ASC, id ASC (the claim changes none of them). */
function byClaimOrder(a: ClaimedJob, b: ClaimedJob): number {
  return b.job.priority - a.job.priority || a.job.next_run_at - b.job.next_run_at || a.job.id - b.job.id;
}

/**
 * The row version (`xmin`) of each job a claim statement returned, as the
 * claim left the row: a result decided on that row is written only if the
 * row is still that version (hot-schema.ts spoolctl_record_outcome).
 */
export const claimedVersions = new WeakMap<Job, string>();

/** Rows of `row_to_json(job) AS job, row_to_json(attempt) AS attempt` as claimed jobs, in claim order. */
function toClaimed(rows: Row[]): ClaimedJob[] {
  const parse = (v: unknown) => (typeof v === "string" ? JSON.parse(v) : v) as Row;
  return rows
    .map((r) => {
      const { row_version: version, ...row } = parse(r.job);
      const job = toJob(row);
      if (typeof version === "string") claimedVersions.set(job, version);
      return { job, attempt: toAttempt(parse(r.attempt)) as Attempt };
    })
    .sort(byClaimOrder);
}

/** The lane row's pause in force at the claim's time $2 (docs/architecture.md "Lanes and slots"). */
const PAUSED = "paused_at IS NOT NULL AND (paused_until IS NULL OR paused_until > $2::float8)";

/**
 * The claim statement; parameters: see {@link claimParams}. Both forms read
 * the lane's row (its pause, its slots) in the statement itself:
 *
 * - `slotted` (the lane row is already locked FOR UPDATE by the transaction):
 *   nothing when the lane is paused; else at most the ceiling, the lane's
 *   `slots` when set, else the claimant's ($6; -1: none), minus the lane's
 *   running jobs.
 * - unslotted: locks the lane row FOR SHARE (claims do not wait for each
 *   other; a pause's upsert waits for them, and a claim that must wait for a
 *   pause re-reads the row after it commits), and claims nothing when the lane
 *   is paused, has no row, or has slots of its own. In that last case it
 *   answers one row of NULLs, so the caller claims again the slotted way.
 */
export function claimSql(slotted: boolean): string {
  const lane = slotted
    ? `lane AS MATERIALIZED (SELECT slots FROM lanes WHERE queue = $1 AND NOT (${PAUSED}))`
    : `lane AS MATERIALIZED (SELECT queue FROM lanes WHERE queue = $1 AND slots IS NULL AND NOT (${PAUSED}) FOR SHARE)`;
  const limit = slotted
    ? `CASE WHEN EXISTS (SELECT 1 FROM lane) THEN greatest(0, least($5::int, coalesce((SELECT slots FROM lane), nullif($6::int, -1))
         - (SELECT count(*) FROM jobs WHERE state = 'running' AND queue = $1)))::int ELSE 0 END`
    : "$5::int";
  const gate = slotted ? "" : " AND EXISTS (SELECT 1 FROM lane)";
  const slottedMarker = slotted
    ? ""
    : `
     UNION ALL SELECT NULL::json, NULL::json, NULL FROM lanes WHERE queue = $1 AND slots IS NOT NULL`;
  return `WITH ${lane},
     next AS MATERIALIZED (
       SELECT id FROM jobs
       WHERE state = 'queued' AND queue = $1 AND needs_left = 0 AND NOT held AND next_run_at <= $2::float8${gate}
       ORDER BY priority DESC, next_run_at ASC, id ASC
       LIMIT ${limit}
       FOR UPDATE SKIP LOCKED),
     claimed AS (
       UPDATE jobs SET state = 'running', locked_by = $3, locked_pid = $4::int, locked_at = $2::float8, heartbeat_at = $2::float8,
         started_at = $2::float8, finished_at = NULL, cancel_requested = false, last_attempt_no = jobs.last_attempt_no + 1
       FROM next WHERE jobs.id = next.id
       RETURNING jobs.*, jobs.xmin::text AS row_version),
     attempt AS (
       INSERT INTO attempts (job_id, attempt_no, state, worker_id, worker_pid, started_at, stdout_path, stderr_path, worker_start_time)
       SELECT c.id, c.last_attempt_no, 'running', $3, $4::int, $2::float8,
         $7::text || '/' || c.id || '.' || c.last_attempt_no || '.stdout', $7::text || '/' || c.id || '.' || c.last_attempt_no || '.stderr', $9::text
       FROM claimed c
       RETURNING *),
     claimed_events AS (
       INSERT INTO job_events (job_id, at, event, worker_id, detail)
       SELECT c.id, $2::float8, 'claimed', $3, 'attempt ' || c.last_attempt_no
       FROM claimed c ORDER BY c.priority DESC, c.next_run_at ASC, c.id ASC
       RETURNING 1)
     SELECT row_to_json(c) AS job, row_to_json(a) AS attempt, (SELECT pg_notify($8::text, ''))::text AS notified
     FROM claimed c JOIN attempt a ON a.job_id = c.id${slottedMarker}`;
}

/** The parameters of {@link claimSql}. */
export function claimParams(req: DatedClaim, spoolDir: string, channel: string): unknown[] {
  // Attempt output paths as attemptOutputPaths() makes them: <spool>/output/<job>.<attempt>.stdout|stderr.
  return [
    req.queue,
    req.now,
    req.workerId,
    req.workerPid,
    req.limit,
    req.slots ?? -1, // -1: none (an unused parameter may not be a bare NULL: its type would be unknown)
    join(spoolDir, "output"),
    channel,
    req.workerStartTime ?? null,
  ];
}

/** What one claim statement answered: the jobs, and whether the lane turned out to have slots of its own. */
export interface StatementClaim {
  claimed: ClaimedJob[];
  /** An unslotted claim found the lane has a slot ceiling: it claimed nothing; claim again slotted. */
  laneSlotted: boolean;
}

/**
 * Runs the claim statement on `sql` (the pool, or a transaction holding the
 * lane lock when `slotted`) and returns the claimed jobs in claim order.
 */
export async function claimStatement(
  sql: SQL,
  req: DatedClaim,
  spoolDir: string,
  channel: string,
  slotted: boolean,
): Promise<StatementClaim> {
  if (req.limit < 1) return { claimed: [], laneSlotted: false };
  const rows = (await sql.unsafe(claimSql(slotted), claimParams(req, spoolDir, channel))) as Row[];
  const jobs = rows.filter((r) => r.job !== null);
  return { claimed: toClaimed(jobs), laneSlotted: jobs.length < rows.length };
}

/**
 * The jobs a claim by `req.workerId` at `req.now` moved to running and that
 * are still its own: what a claim whose COMMIT answer was lost did, if it
 * committed. `handedOut` lists `job:attempt` pairs already returned by
 * earlier claims of this store (a claim at the very same `now`), which are
 * left out.
 */
export async function findClaimed(sql: SQL, req: DatedClaim, handedOut: Set<string>): Promise<ClaimedJob[]> {
  const rows = (await sql`SELECT row_to_json(j) AS job, row_to_json(a) AS attempt
    FROM jobs j JOIN attempts a ON a.job_id = j.id AND a.attempt_no = j.last_attempt_no
    WHERE j.state = 'running' AND j.locked_by = ${req.workerId} AND j.queue = ${req.queue} AND j.locked_at = ${req.now}::float8
      AND a.state = 'running'`) as Row[];
  return toClaimed(rows).filter((c) => !handedOut.has(`${c.job.id}:${c.attempt.attempt_no}`));
}
