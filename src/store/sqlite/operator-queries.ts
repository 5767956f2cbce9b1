/**
 * SQL of the operator verbs (retry, cancel, prune, events, config) for the
 * SQLite driver. {@link SqliteQueries} delegates to these functions, so every
 * statement still runs inside the caller's transaction (docs/architecture.md
 * "The driver contract").
 */
import type { Database } from "bun:sqlite";
import type { Job, JobEvent, JobSettingsChange, JobState } from "../../model/job.ts";
import type { AttemptClosing } from "../attempt-types.ts";
import type { EventQuery } from "../reader.ts";
import { activeKeyTaken } from "../writer.ts";
import { toJob } from "./rows.ts";

type Row = Record<string, unknown>;

/** The only states prune may ever delete, whatever it is asked. */
const TERMINAL = "state IN ('done','dead','canceled')";

/** Ledger rows after a cursor, oldest first. */
export function listEvents(db: Database, q: EventQuery): JobEvent[] {
  if (q.batch !== undefined) {
    return db
      .query(
        `SELECT * FROM job_events WHERE id > ? AND job_id IN (SELECT id FROM jobs WHERE batch = ?)
         ${q.jobId !== undefined ? "AND job_id = ?" : ""} ORDER BY id LIMIT ?`,
      )
      .all(
        ...(q.jobId !== undefined ? [q.afterId, q.batch, q.jobId, q.limit] : [q.afterId, q.batch, q.limit]),
      ) as JobEvent[];
  }
  if (q.jobId !== undefined) {
    return db
      .query("SELECT * FROM job_events WHERE id > ? AND job_id = ? ORDER BY id LIMIT ?")
      .all(q.afterId, q.jobId, q.limit) as JobEvent[];
  }
  return db.query("SELECT * FROM job_events WHERE id > ? ORDER BY id LIMIT ?").all(q.afterId, q.limit) as JobEvent[];
}

/** Terminal jobs of `states` finished before the cutoff (created_at when finished_at is missing). */
export function pruneCandidates(db: Database, states: JobState[], finishedBefore: number): Job[] {
  const rows = db
    .query(
      `SELECT * FROM jobs WHERE ${TERMINAL} AND state IN (SELECT value FROM json_each(?))
         AND coalesce(finished_at, created_at) < ? ORDER BY id`,
    )
    .all(JSON.stringify(states), finishedBefore) as Row[];
  return rows.map(toJob);
}

/** Attempt and ledger row counts of some jobs. */
export function historyCounts(db: Database, jobIds: number[]): { attempts: number; events: number } {
  const ids = JSON.stringify(jobIds);
  const attempts = db
    .query("SELECT count(*) AS n FROM attempts WHERE job_id IN (SELECT value FROM json_each(?))")
    .get(ids) as { n: number };
  const events = db
    .query("SELECT count(*) AS n FROM job_events WHERE job_id IN (SELECT value FROM json_each(?))")
    .get(ids) as { n: number };
  return { attempts: attempts.n, events: events.n };
}

/** Removes a setting; true when one was removed. */
export function deleteSetting(db: Database, key: string): boolean {
  return db.query("DELETE FROM settings WHERE key = ?").run(key).changes > 0;
}

/**
 * `error` as the requeue's answer: IDEMPOTENCY_CONFLICT when the unique index
 * of active keys (schema v4) refused a second active job with one key, else
 * the error itself.
 */
function keyTakenOr(error: unknown, jobIds: number | number[]): unknown {
  const refused =
    (error as { code?: string }).code === "SQLITE_CONSTRAINT_UNIQUE" &&
    /idempotency_key/.test(String((error as Error).message));
  return refused ? activeKeyTaken(jobIds) : error;
}

/** Back to `queued` with fresh budgets and no owner; guarded by the expected state. */
export function requeueJob(db: Database, jobId: number, from: JobState, dueAt: number): boolean {
  try {
    const result = db
      .query(
        `UPDATE jobs SET state = 'queued', attempts = 0, crashes = 0, next_run_at = ?1, finished_at = NULL,
           locked_by = NULL, locked_pid = NULL, locked_at = NULL, heartbeat_at = NULL, cancel_requested = 0
         WHERE id = ?2 AND state = ?3`,
      )
      .run(dueAt, jobId, from);
    return result.changes > 0;
  } catch (error) {
    throw keyTakenOr(error, jobId);
  }
}

/**
 * A finished job back to `queued` for `rerun`; returns the state it left, or
 * null when it is missing or not finished. The guard is the UPDATE's own
 * `state IN ('done','dead','canceled')`; the state read before it cannot
 * change in between (the write transaction holds the database's lock).
 */
export function rerunJob(db: Database, jobId: number, dueAt: number): JobState | null {
  const row = db.query(`SELECT state FROM jobs WHERE id = ? AND ${TERMINAL}`).get(jobId) as { state: JobState } | null;
  if (!row) return null;
  try {
    const result = db
      .query(
        `UPDATE jobs SET state = 'queued', attempts = 0, crashes = 0, next_run_at = ?1, finished_at = NULL,
           locked_by = NULL, locked_pid = NULL, locked_at = NULL, heartbeat_at = NULL, cancel_requested = 0
         WHERE id = ?2 AND ${TERMINAL}`,
      )
      .run(dueAt, jobId);
    return result.changes > 0 ? row.state : null;
  } catch (error) {
    if (
      (error as { code?: string }).code === "SQLITE_CONSTRAINT_UNIQUE" &&
      /idempotency_key/.test(String((error as Error).message))
    )
      throw activeKeyTaken(jobId);
    throw error;
  }
}

/**
 * {@link requeueJob} for many jobs: one statement per chunk of ids (a JSON
 * array read with json_each); returns the ids requeued.
 */
export function requeueJobs(db: Database, jobIds: number[], from: JobState[], dueAt: number): number[] {
  const stmt = db.query(
    `UPDATE jobs SET state = 'queued', attempts = 0, crashes = 0, next_run_at = ?1, finished_at = NULL,
       locked_by = NULL, locked_pid = NULL, locked_at = NULL, heartbeat_at = NULL, cancel_requested = 0
     WHERE id IN (SELECT value FROM json_each(?2)) AND state IN (SELECT value FROM json_each(?3))
     RETURNING id`,
  );
  try {
    return (stmt.all(dueAt, JSON.stringify(jobIds), JSON.stringify(from)) as { id: number }[]).map((r) => r.id);
  } catch (error) {
    throw keyTakenOr(error, jobIds);
  }
}

/** Ends a running attempt row (its worker lost the job). */
export function closeAttempt(db: Database, c: AttemptClosing): boolean {
  const result = db
    .query(
      `UPDATE attempts SET state = ?, failure_reason = ?, error = ?, finished_at = ?
       WHERE job_id = ? AND attempt_no = ? AND state = 'running'`,
    )
    .run(c.state, c.failureReason, c.error, c.now, c.jobId, c.attemptNo);
  return result.changes > 0;
}

/** queued → canceled. */
export function cancelQueuedJob(db: Database, jobId: number, now: number): boolean {
  return (
    db.query("UPDATE jobs SET state = 'canceled', finished_at = ? WHERE id = ? AND state = 'queued'").run(now, jobId)
      .changes > 0
  );
}

/** queued → canceled for each of `jobIds` still queued (before `delete` removes them); returns their ids. */
export function cancelQueued(db: Database, jobIds: number[], now: number): number[] {
  return (
    db
      .query(
        "UPDATE jobs SET state = 'canceled', finished_at = ? WHERE id IN (SELECT value FROM json_each(?)) AND state = 'queued' RETURNING id",
      )
      .all(now, JSON.stringify(jobIds)) as { id: number }[]
  ).map((r) => r.id);
}

/** Flags a running job for its worker to kill. */
export function requestCancel(db: Database, jobId: number): boolean {
  return db.query("UPDATE jobs SET cancel_requested = 1 WHERE id = ? AND state = 'running'").run(jobId).changes > 0;
}

/** Deletes terminal jobs (and queued ones with `queued`) and their history; running ids are always skipped. */
export function deleteJobs(
  db: Database,
  jobIds: number[],
  queued = false,
): { jobs: number; attempts: number; events: number } {
  const ids = JSON.stringify(jobIds);
  const guard = queued ? "state IN ('queued','done','dead','canceled')" : TERMINAL;
  const doomed = `SELECT id FROM jobs WHERE id IN (SELECT value FROM json_each(?)) AND ${guard}`;
  const attempts = db.query(`DELETE FROM attempts WHERE job_id IN (${doomed})`).run(ids).changes;
  const events = db.query(`DELETE FROM job_events WHERE job_id IN (${doomed})`).run(ids).changes;
  const jobs = db.query(`DELETE FROM jobs WHERE id IN (${doomed})`).run(ids).changes;
  return { jobs, attempts, events };
}

/** Sets timeout, retry budget and/or env of a job still in state `from`; absent fields are kept. */
export function updateJobSettings(db: Database, jobId: number, from: JobState, c: JobSettingsChange): boolean {
  const result = db
    .query(
      `UPDATE jobs SET timeout_seconds = coalesce(?1, timeout_seconds), max_retries = coalesce(?2, max_retries),
         env = coalesce(?3, env)
       WHERE id = ?4 AND state = ?5`,
    )
    .run(
      c.timeout_seconds ?? null,
      c.max_retries ?? null,
      c.env === undefined ? null : JSON.stringify(c.env),
      jobId,
      from,
    );
  return result.changes > 0;
}
