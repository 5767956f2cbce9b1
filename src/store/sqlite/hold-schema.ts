/**
 * The SQLite schema step of `hold` (docs/architecture.md "Holding a job"),
 * v19 of src/store/sqlite/schema-steps.ts.
 */

/**
 * v19: a queued job the claim passes over until `release`. A flag, not a
 * state: the job stays queued for needs, batches and idempotency keys. The
 * claim's index gains it, so the claim stays one index range however many jobs
 * are held. A job that leaves queued (canceled, deleted's cancel, fail-fast)
 * drops the flag, so a retry brings it back free: one trigger instead of every
 * writer of state.
 */
export const HOLD_STEP = `
  ALTER TABLE jobs ADD COLUMN held INTEGER NOT NULL DEFAULT 0;
  DROP INDEX idx_jobs_claimable;
  CREATE INDEX idx_jobs_claimable ON jobs (state, queue, needs_left, held, priority DESC, next_run_at ASC, id ASC);
  CREATE TRIGGER jobs_unhold AFTER UPDATE OF state ON jobs
    WHEN NEW.held = 1 AND NEW.state <> 'queued' BEGIN
    UPDATE jobs SET held = 0 WHERE id = NEW.id;
  END;
`;
