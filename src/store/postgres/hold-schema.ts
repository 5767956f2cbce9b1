/**
 * The PostgreSQL schema step of `hold` (docs/architecture.md "Holding a job"),
 * v21 of src/store/postgres/schema-steps.ts (the SQLite driver's v19).
 */

/**
 * v21: a queued job the claim passes over until `release`; a job that leaves
 * queued drops the flag (the trigger's WHEN is checked without calling the
 * function, so other updates of state pay nothing).
 */
export const HOLD_STEP = `
  ALTER TABLE jobs ADD COLUMN held boolean NOT NULL DEFAULT false;
  DROP INDEX idx_jobs_claimable;
  CREATE INDEX idx_jobs_claimable ON jobs (state, queue, needs_left, held, priority DESC, next_run_at ASC, id ASC);
  CREATE FUNCTION spoolctl_unhold() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    NEW.held := false;
    RETURN NEW;
  END $$;
  CREATE TRIGGER jobs_unhold BEFORE UPDATE OF state ON jobs
    FOR EACH ROW WHEN (NEW.held AND NEW.state <> 'queued') EXECUTE FUNCTION spoolctl_unhold();
`;
