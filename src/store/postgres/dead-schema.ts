/**
 * A schema step of the PostgreSQL driver: dead jobs kept counted by failure
 * group, the SQLite driver's dead-schema.ts (docs/architecture.md "Kept dead
 * counts"). Row triggers re-derive one job's `dead_jobs` row from the current
 * rows whenever the job or its last attempt changes; they fire at the end of
 * the statement, so a statement that updates a job and its attempt together
 * (the result's CTE) or a cascade sees both done, and re-deriving twice is a
 * no-op. As `metric_counts`, `dead_counts` takes signed delta rows (no row
 * every dying job of a group would wait for), summed by readers and folded
 * now and then under a try-lock.
 */
import { LOCK_CLASS, LOCK_DEAD_COUNTS } from "./advisory-locks.ts";

/** The group key of job `j` with last attempt `a` (LEFT JOINed): the SQLite driver's text. */
const KEY = `coalesce(a.failure_reason, '') || '|' || coalesce(a.exit_code::text, '') || '|'
  || coalesce(a.signal::text, '') || '|' || CASE WHEN a.job_id IS NULL THEN '' ELSE coalesce(a.stderr_signature, '?') END`;

const PARTS = "gkey, queue, failure_reason, exit_code, signal, signature";

/** The rows of the dead jobs `where` selects (a condition on `j`): the SELECT of an INSERT into dead_jobs. */
function members(where: string): string {
  return `SELECT j.id, ${KEY}, j.queue, a.failure_reason, a.exit_code, a.signal,
      CASE WHEN a.job_id IS NULL THEN '' ELSE a.stderr_signature END, coalesce(j.finished_at, j.created_at)
    FROM jobs j LEFT JOIN attempts a ON a.job_id = j.id AND a.attempt_no = j.last_attempt_no
    WHERE j.state = 'dead' AND ${where}`;
}

/** The step's SQL (one transaction, see migrations.ts); backfills from the rows there are. */
export const DEAD_COUNTS_STEP = `
  CREATE TABLE dead_jobs (
    job_id bigint PRIMARY KEY, gkey text NOT NULL, queue text NOT NULL, failure_reason text,
    exit_code integer, signal integer, signature text, at double precision NOT NULL
  );
  CREATE INDEX idx_dead_jobs_group ON dead_jobs (gkey, at, job_id);
  CREATE TABLE dead_counts (
    gkey text NOT NULL, queue text NOT NULL, failure_reason text, exit_code integer, signal integer,
    signature text, n bigint NOT NULL
  );
  CREATE FUNCTION spoolctl_dead_resync(job bigint) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    WITH gone AS (DELETE FROM dead_jobs WHERE job_id = job RETURNING *)
    INSERT INTO dead_counts SELECT ${PARTS}, -1 FROM gone;
    WITH came AS (INSERT INTO dead_jobs ${members("j.id = job")} RETURNING *)
    INSERT INTO dead_counts SELECT ${PARTS}, 1 FROM came;
    IF random() < 0.01 AND pg_try_advisory_xact_lock(${LOCK_CLASS}, ${LOCK_DEAD_COUNTS}) THEN
      WITH gone AS (DELETE FROM dead_counts RETURNING *)
      INSERT INTO dead_counts SELECT ${PARTS}, sum(n) FROM gone GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(n) <> 0;
    END IF;
  END $$;
  CREATE FUNCTION spoolctl_dead_job_changed() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'DELETE' THEN PERFORM spoolctl_dead_resync(OLD.id); ELSE PERFORM spoolctl_dead_resync(NEW.id); END IF;
    RETURN NULL;
  END $$;
  CREATE FUNCTION spoolctl_dead_attempt_changed() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    r attempts;
  BEGIN
    IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
    IF EXISTS (SELECT 1 FROM jobs WHERE id = r.job_id AND state = 'dead' AND last_attempt_no = r.attempt_no) THEN
      PERFORM spoolctl_dead_resync(r.job_id);
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER jobs_dead_insert AFTER INSERT ON jobs FOR EACH ROW WHEN (NEW.state = 'dead')
    EXECUTE FUNCTION spoolctl_dead_job_changed();
  CREATE TRIGGER jobs_dead_update AFTER UPDATE OF state, last_attempt_no, queue, finished_at ON jobs FOR EACH ROW
    WHEN (OLD.state = 'dead' OR NEW.state = 'dead') EXECUTE FUNCTION spoolctl_dead_job_changed();
  CREATE TRIGGER jobs_dead_delete AFTER DELETE ON jobs FOR EACH ROW WHEN (OLD.state = 'dead')
    EXECUTE FUNCTION spoolctl_dead_job_changed();
  CREATE TRIGGER attempts_dead_insert AFTER INSERT ON attempts FOR EACH ROW
    EXECUTE FUNCTION spoolctl_dead_attempt_changed();
  CREATE TRIGGER attempts_dead_update AFTER UPDATE OF failure_reason, exit_code, signal, stderr_signature ON attempts
    FOR EACH ROW WHEN (OLD.failure_reason IS DISTINCT FROM NEW.failure_reason OR OLD.exit_code IS DISTINCT FROM NEW.exit_code
      OR OLD.signal IS DISTINCT FROM NEW.signal OR OLD.stderr_signature IS DISTINCT FROM NEW.stderr_signature)
    EXECUTE FUNCTION spoolctl_dead_attempt_changed();
  CREATE TRIGGER attempts_dead_delete AFTER DELETE ON attempts FOR EACH ROW
    EXECUTE FUNCTION spoolctl_dead_attempt_changed();
  INSERT INTO dead_jobs ${members("true")};
  INSERT INTO dead_counts SELECT ${PARTS}, count(*) FROM dead_jobs GROUP BY 1, 2, 3, 4, 5, 6;
`;

/** The backfill alone, for a bulk load that ran with triggers off (bench/build-1m-pg.ts). */
export const DEAD_COUNTS_BACKFILL = `
  DELETE FROM dead_jobs; DELETE FROM dead_counts;
  INSERT INTO dead_jobs ${members("true")};
  INSERT INTO dead_counts SELECT ${PARTS}, count(*) FROM dead_jobs GROUP BY 1, 2, 3, 4, 5, 6;
`;
