/**
 * The schema steps of the SQLite driver, one SQL script per version, as text:
 * what each version adds and why, in the order they apply. The runner that
 * applies them, and the version checks, are migrations.ts (docs/architecture.md
 * "Migrations").
 */
import { DEAD_COUNTS_STEP } from "./dead-schema.ts";
import { HOLD_STEP } from "./hold-schema.ts";
import { METRICS_STEP } from "./metric-schema.ts";

/** Schema steps; step N takes the file from version N-1 to N. */
export const STEPS: string[] = [
  // v1: the first schema (docs/architecture.md "Migrations").
  `
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    argv TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('queued','running','done','dead','canceled')),
    priority INTEGER NOT NULL DEFAULT 0,
    queue TEXT NOT NULL DEFAULT 'default',
    next_run_at REAL NOT NULL,
    timeout_seconds REAL NOT NULL,
    max_retries INTEGER NOT NULL,
    max_crashes INTEGER,
    attempts INTEGER NOT NULL DEFAULT 0,
    crashes INTEGER NOT NULL DEFAULT 0,
    last_attempt_no INTEGER NOT NULL DEFAULT 0,
    locked_by TEXT,
    locked_pid INTEGER,
    locked_at REAL,
    heartbeat_at REAL,
    last_exit_code INTEGER,
    last_error TEXT,
    idempotency_key TEXT,
    tags TEXT NOT NULL DEFAULT '{}',
    note TEXT,
    cwd TEXT,
    env TEXT NOT NULL DEFAULT '{}',
    created_at REAL NOT NULL,
    started_at REAL,
    finished_at REAL,
    cancel_requested INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX idx_jobs_claimable ON jobs (state, queue, priority DESC, next_run_at ASC, id ASC);
  CREATE INDEX idx_jobs_idempotency_key ON jobs (idempotency_key) WHERE idempotency_key IS NOT NULL;
  CREATE TABLE attempts (
    job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    attempt_no INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('running','succeeded','failed','timed_out','abandoned','canceled')),
    worker_id TEXT NOT NULL,
    worker_pid INTEGER NOT NULL,
    pgid INTEGER,
    pgid_start_time TEXT,
    started_at REAL NOT NULL,
    finished_at REAL,
    exit_code INTEGER,
    signal INTEGER,
    error TEXT,
    failure_reason TEXT CHECK (failure_reason IN ('process_exit','timeout','spawn_failed','worker_crash','canceled')),
    stdout_path TEXT NOT NULL,
    stderr_path TEXT NOT NULL,
    PRIMARY KEY (job_id, attempt_no)
  ) WITHOUT ROWID;
  CREATE TABLE job_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    at REAL NOT NULL,
    event TEXT NOT NULL,
    worker_id TEXT,
    detail TEXT
  );
  CREATE INDEX idx_job_events_job ON job_events (job_id, id);
  CREATE TABLE workers (
    worker_id TEXT PRIMARY KEY,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    boot_id TEXT,
    start_time TEXT,
    queue TEXT NOT NULL,
    started_at REAL NOT NULL,
    heartbeat_at REAL NOT NULL,
    stop_requested INTEGER NOT NULL DEFAULT 0,
    stopped_at REAL
  );
  CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  `,
  // v2: per-lane, per-state counters kept by triggers, so `status` reads a few
  // rows instead of scanning every job (1M jobs: ~110 ms → <1 ms); and an index
  // for the newest dead jobs (`status`, `triage`), which sorted every dead job.
  `
  CREATE TABLE lane_counts (
    queue TEXT NOT NULL,
    state TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (queue, state)
  ) WITHOUT ROWID;
  INSERT INTO lane_counts (queue, state, n) SELECT queue, state, count(*) FROM jobs GROUP BY queue, state;
  CREATE TRIGGER jobs_count_insert AFTER INSERT ON jobs BEGIN
    INSERT INTO lane_counts (queue, state, n) VALUES (NEW.queue, NEW.state, 1)
      ON CONFLICT (queue, state) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER jobs_count_update AFTER UPDATE OF state, queue ON jobs
    WHEN OLD.state IS NOT NEW.state OR OLD.queue IS NOT NEW.queue BEGIN
    UPDATE lane_counts SET n = n - 1 WHERE queue = OLD.queue AND state = OLD.state;
    INSERT INTO lane_counts (queue, state, n) VALUES (NEW.queue, NEW.state, 1)
      ON CONFLICT (queue, state) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER jobs_count_delete AFTER DELETE ON jobs BEGIN
    UPDATE lane_counts SET n = n - 1 WHERE queue = OLD.queue AND state = OLD.state;
  END;
  CREATE INDEX idx_jobs_finished ON jobs (state, finished_at);
  `,
  // v3: \`list --state S\` pages newest first by id; without this index SQLite
  // (no ANALYZE) picked idx_jobs_finished and sorted every done job (1M: ~2 s).
  `
  CREATE INDEX idx_jobs_state_id ON jobs (state, id);
  `,
  // v4: the idempotency rule written into the schema (one active job per key,
  // whatever the isolation level: docs/architecture.md "Rules that rest on
  // isolation"), and the queue's identity, which attempt markers carry.
  `
  DROP INDEX idx_jobs_idempotency_key;
  CREATE INDEX idx_jobs_idempotency_key ON jobs (idempotency_key, id) WHERE idempotency_key IS NOT NULL;
  CREATE UNIQUE INDEX idx_jobs_active_key ON jobs (idempotency_key)
    WHERE idempotency_key IS NOT NULL AND state IN ('queued','running');
  INSERT INTO meta (key, value) VALUES ('queue_id', lower(hex(randomblob(16))));
  `,
  // v5: each attempt's last non-empty stderr line, written with its outcome, so
  // triage groups dead jobs by failure signature without opening 10,000 output
  // files (docs/architecture.md "Triage"). NULL: not recorded (older rows, reaped attempts).
  `
  ALTER TABLE attempts ADD COLUMN stderr_last_line TEXT;
  `,
  // v6: the worker's idle reads answered from an index whatever the backlog
  // (docs/architecture.md "Migrations"): the lane's earliest due time
  // (nextDueAt, drainState's due part) and its jobs waiting out a
  // retry or reap backoff (drainState). min(next_run_at) walked every queued
  // job of the lane before (100,000: ~70 ms per idle wake).
  `
  CREATE INDEX idx_jobs_due ON jobs (queue, next_run_at) WHERE state = 'queued';
  CREATE INDEX idx_jobs_backoff ON jobs (queue) WHERE state = 'queued' AND (attempts > 0 OR crashes > 0);
  `,
  // v7: each attempt records its worker's process start time, so that a later
  // worker under the same id and PID (a restarted container's PID 1) is never
  // taken for the one that ran it (docs/architecture.md "Reaping"). NULL: older rows.
  `
  ALTER TABLE attempts ADD COLUMN worker_start_time TEXT;
  `,
  // v8: each attempt's failure signature line (its stderr line masked, prefixed
  // by the mask version), written with its outcome, so triage's GROUP BY
  // yields a row per failure instead of one per distinct line
  // (docs/architecture.md "Triage"). NULL: not recorded.
  `
  ALTER TABLE attempts ADD COLUMN stderr_signature TEXT;
  `,
  // v9: a job waiting to run again after it has run (last_attempt_no > 0) holds a
  // drain open, whatever reset its budget: a retry/reap backoff as before, and now
  // a job requeued by retry --force, due only once its old worker has stopped the
  // process (docs/architecture.md "Retry", "Drain").
  `
  DROP INDEX idx_jobs_backoff;
  CREATE INDEX idx_jobs_backoff ON jobs (queue) WHERE state = 'queued' AND last_attempt_no > 0;
  `,
  // v10: a worker's PID namespace (the inode of /proc/self/ns/pid) with its
  // identity: two PID namespaces that share a host name (containers) never
  // judge each other's PIDs (docs/architecture.md "Reaping"). NULL: older rows.
  `
  ALTER TABLE workers ADD COLUMN pid_ns TEXT;
  `,
  // v11: recurring schedules and outcome hooks (docs/architecture.md "Recurring jobs", "Hooks").
  // schedules.next_slot is the fence of a slot: a pass fires it only through an UPDATE guarded by
  // the value it read; schedule_slots keeps one row per slot decided (fired, skipped, missed),
  // whose primary key is a second fence and the ledger `schedule list` reads.
  `
  CREATE TABLE schedules (
    name TEXT PRIMARY KEY,
    cron TEXT,
    every_seconds REAL,
    tz TEXT,
    job TEXT NOT NULL,
    queue TEXT NOT NULL,
    catch_up TEXT NOT NULL,
    overlap TEXT NOT NULL,
    paused INTEGER NOT NULL DEFAULT 0,
    next_slot REAL NOT NULL,
    last_slot REAL,
    last_job_id INTEGER,
    created_at REAL NOT NULL
  );
  CREATE INDEX idx_schedules_due ON schedules (next_slot) WHERE paused = 0;
  CREATE TABLE schedule_slots (
    schedule TEXT NOT NULL,
    slot REAL NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('fired','skipped','missed','manual')),
    job_id INTEGER,
    at REAL NOT NULL,
    detail TEXT,
    PRIMARY KEY (schedule, slot)
  );
  CREATE TABLE hooks (
    name TEXT PRIMARY KEY,
    on_outcome TEXT NOT NULL CHECK (on_outcome IN ('done','dead','canceled')),
    match_queue TEXT,
    match_tag_key TEXT,
    match_tag_value TEXT,
    job TEXT NOT NULL,
    created_at REAL NOT NULL
  );
  `,
  // v12: batches with one verdict (docs/architecture.md "Batches"): a named set
  // of jobs, sealed once its last job exists, and its fail-fast property,
  // acted on in the transaction that records a job of it dead.
  `
  CREATE TABLE batches (
    name TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    sealed_at REAL,
    fail_fast TEXT CHECK (fail_fast IN ('queued','now')),
    failed_at REAL,
    failed_job_id INTEGER
  );
  ALTER TABLE jobs ADD COLUMN batch TEXT;
  CREATE INDEX idx_jobs_batch ON jobs (batch, state) WHERE batch IS NOT NULL;
  `,
  // v13: lanes an operator steers (docs/architecture.md "Lanes and slots"): one
  // row per lane that was paused or given a fleet-wide slot ceiling. The claim
  // reads it in its own statement: a paused lane (paused_at set, paused_until
  // NULL or later than the claim's time) starts nothing; `slots`, when set, is
  // the ceiling whatever the workers' --slots flags say.
  `
  CREATE TABLE lanes (
    queue TEXT PRIMARY KEY,
    slots INTEGER CHECK (slots IS NULL OR slots >= 0),
    paused_at REAL,
    paused_until REAL,
    pause_reason TEXT
  ) WITHOUT ROWID;
  `,
  // v14: jobs that wait for jobs (docs/architecture.md "Dependencies"). One row
  // per need in job_needs (met: the need satisfied this dependent; closed: its
  // failure closed it, so retrying it revives the dependent), and on jobs the
  // count of unmet needs, kept in the transactions that meet them, so that the
  // claim reads "needs_left = 0" from its index instead of walking the edges of
  // every blocked job ahead of the first runnable one.
  `
  ALTER TABLE jobs ADD COLUMN needs_left INTEGER NOT NULL DEFAULT 0;
  CREATE TABLE job_needs (
    job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    need_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
    policy TEXT NOT NULL CHECK (policy IN ('success','done')),
    met INTEGER NOT NULL DEFAULT 0,
    closed INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (job_id, need_id)
  ) WITHOUT ROWID;
  CREATE INDEX idx_job_needs_need ON job_needs (need_id, job_id);
  DROP INDEX idx_jobs_claimable;
  CREATE INDEX idx_jobs_claimable ON jobs (state, queue, needs_left, priority DESC, next_run_at ASC, id ASC);
  `,
  // v15: outcome hooks on a batch's end (docs/architecture.md "Hooks"): the
  // outcome's CHECK admits 'batch-done'. SQLite cannot alter a CHECK, so the
  // small table is copied into a new one (it has no index or reference).
  `
  CREATE TABLE hooks_v15 (
    name TEXT PRIMARY KEY,
    on_outcome TEXT NOT NULL CHECK (on_outcome IN ('done','dead','canceled','batch-done')),
    match_queue TEXT,
    match_tag_key TEXT,
    match_tag_value TEXT,
    job TEXT NOT NULL,
    created_at REAL NOT NULL
  );
  INSERT INTO hooks_v15 (name, on_outcome, match_queue, match_tag_key, match_tag_value, job, created_at)
    SELECT name, on_outcome, match_queue, match_tag_key, match_tag_value, job, created_at FROM hooks;
  DROP TABLE hooks;
  ALTER TABLE hooks_v15 RENAME TO hooks;
  `,
  // v16: the counters of `spoolctl metrics`, kept by triggers (metric-schema.ts; docs/architecture.md "Metrics").
  METRICS_STEP,
  // v17: the trace context add found in its environment (docs/architecture.md "Traces"), JSON.
  `ALTER TABLE jobs ADD COLUMN trace TEXT;`,
  // v18: dead jobs kept counted by failure group, by triggers (dead-schema.ts; docs/architecture.md "Kept dead counts").
  DEAD_COUNTS_STEP,
  // v19: `hold` (docs/architecture.md "Holding a job"; hold-schema.ts).
  HOLD_STEP,
  // v20: a job's name (add --name, a --from line's ref; docs/architecture.md "Job names"), looked up like a key.
  `ALTER TABLE jobs ADD COLUMN name TEXT;
  CREATE INDEX jobs_by_name ON jobs (name, id) WHERE name IS NOT NULL;`,
];
