/**
 * Schema v18 of the PostgreSQL driver: the counters behind `spoolctl metrics`
 * (the SQLite driver's v16; docs/architecture.md "Metrics"). As `lane_counts`
 * (v2), statement-level triggers append signed delta rows instead of updating
 * one row per counter, which every claim and every result of a lane would wait
 * for; readers sum the rows, and about one statement in a hundred folds them
 * back into one row per key under a try-lock, so folders never wait for each other.
 */
import { bucketCase } from "../metric-buckets.ts";
import { LOCK_CLASS, LOCK_METRICS } from "./advisory-locks.ts";

const T = "('done','dead','canceled')";
const COLS = "metric_counts (metric, scope, label, bucket, n, s)";

/** Run-time observations of the attempt rows `a` (alias), grouped: the SELECT of an INSERT. */
function runRows(from: string): string {
  const d = "greatest(0, a.finished_at - a.started_at)";
  return `SELECT 'run', j.queue, a.state, ${bucketCase(d)}, count(*), sum(${d})
      FROM ${from} JOIN jobs j ON j.id = a.job_id GROUP BY 1, 2, 3, 4`;
}

/** The step's SQL (one transaction, see migrations.ts). */
export const METRICS_STEP = `
  CREATE TABLE metric_counts (
    metric text NOT NULL, scope text NOT NULL, label text NOT NULL, bucket integer NOT NULL,
    n bigint NOT NULL, s double precision NOT NULL
  );
  CREATE FUNCTION spoolctl_fold_metric_counts() RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    IF random() < 0.01 AND pg_try_advisory_xact_lock(${LOCK_CLASS}, ${LOCK_METRICS}) THEN
      WITH gone AS (DELETE FROM metric_counts RETURNING *)
      INSERT INTO ${COLS}
        SELECT metric, scope, label, bucket, sum(n), sum(s) FROM gone GROUP BY 1, 2, 3, 4;
    END IF;
  END $$;
  CREATE FUNCTION spoolctl_metric_jobs_updated() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO ${COLS}
      SELECT x.m, w.queue, x.label, 0, sum(x.k), 0
      FROM old_rows o JOIN new_rows w ON w.id = o.id
      CROSS JOIN LATERAL (VALUES
        ('finished', w.state, CASE WHEN w.state IN ${T} AND o.state NOT IN ${T} THEN 1 ELSE 0 END),
        ('hook_finished', w.state,
          CASE WHEN w.state IN ${T} AND o.state NOT IN ${T} AND w.idempotency_key LIKE 'hook:%' THEN 1 ELSE 0 END),
        ('retries', '', CASE WHEN w.attempts > o.attempts AND w.state = 'queued' THEN 1 ELSE 0 END),
        ('crashes', '', greatest(w.crashes - o.crashes, 0))
      ) AS x(m, label, k)
      WHERE (o.state <> w.state OR o.attempts <> w.attempts OR o.crashes <> w.crashes) AND x.k > 0
      GROUP BY 1, 2, 3;
    IF FOUND THEN PERFORM spoolctl_fold_metric_counts(); END IF;
    RETURN NULL;
  END $$;
  CREATE FUNCTION spoolctl_metric_jobs_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO ${COLS}
      SELECT 'finished', queue, state, 0, count(*), 0 FROM new_rows WHERE state IN ${T} GROUP BY queue, state;
    RETURN NULL;
  END $$;
  CREATE FUNCTION spoolctl_metric_attempts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO ${COLS}
      SELECT 'wait', queue, '', ${bucketCase("d")}, count(*), sum(d)
      FROM (SELECT j.queue, greatest(0, a.started_at - j.next_run_at) AS d
            FROM new_rows a JOIN jobs j ON j.id = a.job_id) w
      GROUP BY 1, 2, 3, 4;
    INSERT INTO ${COLS}
      ${runRows("(SELECT * FROM new_rows WHERE state <> 'running' AND finished_at IS NOT NULL) a")};
    PERFORM spoolctl_fold_metric_counts();
    RETURN NULL;
  END $$;
  CREATE FUNCTION spoolctl_metric_attempts_updated() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO ${COLS}
      ${runRows(`(SELECT w.* FROM old_rows o JOIN new_rows w ON w.job_id = o.job_id AND w.attempt_no = o.attempt_no
         WHERE o.state = 'running' AND w.state <> 'running' AND w.finished_at IS NOT NULL) a`)};
    RETURN NULL;
  END $$;
  CREATE FUNCTION spoolctl_metric_slots_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO ${COLS} SELECT 'slots', schedule, outcome, 0, count(*), 0 FROM new_rows GROUP BY 1, 2, 3;
    RETURN NULL;
  END $$;
  CREATE TRIGGER jobs_metric_update AFTER UPDATE ON jobs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION spoolctl_metric_jobs_updated();
  CREATE TRIGGER jobs_metric_insert AFTER INSERT ON jobs REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION spoolctl_metric_jobs_inserted();
  CREATE TRIGGER attempts_metric_insert AFTER INSERT ON attempts REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION spoolctl_metric_attempts_inserted();
  CREATE TRIGGER attempts_metric_update AFTER UPDATE ON attempts REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION spoolctl_metric_attempts_updated();
  CREATE TRIGGER schedule_slots_metric_insert AFTER INSERT ON schedule_slots REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION spoolctl_metric_slots_inserted();
  INSERT INTO ${COLS} SELECT 'finished', queue, state, 0, count(*), 0 FROM jobs WHERE state IN ${T} GROUP BY 2, 3;
  INSERT INTO ${COLS} SELECT 'hook_finished', queue, state, 0, count(*), 0 FROM jobs
    WHERE state IN ${T} AND idempotency_key LIKE 'hook:%' GROUP BY 2, 3;
  INSERT INTO ${COLS} SELECT 'crashes', queue, '', 0, sum(crashes), 0 FROM jobs WHERE crashes > 0 GROUP BY 2;
  INSERT INTO ${COLS} SELECT 'retries', j.queue, '', 0, count(*), 0 FROM attempts a JOIN jobs j ON j.id = a.job_id
    WHERE a.state IN ('failed','timed_out') AND a.attempt_no < j.last_attempt_no GROUP BY 2;
  INSERT INTO ${COLS} SELECT 'slots', schedule, outcome, 0, count(*), 0 FROM schedule_slots GROUP BY 2, 3;
  INSERT INTO ${COLS} ${runRows("(SELECT * FROM attempts WHERE state <> 'running' AND finished_at IS NOT NULL) a")};
`;
