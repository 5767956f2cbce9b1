/**
 * Schema v16 of the SQLite driver: the counters behind `spoolctl metrics`
 * (docs/architecture.md "Metrics"), kept by triggers in the transactions that
 * change the rows, so a scrape reads a few dozen rows whatever the number of
 * jobs, and the counters keep counting when jobs are pruned or deleted (a
 * counter from the ledger must never go down).
 */
import { bucketCase } from "../metric-buckets.ts";

const TERMINAL = "('done','dead','canceled')";
const UPSERT = "ON CONFLICT (metric, scope, label, bucket) DO UPDATE SET n = n + excluded.n, s = s + excluded.s";

/** The observation of an attempt's run time, `a` its row. */
function runInsert(a: string): string {
  const d = `max(0, ${a}.finished_at - ${a}.started_at)`;
  return `INSERT INTO metric_counts (metric, scope, label, bucket, n, s)
      SELECT 'run', j.queue, ${a}.state, ${bucketCase(d)}, 1, ${d} FROM jobs j WHERE j.id = ${a}.job_id ${UPSERT};`;
}

/** The step's SQL (one transaction, see migrations.ts). */
export const METRICS_STEP = `
  CREATE TABLE metric_counts (
    metric TEXT NOT NULL,
    scope TEXT NOT NULL,
    label TEXT NOT NULL,
    bucket INTEGER NOT NULL,
    n INTEGER NOT NULL,
    s REAL NOT NULL,
    PRIMARY KEY (metric, scope, label, bucket)
  ) WITHOUT ROWID;
  CREATE TRIGGER jobs_metric_finished AFTER UPDATE OF state ON jobs
    WHEN NEW.state IN ${TERMINAL} AND OLD.state NOT IN ${TERMINAL} BEGIN
    INSERT INTO metric_counts VALUES ('finished', NEW.queue, NEW.state, 0, 1, 0) ${UPSERT};
    INSERT INTO metric_counts SELECT 'hook_finished', NEW.queue, NEW.state, 0, 1, 0
      WHERE NEW.idempotency_key LIKE 'hook:%' ${UPSERT};
  END;
  CREATE TRIGGER jobs_metric_inserted AFTER INSERT ON jobs WHEN NEW.state IN ${TERMINAL} BEGIN
    INSERT INTO metric_counts VALUES ('finished', NEW.queue, NEW.state, 0, 1, 0) ${UPSERT};
  END;
  CREATE TRIGGER jobs_metric_retried AFTER UPDATE OF attempts ON jobs
    WHEN NEW.attempts > OLD.attempts AND NEW.state = 'queued' BEGIN
    INSERT INTO metric_counts VALUES ('retries', NEW.queue, '', 0, 1, 0) ${UPSERT};
  END;
  CREATE TRIGGER jobs_metric_crashed AFTER UPDATE OF crashes ON jobs WHEN NEW.crashes > OLD.crashes BEGIN
    INSERT INTO metric_counts VALUES ('crashes', NEW.queue, '', 0, NEW.crashes - OLD.crashes, 0) ${UPSERT};
  END;
  CREATE TRIGGER attempts_metric_started AFTER INSERT ON attempts BEGIN
    INSERT INTO metric_counts (metric, scope, label, bucket, n, s)
      SELECT 'wait', j.queue, '', ${bucketCase("max(0, NEW.started_at - j.next_run_at)")}, 1,
        max(0, NEW.started_at - j.next_run_at) FROM jobs j WHERE j.id = NEW.job_id ${UPSERT};
  END;
  CREATE TRIGGER attempts_metric_inserted_ended AFTER INSERT ON attempts
    WHEN NEW.state <> 'running' AND NEW.finished_at IS NOT NULL BEGIN
    ${runInsert("NEW")}
  END;
  CREATE TRIGGER attempts_metric_ended AFTER UPDATE OF state ON attempts
    WHEN OLD.state = 'running' AND NEW.state <> 'running' AND NEW.finished_at IS NOT NULL BEGIN
    ${runInsert("NEW")}
  END;
  CREATE TRIGGER schedule_slots_metric AFTER INSERT ON schedule_slots BEGIN
    INSERT INTO metric_counts VALUES ('slots', NEW.schedule, NEW.outcome, 0, 1, 0) ${UPSERT};
  END;
  -- What the rows kept already say (the counters start from them: retries from failed attempts that another followed; the wait histogram starts empty).
  INSERT INTO metric_counts SELECT 'finished', queue, state, 0, count(*), 0 FROM jobs
    WHERE state IN ${TERMINAL} GROUP BY queue, state;
  INSERT INTO metric_counts SELECT 'hook_finished', queue, state, 0, count(*), 0 FROM jobs
    WHERE state IN ${TERMINAL} AND idempotency_key LIKE 'hook:%' GROUP BY queue, state;
  INSERT INTO metric_counts SELECT 'crashes', queue, '', 0, sum(crashes), 0 FROM jobs
    WHERE crashes > 0 GROUP BY queue;
  INSERT INTO metric_counts SELECT 'retries', j.queue, '', 0, count(*), 0 FROM attempts a JOIN jobs j ON j.id = a.job_id
    WHERE a.state IN ('failed','timed_out') AND a.attempt_no < j.last_attempt_no GROUP BY j.queue;
  INSERT INTO metric_counts SELECT 'slots', schedule, outcome, 0, count(*), 0 FROM schedule_slots
    GROUP BY schedule, outcome;
  INSERT INTO metric_counts
    SELECT 'run', j.queue, a.state, ${bucketCase("max(0, a.finished_at - a.started_at)")}, count(*),
      sum(max(0, a.finished_at - a.started_at))
    FROM attempts a JOIN jobs j ON j.id = a.job_id WHERE a.state <> 'running' AND a.finished_at IS NOT NULL
    GROUP BY 1, 2, 3, 4;
`;
