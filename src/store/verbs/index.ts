/**
 * The queue's operations (docs/architecture.md "The operations"): every verb
 * the layers above `src/store/` may call. Each is one transaction of the
 * driver (`read` or `write` of `src/store/store.ts`), named for the job's life
 * or for the screen that reads it, with its guard in SQL; its docstring names
 * the transaction, the guard, the events it writes and the wake signals it
 * sends. Code above `src/store/` never opens a transaction itself.
 */

// Reads: one snapshot each (status, job detail, lists, events, workers, triage, output).

// Operator writes: add, retry, rerun, cancel, delete, prune, settings, lanes, batches, schedules, hooks.

// The worker's own operations: register, heartbeat, reap, record, ship.
export { claimJobs } from "./claim.ts";
export { heartbeat } from "./heartbeat.ts";
export { attemptOwner, reap, reapCandidates, runningAttemptsOf, runningJobsOf } from "./reap.ts";
export { complete, recordAttemptEnd, recordAttemptEnds } from "./record.ts";
export { registerWorker, stopRequested, workerIdHolder, workerStopped } from "./registry.ts";
export { outputCap, shipOutput } from "./ship.ts";
export { drainHolders, drainStates, laneView, nextDueAt } from "./worker-lanes.ts";
