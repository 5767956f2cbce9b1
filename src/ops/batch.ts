/**
 * Batches with one verdict (docs/architecture.md "Batches"): the pure rules —
 * what a batch name and a fail-fast value may be, when a batch is settled,
 * and its verdict. No I/O; the store's batch operations do the writing.
 */
import { invalidValue, SpoolError } from "../contract/errors.ts";
import type { BatchSummary } from "../describe/schemas-rows.ts";
import type { BatchView, FailFastMode } from "../model/job.ts";

/** What a batch name may be: 1-128 of letters, digits, `.`, `_`, `:`, `/`, `-`, `+`, `@`, `=`; starting with a letter or digit. */
const BATCH_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/+@=-]{0,127}$/;

/** Checks a `--batch` value; raises `INVALID_INPUT` naming `flag`. */
export function parseBatchName(flag: string, raw: string): string {
  if (!BATCH_NAME.test(raw))
    throw invalidValue(
      flag,
      raw,
      "a batch name of 1-128 characters: letters, digits, '.', '_', ':', '/', '+', '@', '=' or '-', starting with a letter or digit (e.g. ci-1234)",
    );
  return raw;
}

/**
 * A `--fail-fast` value: given alone (`""`) or `queued`, the batch's queued
 * jobs are canceled at its first dead job; `now` also stops its running
 * ones. Raises `INVALID_INPUT`.
 */
export function parseFailFast(raw: string): FailFastMode {
  const v = raw.trim().toLowerCase();
  if (v === "" || v === "queued") return "queued";
  if (v === "now") return "now";
  throw invalidValue(
    "--fail-fast",
    raw,
    "nothing (cancel the queued jobs), queued, or now (stop the running ones too)",
  );
}

/** `--seal`/`--fail-fast` without `--batch`: `INVALID_INPUT`. */
export function needsBatch(flag: string): SpoolError {
  return new SpoolError("INVALID_INPUT", `${flag} acts on a batch; give --batch NAME too`, {
    remediation: `spoolctl add --batch NAME ${flag} -- CMD`,
  });
}

// Defined once, as the JSON Schema `spoolctl schema` prints.
export type { BatchSummary };

/**
 * Whether a batch is settled (docs/architecture.md "Batches"): failed by
 * fail-fast (its verdict is known at once), or sealed — no job can join it —
 * with none of its jobs queued or running. An open batch is never settled,
 * however many of its jobs ended: its last job may not exist yet.
 */
function batchSettled(b: BatchView): boolean {
  if (b.failed_at !== null) return true;
  return b.sealed_at !== null && b.counts.queued === 0 && b.counts.running === 0;
}

/** The view of a batch with its verdict. */
export function summarizeBatch(b: BatchView): BatchSummary {
  const settled = batchSettled(b);
  const allSucceeded = settled ? b.failed_at === null && b.counts.done === b.total : null;
  return {
    name: b.name,
    created_at: b.created_at,
    sealed: b.sealed_at !== null,
    sealed_at: b.sealed_at,
    fail_fast: b.fail_fast,
    // One meaning, as the text's "failed" (docs/contract.md "Verdicts and the drain's lines"): the verdict is known and is not a pass.
    failed: allSucceeded === false,
    failed_at: b.failed_at,
    failed_job_id: b.failed_job_id,
    total: b.total,
    counts: b.counts,
    settled,
    all_succeeded: allSucceeded,
  };
}

/** `NOT_FOUND` for a batch name no add or seal used. */
export function batchNotFound(name: string): SpoolError {
  return new SpoolError("NOT_FOUND", `no batch named ${JSON.stringify(name)}: no job was added to it`, {
    remediation: "spoolctl batch list  (names the batches); add jobs with spoolctl add --batch NAME",
    detail: { batch: name },
  });
}
