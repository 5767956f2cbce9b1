/**
 * SQL of the operator verbs (retry, cancel, prune, events, config) for the
 * PostgreSQL driver; {@link PgQueries} delegates here, inside its transaction.
 * Every write is guarded by the state it expects, in the statement itself.
 */
import type { SQL } from "bun";
import type { Job, JobEvent, JobSettingsChange, JobState } from "../../model/job.ts";
import type { AttemptClosing } from "../attempt-types.ts";
import type { EventQuery } from "../reader.ts";
import { activeKeyTaken } from "../writer.ts";
import { isActiveKeyViolation } from "./errors.ts";
import { toEvent, toJob } from "./rows.ts";

type Row = Record<string, unknown>;

/** Ledger rows after a cursor, oldest first (ids are in commit order: events.ts). */
export async function listEvents(tx: SQL, q: EventQuery): Promise<JobEvent[]> {
  if (q.batch !== undefined) {
    const rows = await tx`SELECT * FROM job_events WHERE id > ${q.afterId}
      AND job_id IN (SELECT id FROM jobs WHERE batch = ${q.batch}) AND (${q.jobId ?? null}::bigint IS NULL OR job_id = ${q.jobId ?? null}::bigint)
      ORDER BY id LIMIT ${q.limit}`;
    return (rows as Row[]).map(toEvent);
  }
  const rows =
    q.jobId !== undefined
      ? await tx`SELECT * FROM job_events WHERE id > ${q.afterId} AND job_id = ${q.jobId} ORDER BY id LIMIT ${q.limit}`
      : await tx`SELECT * FROM job_events WHERE id > ${q.afterId} ORDER BY id LIMIT ${q.limit}`;
  return (rows as Row[]).map(toEvent);
}

/** Terminal jobs of `states` finished before the cutoff (created_at when finished_at is missing). */
export async function pruneCandidates(tx: SQL, states: JobState[], finishedBefore: number): Promise<Job[]> {
  const rows = await tx`SELECT * FROM jobs WHERE state IN ('done','dead','canceled') AND state = ANY(${states}::text[])
      AND coalesce(finished_at, created_at) < ${finishedBefore}::float8 ORDER BY id`;
  return (rows as Row[]).map(toJob);
}

/** Attempt and ledger row counts of some jobs. */
export async function historyCounts(tx: SQL, jobIds: number[]): Promise<{ attempts: number; events: number }> {
  const [row] =
    await tx`SELECT (SELECT count(*) FROM attempts WHERE job_id = ANY(${jobIds}::bigint[]))::int AS attempts,
      (SELECT count(*) FROM job_events WHERE job_id = ANY(${jobIds}::bigint[]))::int AS events`;
  return { attempts: row.attempts, events: row.events };
}

/** Removes a setting; true when one was removed. */
export async function deleteSetting(tx: SQL, key: string): Promise<boolean> {
  return (await tx`DELETE FROM settings WHERE key = ${key} RETURNING 1`).length > 0;
}

/** Back to `queued` with fresh budgets and no owner; guarded by the expected state. */
export async function requeueJob(tx: SQL, jobId: number, from: JobState, dueAt: number): Promise<boolean> {
  try {
    const rows =
      await tx`UPDATE jobs SET state = 'queued', attempts = 0, crashes = 0, next_run_at = ${dueAt}::float8, finished_at = NULL,
        locked_by = NULL, locked_pid = NULL, locked_at = NULL, heartbeat_at = NULL, cancel_requested = false
      WHERE id = ${jobId} AND state = ${from} RETURNING 1`;
    return rows.length > 0;
  } catch (error) {
    // Another active job holds the key (committed, or committed while this UPDATE waited on it).
    if (isActiveKeyViolation(error)) throw activeKeyTaken(jobId);
    throw error;
  }
}

/**
 * A finished job back to `queued` for `rerun`, one statement; returns the
 * state it left, or null when it is missing or not finished. The row is
 * locked first and the guard `state IN ('done','dead','canceled')` is
 * evaluated on its newest version, so a rerun racing a retry or another rerun
 * of the same job changes it once.
 */
export async function rerunJob(tx: SQL, jobId: number, dueAt: number): Promise<JobState | null> {
  try {
    const rows = await tx`WITH old AS (
        SELECT id, state FROM jobs WHERE id = ${jobId} AND state IN ('done','dead','canceled') FOR UPDATE)
      UPDATE jobs j SET state = 'queued', attempts = 0, crashes = 0, next_run_at = ${dueAt}::float8, finished_at = NULL,
        locked_by = NULL, locked_pid = NULL, locked_at = NULL, heartbeat_at = NULL, cancel_requested = false
      FROM old WHERE j.id = old.id AND j.state IN ('done','dead','canceled') RETURNING old.state`;
    return rows.length > 0 ? (rows[0] as { state: JobState }).state : null;
  } catch (error) {
    if (isActiveKeyViolation(error)) throw activeKeyTaken(jobId);
    throw error;
  }
}

/** {@link requeueJob} for many jobs in one statement; returns the ids requeued. */
export async function requeueJobs(tx: SQL, jobIds: number[], from: JobState[], dueAt: number): Promise<number[]> {
  if (jobIds.length === 0) return [];
  try {
    const rows =
      await tx`UPDATE jobs SET state = 'queued', attempts = 0, crashes = 0, next_run_at = ${dueAt}::float8, finished_at = NULL,
        locked_by = NULL, locked_pid = NULL, locked_at = NULL, heartbeat_at = NULL, cancel_requested = false
      WHERE id = ANY(${jobIds}::bigint[]) AND state = ANY(${from}::text[]) RETURNING id`;
    return (rows as { id: string | number }[]).map((r) => Number(r.id));
  } catch (error) {
    if (isActiveKeyViolation(error)) throw activeKeyTaken(jobIds);
    throw error;
  }
}

/** Ends a running attempt row (its worker lost the job). */
export async function closeAttempt(tx: SQL, c: AttemptClosing): Promise<boolean> {
  const rows =
    await tx`UPDATE attempts SET state = ${c.state}, failure_reason = ${c.failureReason}::text, error = ${c.error}, finished_at = ${c.now}::float8
    WHERE job_id = ${c.jobId} AND attempt_no = ${c.attemptNo} AND state = 'running' RETURNING 1`;
  return rows.length > 0;
}

/** queued → canceled. */
export async function cancelQueuedJob(tx: SQL, jobId: number, now: number): Promise<boolean> {
  return (
    (
      await tx`UPDATE jobs SET state = 'canceled', finished_at = ${now}::float8 WHERE id = ${jobId} AND state = 'queued' RETURNING 1`
    ).length > 0
  );
}

/** queued → canceled for each of `jobIds` still queued (before `delete` removes them); returns their ids. */
export async function cancelQueued(tx: SQL, jobIds: number[], now: number): Promise<number[]> {
  const rows = (await tx`UPDATE jobs SET state = 'canceled', finished_at = ${now}::float8
    WHERE id = ANY(${jobIds}::bigint[]) AND state = 'queued' RETURNING id`) as Row[];
  return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
}

/** Flags a running job for its worker to kill. */
export async function requestCancel(tx: SQL, jobId: number): Promise<boolean> {
  return (
    (await tx`UPDATE jobs SET cancel_requested = true WHERE id = ${jobId} AND state = 'running' RETURNING 1`).length > 0
  );
}

/**
 * Deletes terminal jobs (and queued ones with `queued`) and their history
 * (shipped output goes with the attempts, ON DELETE CASCADE); running ids are
 * always skipped. The rows are locked first and the guard re-read on their
 * newest version, so a job a claim took meanwhile is skipped as running.
 */
export async function deleteJobs(
  tx: SQL,
  jobIds: number[],
  queued = false,
): Promise<{ jobs: number; attempts: number; events: number }> {
  const states = queued ? ["queued", "done", "dead", "canceled"] : ["done", "dead", "canceled"];
  const doomed =
    (await tx`SELECT id FROM jobs WHERE id = ANY(${jobIds}::bigint[]) AND state = ANY(${states}::text[]) ORDER BY id FOR UPDATE`) as Row[];
  const ids = doomed.map((r) => Number(r.id));
  if (ids.length === 0) return { jobs: 0, attempts: 0, events: 0 };
  const [row] = await tx`
    WITH a AS (DELETE FROM attempts WHERE job_id = ANY(${ids}::bigint[]) RETURNING 1),
         e AS (DELETE FROM job_events WHERE job_id = ANY(${ids}::bigint[]) RETURNING 1)
    SELECT (SELECT count(*) FROM a)::int AS attempts, (SELECT count(*) FROM e)::int AS events`;
  const [gone] =
    await tx`WITH j AS (DELETE FROM jobs WHERE id = ANY(${ids}::bigint[]) RETURNING 1) SELECT count(*)::int AS n FROM j`;
  return { jobs: gone.n, attempts: row.attempts, events: row.events };
}

/** Sets timeout, retry budget and/or env of a job still in state `from`; absent fields are kept. */
export async function updateJobSettings(
  tx: SQL,
  jobId: number,
  from: JobState,
  c: JobSettingsChange,
): Promise<boolean> {
  const rows =
    await tx`UPDATE jobs SET timeout_seconds = coalesce(${c.timeout_seconds ?? null}::float8, timeout_seconds),
      max_retries = coalesce(${c.max_retries ?? null}::int, max_retries),
      env = coalesce(${c.env === undefined ? null : JSON.stringify(c.env)}::text, env)
    WHERE id = ${jobId} AND state = ${from} RETURNING 1`;
  return rows.length > 0;
}
