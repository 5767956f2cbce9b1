/**
 * What both drivers share about batches (docs/architecture.md "Batches"): the
 * counting statement's shape turned into a {@link BatchView}, the error of an
 * add refused by a closed batch, and the text a fail-fast cancel records.
 */
import { SpoolError } from "../contract/errors.ts";
import { type BatchRow, type BatchView, JOB_STATES, type JobState } from "../model/job.ts";

type Row = Record<string, unknown>;

const num = (v: unknown): number => (typeof v === "number" ? v : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));

/**
 * The columns a batch view is read with, after `FROM batches b LEFT JOIN jobs j
 * ON j.batch = b.name … GROUP BY b.name` (the same text for both drivers).
 */
export const BATCH_VIEW_COLUMNS = `b.name, b.created_at, b.sealed_at, b.fail_fast, b.failed_at, b.failed_job_id,
  count(j.id) AS total, ${JOB_STATES.map((s) => `count(CASE WHEN j.state = '${s}' THEN 1 END) AS n_${s}`).join(", ")}`;

/** A row read with {@link BATCH_VIEW_COLUMNS} as a {@link BatchView} (numbers, whatever the driver returned). */
export function toBatchView(row: Row): BatchView {
  const counts = Object.fromEntries(JOB_STATES.map((s) => [s, num(row[`n_${s}`])])) as Record<JobState, number>;
  return {
    name: row.name as string,
    created_at: num(row.created_at),
    sealed_at: numOrNull(row.sealed_at),
    fail_fast: (row.fail_fast as BatchRow["fail_fast"]) ?? null,
    failed_at: numOrNull(row.failed_at),
    failed_job_id: numOrNull(row.failed_job_id),
    counts,
    total: num(row.total),
  };
}

/** The `last_error` of a job fail-fast canceled, as SQL over `jobs.batch` and the failing job's id expression. */
export function failFastErrorSql(batch: string, failedJob: string): string {
  return `'fail_fast: batch ' || ${batch} || ' failed (job ' || ${failedJob} || ' ended dead)'`;
}

/**
 * The condition (SQL on a `jobs` row, both drivers) of a job fail-fast
 * leaves alone: one added with `--needs-policy done` (a cleanup, an upload of
 * artefacts), which runs once its needs ended however they ended, as GitHub
 * Actions' `if: always()` (docs/architecture.md "Batches").
 */
export const RUNS_ALWAYS_SQL = "EXISTS (SELECT 1 FROM job_needs n WHERE n.job_id = jobs.id AND n.policy = 'done')";

/** The ledger detail of a job fail-fast canceled or asked to stop (`reason: fail_fast`). */
export function failFastDetail(batch: string, failedJob: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ ...extra, reason: "fail_fast", batch, failed_job: failedJob });
}

/**
 * The `CONFLICT` of an add to a batch that takes no job any more (sealed, or
 * failed by fail-fast); nothing was added. `batch` null: the row vanished (never here).
 */
export function batchClosed(name: string, batch: BatchRow | null): SpoolError {
  const why =
    batch?.failed_at != null
      ? `failed fast (job ${batch.failed_job_id} ended dead)`
      : batch?.sealed_at != null
        ? "is sealed"
        : "is closed";
  return new SpoolError("CONFLICT", `batch ${JSON.stringify(name)} ${why}: no job can join it; nothing was added`, {
    remediation: `add to a new batch (a name per run, e.g. ${name}-2 or ci-$BUILD_ID), or without --batch`,
    detail: { batch: name, sealed_at: batch?.sealed_at ?? null, failed_at: batch?.failed_at ?? null },
  });
}
