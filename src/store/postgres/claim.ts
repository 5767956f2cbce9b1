/**
 * The claim on PostgreSQL (docs/architecture.md "The claim"), inside one short
 * READ COMMITTED transaction (open.ts), three statements:
 *
 * 1. the next eligible jobs of the lane in claim order, locked with
 *    `FOR UPDATE SKIP LOCKED` (claimers never wait for each other, and never
 *    take the same job) in a MATERIALIZED CTE, so the planner cannot run the
 *    subquery more than once and update more rows than asked; moved to
 *    `running`, the lease starting at `req.now` (Store.now(): the database's
 *    clock as measured at connect, so hosts with skewed clocks agree; the
 *    conformance suite backdates claims through it to make stale leases);
 * 2. their attempt rows, one multi-row INSERT;
 * 3. their `claimed` events, buffered and written with the commit (events.ts).
 *
 * With `--slots`, the lane's row in `lanes` is locked first (FOR UPDATE: one
 * slotted claim of a lane at a time, fleet-wide) and the running jobs are
 * counted by the claim statement, which under READ COMMITTED takes its
 * snapshot after the lock was granted, so it sees every claim committed
 * before: the ceiling is exact. Jobs only become `running` through a claim.
 */
import type { SQL } from "bun";
import { attemptOutputPaths } from "../spool.ts";
import type { ClaimRequest, ClaimedJob } from "../store.ts";
import type { TxEffects } from "./events.ts";
import { num, toAttempt, toJob } from "./rows.ts";

type Row = Record<string, unknown>;

/** Locks the lane's slot row, creating it the first time. */
async function lockLane(tx: SQL, queue: string): Promise<void> {
  const locked = await tx`SELECT queue FROM lanes WHERE queue = ${queue} FOR UPDATE`;
  if (locked.length > 0) return;
  await tx`INSERT INTO lanes (queue) VALUES (${queue}) ON CONFLICT (queue) DO NOTHING`;
  await tx`SELECT queue FROM lanes WHERE queue = ${queue} FOR UPDATE`;
}

/** Claims up to `req.limit` jobs for `req.workerId`; returns them in claim order with their attempt rows. */
export async function claim(tx: SQL, effects: TxEffects, req: ClaimRequest, spoolDir: string): Promise<ClaimedJob[]> {
  if (req.limit < 1) return [];
  if (req.slots !== null) await lockLane(tx, req.queue);
  const limit =
    req.slots === null
      ? "$5::int"
      : "greatest(0, least($5::int, $6::int - (SELECT count(*) FROM jobs WHERE state = 'running' AND queue = $1)))::int";
  const params: unknown[] = [req.queue, req.now, req.workerId, req.workerPid, req.limit];
  if (req.slots !== null) params.push(req.slots);
  const rows = (await tx.unsafe(
    `WITH next AS MATERIALIZED (
       SELECT id FROM jobs
       WHERE state = 'queued' AND queue = $1 AND next_run_at <= $2::float8
       ORDER BY priority DESC, next_run_at ASC, id ASC
       LIMIT ${limit}
       FOR UPDATE SKIP LOCKED)
     UPDATE jobs SET state = 'running', locked_by = $3, locked_pid = $4::int,
       locked_at = $2::float8, heartbeat_at = $2::float8,
       started_at = $2::float8, finished_at = NULL, cancel_requested = false, last_attempt_no = jobs.last_attempt_no + 1
     FROM next WHERE jobs.id = next.id
     RETURNING jobs.*`,
    params,
  )) as Row[];
  if (rows.length === 0) return [];
  // RETURNING has no order: sort back into claim order (priority and next_run_at are unchanged by the claim).
  const jobs = rows.map(toJob).sort((a, b) => b.priority - a.priority || a.next_run_at - b.next_run_at || a.id - b.id);
  const paths = jobs.map((j) => attemptOutputPaths(spoolDir, j.id, j.last_attempt_no));
  const attempts = (await tx`
    INSERT INTO attempts (job_id, attempt_no, state, worker_id, worker_pid, started_at, stdout_path, stderr_path)
    SELECT t.job_id, t.attempt_no, 'running', ${req.workerId}, ${req.workerPid}::int, ${req.now}::float8, t.stdout_path, t.stderr_path
    FROM unnest(${jobs.map((j) => j.id)}::bigint[], ${jobs.map((j) => j.last_attempt_no)}::int[],
                ${paths.map((p) => p.stdout)}::text[], ${paths.map((p) => p.stderr)}::text[])
         AS t(job_id, attempt_no, stdout_path, stderr_path)
    RETURNING *`) as Row[];
  const byJob = new Map(attempts.map((a) => [num(a.job_id), toAttempt(a)]));
  for (const job of jobs) {
    effects.append({ jobId: job.id, event: "claimed", workerId: req.workerId, detail: `attempt ${job.last_attempt_no}`, at: req.now });
  }
  return jobs.map((job) => ({ job, attempt: byJob.get(job.id)! }));
}
