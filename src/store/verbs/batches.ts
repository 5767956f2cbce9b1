/**
 * The batch operations (docs/architecture.md "Batches"): seal, show, list,
 * and fail-fast set by a waiter, each one transaction of the driver; the
 * rules they apply and the shapes they answer with are in `src/ops/batch.ts`.
 */

import type { FailFastMode } from "../../model/job.ts";
import { type BatchSummary, batchNotFound, summarizeBatch } from "../../ops/batch.ts";
import type { SnapshotReader, Store } from "../store.ts";

/**
 * Seals batch `name` (`batch seal`), creating it sealed and empty when no add
 * used it; returns it. One write transaction (`sealBatch`): the batch row is
 * the guard, so an add racing the seal either lands before it or is refused
 * (`CONFLICT`). A batch sealed with every job ended finishes now and fires its
 * `batch_done` hooks in the same transaction. Writes no job ledger row; wakes
 * no worker. Times: the store's clock, epoch seconds.
 */
export async function sealBatch(store: Store, name: string): Promise<BatchSummary> {
  return summarizeBatch(await store.write(async (tx) => tx.sealBatch(name, store.now())));
}

/**
 * Batch `name` with its counts and verdict (`batch show`), one read snapshot
 * (one statement). Raises `NOT_FOUND` when no add or seal used the name.
 */
export async function showBatch(store: SnapshotReader, name: string): Promise<BatchSummary> {
  const view = await store.read(async (tx) => tx.getBatch(name));
  if (!view) throw batchNotFound(name);
  return summarizeBatch(view);
}

/** The newest `limit` batches with their counts and verdicts (`batch list`), one read snapshot. */
export async function listBatches(store: SnapshotReader, limit: number): Promise<BatchSummary[]> {
  return (await store.read(async (tx) => tx.listBatches(limit))).map(summarizeBatch);
}

/**
 * Gives batch `name` the fail-fast property `mode` (a waiter's `--fail-fast`),
 * one write transaction (`setBatchFailFast`): the queue keeps it, so it holds
 * when the waiter dies; a batch already holding a dead job fails at once, its
 * queued jobs canceled with `canceled` ledger rows (reason `fail_fast`), its running ones asked to stop, and
 * every worker woken. Raises `NOT_FOUND` for an unknown batch.
 */
export async function setBatchFailFast(store: Store, name: string, mode: FailFastMode): Promise<BatchSummary> {
  const view = await store.write(async (tx) => tx.setBatchFailFast(name, mode, store.now()));
  if (!view) throw batchNotFound(name);
  return summarizeBatch(view);
}
