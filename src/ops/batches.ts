/**
 * The batch verbs' operations (docs/architecture.md "Batches"): seal, show,
 * list, and fail-fast set by a waiter — each one store operation, one
 * transaction; the rules they apply are in ./batch.ts.
 */
import type { FailFastMode } from "../store/model.ts";
import type { SnapshotReader, Store } from "../store/store.ts";
import { type BatchSummary, batchNotFound, summarizeBatch } from "./batch.ts";

/** Seals batch `name` (creating it sealed and empty when no add used it); returns it. */
export async function sealBatch(store: Store, name: string): Promise<BatchSummary> {
  return summarizeBatch(await store.write(async (tx) => tx.sealBatch(name, store.now())));
}

/** Batch `name` with its counts and verdict. Raises `NOT_FOUND` when no add or seal used the name. */
export async function showBatch(store: SnapshotReader, name: string): Promise<BatchSummary> {
  const view = await store.read(async (tx) => tx.getBatch(name));
  if (!view) throw batchNotFound(name);
  return summarizeBatch(view);
}

/** The newest `limit` batches with their counts and verdicts. */
export async function listBatches(store: SnapshotReader, limit: number): Promise<BatchSummary[]> {
  return (await store.read(async (tx) => tx.listBatches(limit))).map(summarizeBatch);
}

/**
 * Gives batch `name` the fail-fast property `mode` (a waiter's `--fail-fast`):
 * the queue keeps it, so it holds when the waiter dies; a batch already
 * holding a dead job fails at once. Raises `NOT_FOUND` for an unknown batch.
 */
export async function setFailFast(store: Store, name: string, mode: FailFastMode): Promise<BatchSummary> {
  const view = await store.write(async (tx) => tx.setBatchFailFast(name, mode, store.now()));
  if (!view) throw batchNotFound(name);
  return summarizeBatch(view);
}
