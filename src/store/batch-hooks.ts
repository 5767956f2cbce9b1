/**
 * "Batch finished → enqueue its `batch-done` hooks" (docs/architecture.md "Hooks"), shared
 * by both drivers over their own statements ({@link BatchHookStatements}). A batch is
 * finished when it is sealed and none of its jobs is queued or running ("Batches"); the
 * check runs in the transaction that ends one of its jobs and in the one that seals it.
 */
import type { BatchView, Job, NewJob } from "../model/job.ts";
import type { Hook } from "../model/recurring.ts";
import { HOOK_KEY_PREFIX } from "./recurring.ts";

/** A batch as its `batch-done` hooks see it: its view and the moment it became finished (epoch seconds). */
export interface FinishedBatch {
  batch: BatchView;
  /** The later of its seal and its last job's end: the same for every look at one finish, new after a reopen. */
  finished_at: number;
}

/** The statements a driver gives {@link enqueueBatchHooks}, inside the transaction that ended a job or sealed the batch. */
export interface BatchHookStatements {
  /**
   * Batch `name` when it is finished now, else null. PostgreSQL locks the batch row first
   * (FOR UPDATE), so of two transactions ending its last two jobs the second waits and
   * then counts the first's end; SQLite's one writer orders them already.
   */
  finishedBatch(name: string): Promise<FinishedBatch | null>;
  /** The newest job with this idempotency key, whatever its state, or null. */
  findLatestJobByKey(key: string): Promise<Job | null>;
  /** Adds a job with its `added` event; returns it. */
  addJob(job: NewJob, now: number): Promise<Job>;
}

/**
 * The idempotency key of hook `name`'s job for one finish of `batch`:
 * `hook:NAME:batch:<finish, epoch ms>:BATCH` (the batch last: its name may hold colons).
 * A batch reopened by `retry` finishes again at a later time, so it fires again.
 */
function batchHookKey(name: string, batch: string, finishedAt: number): string {
  return `${HOOK_KEY_PREFIX}${name}:batch:${Math.round(finishedAt * 1000)}:${batch}`;
}

/** The hook and batch a `batch-done` hook's job was made for, read back from its key; null for any other key. */
export function batchOfHookKey(key: string | null): { hook: string; batch: string } | null {
  const m = key === null ? null : /^hook:([^:]+):batch:\d+:(.+)$/.exec(key);
  return m ? { hook: m[1]!, batch: m[2]! } : null;
}

/**
 * The values a `batch-done` hook's job gets, in environment variables only: the batch's
 * name, `done` when every job of it is done (an empty batch too) else `failed`, and its counts.
 */
function batchHookEnvironment(f: FinishedBatch): Record<string, string> {
  const { batch } = f;
  return {
    SPOOLCTL_HOOK_BATCH: batch.name,
    SPOOLCTL_HOOK_STATE: batch.counts.done === batch.total ? "done" : "failed",
    SPOOLCTL_HOOK_BATCH_TOTAL: String(batch.total),
    SPOOLCTL_HOOK_BATCH_DONE: String(batch.counts.done),
    SPOOLCTL_HOOK_BATCH_DEAD: String(batch.counts.dead),
    SPOOLCTL_HOOK_BATCH_CANCELED: String(batch.counts.canceled),
    SPOOLCTL_HOOK_BATCH_FINISHED_AT: new Date(f.finished_at * 1000).toISOString(),
  };
}

/**
 * In the transaction that ended a job of batch `name` or sealed it: when the batch is
 * finished now, adds one job per hook of `hooks` that waits for `batch-done`, due at `now`,
 * keyed {@link batchHookKey}; a key any job holds already (another look at the same finish)
 * adds nothing, and the unique index of active keys fences a racing insert. Returns the ids added.
 */
export async function enqueueBatchHooks(
  st: BatchHookStatements,
  name: string,
  now: number,
  hooks: Hook[],
): Promise<number[]> {
  const batchHooks = hooks.filter((h) => h.on_outcome === "batch-done");
  if (batchHooks.length === 0) return [];
  const finished = await st.finishedBatch(name);
  if (finished === null) return [];
  const env = batchHookEnvironment(finished);
  const added: number[] = [];
  for (const h of batchHooks) {
    const key = batchHookKey(h.name, name, finished.finished_at);
    if ((await st.findLatestJobByKey(key)) !== null) continue;
    const job = await st.addJob(
      { ...h.job, env: { ...h.job.env, ...env }, next_run_at: now, idempotency_key: key },
      now,
    );
    added.push(job.id);
  }
  return added;
}
