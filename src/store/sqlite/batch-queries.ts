/**
 * The batch statements of the SQLite driver (docs/architecture.md "Batches"),
 * run inside the caller's `BEGIN IMMEDIATE` transaction: SQLite admits one
 * writer, so an add, a seal and a fail-fast never interleave. Mirrors
 * src/store/postgres/batch-queries.ts.
 */
import type { Database } from "bun:sqlite";
import type { BatchAdd, BatchRow, BatchView, EventName, FailFastMode } from "../../model/job.ts";
import {
  BATCH_VIEW_COLUMNS,
  batchClosed,
  failFastDetail,
  failFastErrorSql,
  RUNS_ALWAYS_SQL,
  toBatchView,
} from "../batches.ts";

/** Appends a ledger row in the open transaction. */
export type EventSink = (jobId: number, event: EventName, workerId: string | null, detail: string | null) => void;

type Row = Record<string, unknown>;

/** A batch with its counts, or null. */
export function getBatch(db: Database, name: string): BatchView | null {
  const row = db
    .query(
      `SELECT ${BATCH_VIEW_COLUMNS} FROM batches b LEFT JOIN jobs j ON j.batch = b.name WHERE b.name = ? GROUP BY b.name`,
    )
    .get(name) as Row | null;
  return row ? toBatchView(row) : null;
}

/** Batches with their counts, newest first. */
export function listBatches(db: Database, limit: number): BatchView[] {
  const rows = db
    .query(
      `SELECT ${BATCH_VIEW_COLUMNS} FROM batches b LEFT JOIN jobs j ON j.batch = b.name
       GROUP BY b.name ORDER BY b.created_at DESC, b.name LIMIT ?`,
    )
    .all(limit) as Row[];
  return rows.map(toBatchView);
}

/**
 * Creates or joins the batch an add puts its jobs in. Guard, in the upsert:
 * a sealed or failed batch is not updated, so no row comes back and the add
 * is refused (`CONFLICT`) before any job is inserted. `now` wins over `queued`.
 */
export function joinBatch(db: Database, batch: BatchAdd, now: number): void {
  const joined = db
    .query(
      `INSERT INTO batches (name, created_at, fail_fast) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET
         fail_fast = CASE WHEN batches.fail_fast = 'now' THEN 'now' ELSE coalesce(excluded.fail_fast, batches.fail_fast) END
       WHERE batches.sealed_at IS NULL AND batches.failed_at IS NULL
       RETURNING name`,
    )
    .get(batch.name, now, batch.failFast);
  if (!joined)
    throw batchClosed(batch.name, db.query("SELECT * FROM batches WHERE name = ?").get(batch.name) as BatchRow | null);
}

/** Seals a batch, creating it empty when there is none of that name (the first seal's time is kept). */
export function sealBatch(db: Database, name: string, now: number): BatchView {
  db.query(
    `INSERT INTO batches (name, created_at, sealed_at) VALUES (?1, ?2, ?2)
     ON CONFLICT (name) DO UPDATE SET sealed_at = coalesce(batches.sealed_at, excluded.sealed_at)`,
  ).run(name, now);
  return getBatch(db, name)!;
}

/** Sets the fail-fast property (`now` wins), then fails the batch at once when a job of it is already dead; `canceled`: the queued jobs that cancel ended. */
export function setBatchFailFast(
  db: Database,
  events: EventSink,
  name: string,
  mode: FailFastMode,
  now: number,
): { batch: BatchView | null; canceled: number[] } {
  const set = db
    .query(
      "UPDATE batches SET fail_fast = CASE WHEN fail_fast = 'now' THEN 'now' ELSE ? END WHERE name = ? RETURNING failed_at",
    )
    .get(mode, name) as { failed_at: number | null } | null;
  if (!set) return { batch: null, canceled: [] };
  let canceled: number[] = [];
  if (set.failed_at === null) {
    const dead = db
      .query("SELECT id FROM jobs WHERE batch = ? AND state = 'dead' ORDER BY finished_at, id LIMIT 1")
      .get(name) as { id: number } | null;
    if (dead) canceled = failFastOnDead(db, events, dead.id, now)?.canceled ?? [];
  }
  return { batch: getBatch(db, name), canceled };
}

/** What a fail-fast did: the batch, the queued jobs it canceled, the running ones it asked to stop. */
export interface FailFastEffect {
  batch: string;
  canceled: number[];
  stopping: number[];
}

/**
 * THE "job ended dead → fail its batch" effect (docs/architecture.md
 * "Batches"), called in the transaction that records job `jobId` dead
 * (recordAttempt: a worker's result, a reap, an orphan's cancel) and by
 * {@link setBatchFailFast}. Guard, in the UPDATE: the job's batch has
 * fail-fast and is not failed yet; then, in the same transaction, every
 * queued job of the batch becomes `canceled` (reason `fail_fast`) and, with
 * mode `now`, every running one gets `cancel_requested` as `cancel --running`
 * sets it. Null when nothing was failed.
 */
export function failFastOnDead(db: Database, events: EventSink, jobId: number, now: number): FailFastEffect | null {
  const failed = db
    .query(
      `UPDATE batches SET failed_at = ?1, failed_job_id = ?2
       WHERE name = (SELECT batch FROM jobs WHERE id = ?2) AND fail_fast IS NOT NULL AND failed_at IS NULL
       RETURNING name, fail_fast`,
    )
    .get(now, jobId) as { name: string; fail_fast: FailFastMode } | null;
  if (!failed) return null;
  const canceled = (
    db
      .query(
        `UPDATE jobs SET state = 'canceled', finished_at = ?1, last_error = ${failFastErrorSql("batch", "?3")}
         WHERE batch = ?2 AND state = 'queued' AND NOT ${RUNS_ALWAYS_SQL} RETURNING id`,
      )
      .all(now, failed.name, jobId) as { id: number }[]
  ).map((r) => r.id);
  for (const id of canceled) events(id, "canceled", null, failFastDetail(failed.name, jobId, { from: "queued" }));
  const stopping: number[] = [];
  if (failed.fail_fast === "now") {
    const rows = db
      .query(
        `UPDATE jobs SET cancel_requested = 1
         WHERE batch = ? AND state = 'running' AND cancel_requested = 0 AND NOT ${RUNS_ALWAYS_SQL}
         RETURNING id, last_attempt_no, locked_by`,
      )
      .all(failed.name) as { id: number; last_attempt_no: number; locked_by: string | null }[];
    for (const r of rows) {
      stopping.push(r.id);
      const detail = failFastDetail(failed.name, jobId, { attempt: r.last_attempt_no, worker: r.locked_by });
      events(r.id, "cancel_requested", null, detail);
    }
  }
  return { batch: failed.name, canceled, stopping };
}

/**
 * A job requeued for a retry in a batch that fail-fast failed is canceled
 * instead (reason `fail_fast`), in the transaction that requeued it: no job
 * of a failed batch is left queued. Returns whether it was.
 */
export function cancelRequeuedInFailedBatch(db: Database, events: EventSink, jobId: number, now: number): boolean {
  const row = db
    .query(
      `UPDATE jobs SET state = 'canceled', finished_at = ?1,
         last_error = ${failFastErrorSql("jobs.batch", "(SELECT failed_job_id FROM batches WHERE name = jobs.batch)")}
       WHERE id = ?2 AND state = 'queued' AND NOT ${RUNS_ALWAYS_SQL}
         AND batch IN (SELECT name FROM batches WHERE failed_at IS NOT NULL)
       RETURNING batch, (SELECT failed_job_id FROM batches WHERE name = jobs.batch) AS failed_job`,
    )
    .get(now, jobId) as { batch: string; failed_job: number } | null;
  if (!row) return false;
  events(jobId, "canceled", null, failFastDetail(row.batch, row.failed_job, { from: "retry" }));
  return true;
}

/**
 * A retry or rerun of jobs of a batch that fail-fast failed reopens its
 * verdict (docs/architecture.md "Batches"), in the transaction that requeued
 * them: `failed_at` is cleared, so the batch is not settled while they run
 * and fail-fast is armed again. Returns the batches reopened.
 */
export function reopenFailedBatches(db: Database, jobIds: number[]): string[] {
  if (jobIds.length === 0) return [];
  return (
    db
      .query(
        `UPDATE batches SET failed_at = NULL, failed_job_id = NULL
         WHERE failed_at IS NOT NULL AND name IN (SELECT batch FROM jobs WHERE id IN (SELECT value FROM json_each(?)))
         RETURNING name`,
      )
      .all(JSON.stringify(jobIds)) as { name: string }[]
  ).map((r) => r.name);
}
