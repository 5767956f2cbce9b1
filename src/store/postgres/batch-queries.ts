/**
 * The batch statements of the PostgreSQL driver (docs/architecture.md
 * "Batches"), run inside the caller's READ COMMITTED write transaction.
 * Every statement that decides on a batch locks its row first (the upsert of
 * an add, the seal, the fail-fast UPDATE, the retry check's FOR SHARE), so
 * an add, a seal, a fail-fast and a requeue of the same batch are serialised
 * on that row: whichever comes second sees the first's commit.
 * Mirrors src/store/sqlite/batch-queries.ts.
 */
import type { SQL } from "bun";
import type { BatchAdd, BatchRow, BatchView, FailFastMode } from "../../model/job.ts";
import {
  BATCH_VIEW_COLUMNS,
  batchClosed,
  failFastDetail,
  failFastErrorSql,
  RUNS_ALWAYS_SQL,
  toBatchView,
} from "../batches.ts";
import type { TxEffects } from "./events.ts";
import { num } from "./rows.ts";

type Row = Record<string, unknown>;

/** A batch with its counts, or null. */
export async function getBatch(tx: SQL, name: string): Promise<BatchView | null> {
  const [row] = await tx.unsafe(
    `SELECT ${BATCH_VIEW_COLUMNS} FROM batches b LEFT JOIN jobs j ON j.batch = b.name WHERE b.name = $1 GROUP BY b.name`,
    [name],
  );
  return row ? toBatchView(row) : null;
}

/** Batches with their counts, newest first. */
export async function listBatches(tx: SQL, limit: number): Promise<BatchView[]> {
  const rows = await tx.unsafe(
    `SELECT ${BATCH_VIEW_COLUMNS} FROM batches b LEFT JOIN jobs j ON j.batch = b.name
     GROUP BY b.name ORDER BY b.created_at DESC, b.name LIMIT $1`,
    [limit],
  );
  return (rows as Row[]).map(toBatchView);
}

/**
 * Creates or joins the batch an add puts its jobs in. Guard, in the upsert:
 * a sealed or failed batch is not updated, so no row comes back and the add is
 * refused (`CONFLICT`). The upsert locks the row either way, to COMMIT: a seal
 * or fail-fast of the batch waits for this add and then sees its jobs.
 */
export async function joinBatch(tx: SQL, batch: BatchAdd, now: number): Promise<void> {
  const joined = await tx`INSERT INTO batches (name, created_at, fail_fast)
    VALUES (${batch.name}, ${now}::float8, ${batch.failFast}::text)
    ON CONFLICT (name) DO UPDATE SET
      fail_fast = CASE WHEN batches.fail_fast = 'now' THEN 'now' ELSE coalesce(excluded.fail_fast, batches.fail_fast) END
    WHERE batches.sealed_at IS NULL AND batches.failed_at IS NULL
    RETURNING name`;
  if (joined.length > 0) return;
  const [row] = await tx`SELECT * FROM batches WHERE name = ${batch.name}`;
  throw batchClosed(batch.name, (row as BatchRow | undefined) ?? null);
}

/** Seals a batch, creating it empty when there is none of that name (the first seal's time is kept). */
export async function sealBatch(tx: SQL, name: string, now: number): Promise<BatchView> {
  await tx`INSERT INTO batches (name, created_at, sealed_at) VALUES (${name}, ${now}::float8, ${now}::float8)
    ON CONFLICT (name) DO UPDATE SET sealed_at = coalesce(batches.sealed_at, excluded.sealed_at)`;
  return (await getBatch(tx, name))!;
}

/** Sets the fail-fast property (`now` wins), then fails the batch at once when a job of it is already dead. */
export async function setBatchFailFast(
  tx: SQL,
  effects: TxEffects,
  name: string,
  mode: FailFastMode,
  now: number,
): Promise<{ batch: BatchView | null; canceled: number[] }> {
  // The UPDATE locks the row: a dead outcome racing it either committed before (seen below) or waits and sees the property.
  const [set] = await tx`UPDATE batches SET fail_fast = CASE WHEN fail_fast = 'now' THEN 'now' ELSE ${mode} END
    WHERE name = ${name} RETURNING failed_at`;
  if (!set) return { batch: null, canceled: [] };
  let canceled: number[] = [];
  if (set.failed_at === null) {
    const [dead] =
      await tx`SELECT id FROM jobs WHERE batch = ${name} AND state = 'dead' ORDER BY finished_at, id LIMIT 1`;
    if (dead) canceled = (await failFastOnDead(tx, effects, num(dead.id), now))?.canceled ?? [];
  }
  return { batch: await getBatch(tx, name), canceled };
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
 * {@link setBatchFailFast}. The batch row is locked whatever it holds (an
 * UPDATE that may change nothing), so a concurrent `setBatchFailFast` or add
 * is ordered against this outcome. Guard, in that UPDATE: fail-fast set and
 * not failed yet; then every queued job of the batch becomes `canceled`
 * (reason `fail_fast`), and with `now` every running one gets
 * `cancel_requested`. Null when nothing was failed.
 */
export async function failFastOnDead(
  tx: SQL,
  effects: TxEffects,
  jobId: number,
  now: number,
): Promise<FailFastEffect | null> {
  const [row] = await tx`UPDATE batches SET
      failed_at = CASE WHEN fail_fast IS NOT NULL AND failed_at IS NULL THEN ${now}::float8 ELSE failed_at END,
      failed_job_id = CASE WHEN fail_fast IS NOT NULL AND failed_at IS NULL THEN ${jobId}::bigint ELSE failed_job_id END
    WHERE name = (SELECT batch FROM jobs WHERE id = ${jobId}::bigint)
    RETURNING name, fail_fast, (failed_at = ${now}::float8 AND failed_job_id = ${jobId}::bigint) AS failed_now`;
  if (!row?.failed_now) return null;
  const name = row.name as string;
  const canceled = (
    (await tx.unsafe(
      `UPDATE jobs SET state = 'canceled', finished_at = $1::float8, last_error = ${failFastErrorSql("batch", "$3::bigint")}
       WHERE batch = $2 AND state = 'queued' AND NOT ${RUNS_ALWAYS_SQL} RETURNING id`,
      [now, name, jobId],
    )) as Row[]
  ).map((r) => num(r.id));
  for (const id of canceled) {
    const detail = failFastDetail(name, jobId, { from: "queued" });
    effects.append({ jobId: id, event: "canceled", workerId: null, detail, at: now });
  }
  const stopping: number[] = [];
  if (row.fail_fast === "now") {
    const rows = (await tx.unsafe(
      `UPDATE jobs SET cancel_requested = true
       WHERE batch = $1 AND state = 'running' AND NOT cancel_requested AND NOT ${RUNS_ALWAYS_SQL}
       RETURNING id, last_attempt_no, locked_by`,
      [name],
    )) as Row[];
    for (const r of rows) {
      stopping.push(num(r.id));
      const detail = failFastDetail(name, jobId, { attempt: r.last_attempt_no, worker: r.locked_by });
      effects.append({ jobId: num(r.id), event: "cancel_requested", workerId: null, detail, at: now });
    }
  }
  effects.notify = effects.work.all = true;
  return { batch: name, canceled, stopping };
}

/**
 * A job requeued for a retry in a batch that fail-fast failed is canceled
 * instead (reason `fail_fast`), in the transaction that requeued it. The
 * batch row is read FOR SHARE: a fail-fast of it in flight is waited for and
 * its failure seen; one that comes later sees this job queued and cancels it.
 */
export async function cancelRequeuedInFailedBatch(
  tx: SQL,
  effects: TxEffects,
  jobId: number,
  now: number,
): Promise<boolean> {
  const [batch] = await tx`SELECT b.name, b.failed_at, b.failed_job_id FROM batches b
    WHERE b.name = (SELECT batch FROM jobs WHERE id = ${jobId}::bigint) FOR SHARE`;
  if (!batch || batch.failed_at === null) return false;
  const done = await tx.unsafe(
    `UPDATE jobs SET state = 'canceled', finished_at = $1::float8, last_error = ${failFastErrorSql("batch", "$3::bigint")}
     WHERE id = $2::bigint AND state = 'queued' AND NOT ${RUNS_ALWAYS_SQL} RETURNING 1`,
    [now, jobId, batch.failed_job_id],
  );
  if (done.length === 0) return false;
  const detail = failFastDetail(batch.name as string, num(batch.failed_job_id), { from: "retry" });
  effects.append({ jobId, event: "canceled", workerId: null, detail, at: now });
  return true;
}

/**
 * A retry or rerun of jobs of a batch that fail-fast failed reopens its
 * verdict (docs/architecture.md "Batches"), in the transaction that requeued
 * them: `failed_at` is cleared, so the batch is not settled while they run
 * and fail-fast is armed again. Returns the batches reopened.
 */
export async function reopenFailedBatches(tx: SQL, jobIds: number[]): Promise<string[]> {
  if (jobIds.length === 0) return [];
  const rows = await tx`UPDATE batches SET failed_at = NULL, failed_job_id = NULL
    WHERE failed_at IS NOT NULL AND name IN (SELECT batch FROM jobs WHERE id = ANY(${jobIds}::bigint[]))
    RETURNING name`;
  return (rows as Row[]).map((r) => r.name as string);
}
