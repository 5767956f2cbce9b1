/**
 * A schema step of the SQLite driver: dead jobs kept counted by failure group
 * (docs/architecture.md "Triage", "Kept dead counts"), so the web view's
 * triage page and a metrics scrape read a few rows instead of grouping every
 * dead job. `dead_jobs` holds one row per dead job with its group (the last
 * attempt's reason, exit code, signal and recorded stderr signature);
 * `dead_counts` the number of them by group and lane. Triggers keep both in
 * the transactions that change the rows: any change to a dead job, to a job
 * becoming or ceasing to be dead, or to its last attempt re-derives that one
 * job's row from the current rows (delete, then insert), so the counts equal
 * a fresh GROUP BY whatever the order of the statements that led there.
 */

/**
 * The group key of job `j` with last attempt `a` (LEFT JOINed): reason, exit
 * code, signal and signature, `|`-separated; `?` for a signature not recorded,
 * all empty for a job that never ran. The same text as the PostgreSQL driver's.
 */
const DEAD_GROUP_KEY = `coalesce(a.failure_reason, '') || '|' || coalesce(CAST(a.exit_code AS TEXT), '') || '|'
  || coalesce(CAST(a.signal AS TEXT), '') || '|' || CASE WHEN a.job_id IS NULL THEN '' ELSE coalesce(a.stderr_signature, '?') END`;

/** The `dead_jobs` rows of the dead jobs `where` selects (a condition on `j`). */
function members(where: string): string {
  return `INSERT INTO dead_jobs (job_id, gkey, queue, failure_reason, exit_code, signal, signature, at)
    SELECT j.id, ${DEAD_GROUP_KEY}, j.queue, a.failure_reason, a.exit_code, a.signal,
      CASE WHEN a.job_id IS NULL THEN '' ELSE a.stderr_signature END, coalesce(j.finished_at, j.created_at)
    FROM jobs j LEFT JOIN attempts a ON a.job_id = j.id AND a.attempt_no = j.last_attempt_no
    WHERE j.state = 'dead' AND ${where};`;
}

/** Re-derives job `id`'s row: gone unless it is dead now. */
function resync(id: string): string {
  return `DELETE FROM dead_jobs WHERE job_id = ${id}; ${members(`j.id = ${id}`)}`;
}

/** Whether `r` (NEW or OLD of attempts) is the last attempt of a dead job. */
function lastOfDead(r: string): string {
  return `EXISTS (SELECT 1 FROM jobs WHERE id = ${r}.job_id AND state = 'dead' AND last_attempt_no = ${r}.attempt_no)`;
}

/** The step's SQL (one transaction, see migrations.ts); backfills from the rows there are. */
export const DEAD_COUNTS_STEP = `
  CREATE TABLE dead_jobs (
    job_id INTEGER PRIMARY KEY,
    gkey TEXT NOT NULL,
    queue TEXT NOT NULL,
    failure_reason TEXT,
    exit_code INTEGER,
    signal INTEGER,
    signature TEXT,
    at REAL NOT NULL
  );
  CREATE INDEX idx_dead_jobs_group ON dead_jobs (gkey, at, job_id);
  CREATE TABLE dead_counts (
    gkey TEXT NOT NULL,
    queue TEXT NOT NULL,
    failure_reason TEXT,
    exit_code INTEGER,
    signal INTEGER,
    signature TEXT,
    n INTEGER NOT NULL,
    PRIMARY KEY (gkey, queue)
  ) WITHOUT ROWID;
  CREATE TRIGGER dead_jobs_counted AFTER INSERT ON dead_jobs BEGIN
    INSERT INTO dead_counts VALUES (NEW.gkey, NEW.queue, NEW.failure_reason, NEW.exit_code, NEW.signal, NEW.signature, 1)
      ON CONFLICT (gkey, queue) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER dead_jobs_uncounted AFTER DELETE ON dead_jobs BEGIN
    UPDATE dead_counts SET n = n - 1 WHERE gkey = OLD.gkey AND queue = OLD.queue;
    DELETE FROM dead_counts WHERE gkey = OLD.gkey AND queue = OLD.queue AND n <= 0;
  END;
  CREATE TRIGGER jobs_dead_inserted AFTER INSERT ON jobs WHEN NEW.state = 'dead' BEGIN
    ${members("j.id = NEW.id")}
  END;
  CREATE TRIGGER jobs_dead_updated AFTER UPDATE OF state, last_attempt_no, queue, finished_at ON jobs
    WHEN OLD.state = 'dead' OR NEW.state = 'dead' BEGIN
    ${resync("NEW.id")}
  END;
  CREATE TRIGGER jobs_dead_deleted AFTER DELETE ON jobs WHEN OLD.state = 'dead' BEGIN
    DELETE FROM dead_jobs WHERE job_id = OLD.id;
  END;
  CREATE TRIGGER attempts_dead_inserted AFTER INSERT ON attempts WHEN ${lastOfDead("NEW")} BEGIN
    ${resync("NEW.job_id")}
  END;
  CREATE TRIGGER attempts_dead_updated AFTER UPDATE OF failure_reason, exit_code, signal, stderr_signature ON attempts
    WHEN ${lastOfDead("NEW")} BEGIN
    ${resync("NEW.job_id")}
  END;
  CREATE TRIGGER attempts_dead_deleted AFTER DELETE ON attempts WHEN ${lastOfDead("OLD")} BEGIN
    ${resync("OLD.job_id")}
  END;
  ${members("1")}
`;
