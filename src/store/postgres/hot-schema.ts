/**
 * The schema step of the one-round-trip hot path (issue 35 item 1;
 * docs/architecture.md "Rules that rest on isolation"): the foreign keys of
 * `attempts.job_id` and `job_events.job_id` are dropped. Every row of those
 * tables is written by an operation that holds the job's row lock in the same
 * transaction (the claim's UPDATE, the outcome's UPDATE, a getJob FOR UPDATE,
 * an insert of the job itself), so the key can never point at a missing job;
 * the checks cost five lookups per job (the attempt's, and two per ledger row:
 * PostgreSQL checks a row again when its own transaction renumbers it at
 * COMMIT). What the keys did besides, ON DELETE CASCADE, a statement trigger
 * on `jobs` does: deleting jobs deletes their attempts (and so their output,
 * whose key to `attempts` stays) and their ledger rows in the same statement.
 * The keys that guard user input stay: `job_needs` (the ids of `--needs`).
 * And spoolctl_record_outcome: a result in one statement (worker-queries.ts
 * recordAttempt), which may be decided on the row the worker's claim
 * returned instead of a read of its own (read-queries.ts getJob).
 */
/**
 * The settings as one JSON text, keys in order: what a result decides with,
 * read with the job (hot-path.ts getJobForUpdate) and compared by
 * spoolctl_record_outcome when the worker decided on a row it kept.
 */
export const SETTINGS_TEXT =
  "(SELECT coalesce(json_object_agg(s.key, s.value ORDER BY s.key), '{}')::text FROM settings s)";

/**
 * The outcome statement ($1-$23; hot-path.ts recordAttempt names them): the
 * job row fenced by (job, attempt, worker) in its UPDATE, and when that row
 * was written, in the same statement: the attempt row closed; the outcome's
 * ledger rows ($19-$21, dated $12; numbered at COMMIT: events.ts); an ended
 * job's dependents' edges settled (the first round of needs.ts
 * settleDependents: its snapshot is taken after the job's row lock was
 * granted, so it has every edge to the job); the hooks of its outcome read;
 * the readers and the lane's workers notified ($22, $23: `freed:` and, for a
 * requeue, `ready:`). Frozen here: the function of this step runs this text.
 */
export const OUTCOME_SQL = `WITH job AS (
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
        RETURNING 1),
      ledger AS (
        INSERT INTO job_events (job_id, at, event, worker_id, detail)
        SELECT $8::bigint, $12::float8, e.event, e.worker_id, e.detail
        FROM unnest($19::text[], $20::text[], $21::text[]) WITH ORDINALITY AS e(event, worker_id, detail, ord)
        WHERE EXISTS (SELECT 1 FROM job)
        ORDER BY e.ord
        RETURNING 1),
      met AS (
        UPDATE job_needs e SET met = true
        WHERE e.need_id = $8::bigint AND NOT e.met AND $1 IN ('done','dead','canceled') AND (e.policy = 'done' OR $1 = 'done')
          AND EXISTS (SELECT 1 FROM job)
        RETURNING e.job_id),
      failed AS (
        UPDATE job_needs e SET closed = true
        WHERE e.need_id = $8::bigint AND e.policy = 'success' AND NOT e.met AND $1 IN ('dead','canceled')
          AND (SELECT d.state FROM jobs d WHERE d.id = e.job_id) = 'queued' AND EXISTS (SELECT 1 FROM job)
        RETURNING e.job_id, e.need_id)
      SELECT (SELECT count(*) FROM job)::int AS n, (SELECT queue FROM job) AS queue,
        (SELECT count(*) FROM ledger)::int AS logged,
        (SELECT coalesce(json_agg(job_id), '[]') FROM met)::text AS met,
        (SELECT coalesce(json_agg(json_build_array(job_id, need_id, $1::text)), '[]') FROM failed)::text AS failed,
        CASE WHEN $1 <> 'queued' AND EXISTS (SELECT 1 FROM job)
          THEN (SELECT coalesce(json_agg(h), '[]') FROM hooks h WHERE h.on_outcome IN ($1, 'batch-done'))::text END AS hooks,
        (SELECT count(pg_notify($22::text, '')) + count(pg_notify($23::text, 'freed:' || queue))
           + count(CASE WHEN $1 = 'queued' THEN pg_notify($23::text, 'ready:' || queue) END) FROM job)::int AS notified,
        false AS stale`;

export const HOT_PATH_STEP = `
  ALTER TABLE attempts DROP CONSTRAINT attempts_job_id_fkey;
  ALTER TABLE job_events DROP CONSTRAINT job_events_job_id_fkey;
  CREATE FUNCTION spoolctl_jobs_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    DELETE FROM job_events WHERE job_id IN (SELECT id FROM old_rows);
    DELETE FROM attempts WHERE job_id IN (SELECT id FROM old_rows);
    RETURN NULL;
  END $$;
  CREATE TRIGGER jobs_delete_cascade AFTER DELETE ON jobs REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION spoolctl_jobs_deleted();
  CREATE FUNCTION spoolctl_record_outcome(text, int, int, float8, int, text, float8, bigint, text, int, text, float8,
      int, text, text, int, text, text, text[], text[], text[], text, text, text, text)
    RETURNS TABLE (o_n int, o_queue text, o_logged int, o_met text, o_failed text, o_hooks text, o_notified int,
      o_stale boolean)
    LANGUAGE plpgsql AS $fn$
  DECLARE
    seen text;
  BEGIN
    IF $24 IS NOT NULL THEN
      -- Decided on a row the worker kept ($24: its xmin; $25: the settings it read): lock the row, then the
      -- outcome only if neither changed since; else nothing, and the caller decides again on a fresh read.
      SELECT j.xmin::text INTO seen FROM jobs j WHERE j.id = $8 FOR UPDATE;
      IF seen IS DISTINCT FROM $24 OR ${SETTINGS_TEXT} IS DISTINCT FROM $25 THEN
        RETURN QUERY SELECT 0, NULL::text, 0, '[]'::text, '[]'::text, NULL::text, 0, true;
        RETURN;
      END IF;
    END IF;
    RETURN QUERY ${OUTCOME_SQL};
  END $fn$;
`;
