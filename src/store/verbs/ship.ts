/**
 * Shipping attempt output to a shared database (docs/architecture.md
 * "Output"): the worker's copy of what a child wrote, chunk by chunk, and the
 * cap it ships up to.
 */

import type { OutputChunk } from "../attempt-types.ts";
import type { Store } from "../store.ts";
import { readSettings } from "./settings.ts";

/**
 * Appends one chunk of an attempt's stream, one durable write transaction.
 * Guard: fenced by (job, attempt, worker) in the statement; a repeated chunk
 * (same offset) is written once. Writes no ledger row; signals nothing.
 * Returns false, changing nothing, when the worker no longer owns the
 * attempt. Raises like {@link Store.write}.
 */
export async function shipOutput(store: Store, chunk: OutputChunk): Promise<boolean> {
  return await store.write(async (tx) => tx.appendAttemptOutput(chunk));
}

/** The `output_cap` setting (bytes of each stream an attempt ships at most; its default when unset), one read snapshot. */
export async function outputCap(store: Store): Promise<number> {
  return (await store.read(async (tx) => readSettings(tx))).output_cap;
}
