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

/**
 * The settings a worker reads when it starts, one read snapshot: `output_cap`
 * (bytes of each stream an attempt ships at most) and `kill_leftovers` (1:
 * end what a job leaves running; docs/architecture.md "Leftover processes"),
 * each its default when unset.
 */
export async function workerStartSettings(store: Store): Promise<{ output_cap: number; kill_leftovers: boolean }> {
  const settings = await store.read(async (tx) => readSettings(tx));
  return { output_cap: settings.output_cap, kill_leftovers: settings.kill_leftovers === 1 };
}
