/**
 * The queue's operations (docs/architecture.md "The operations"): every verb
 * the layers above `src/store/` may call. Each is one transaction of the
 * driver (`read` or `write` of `src/store/store.ts`), named for the job's life
 * or for the screen that reads it, with its guard in SQL; its docstring names
 * the transaction, the guard, the events it writes and the wake signals it
 * sends. Code above `src/store/` never opens a transaction itself.
 *
 * Grouped as docs/architecture.md lists them: reads, operator writes, the
 * worker's operations (test/docs-drift.test.ts checks that the two agree).
 */
// biome-ignore-all assist/source/organizeImports: the groups below are the reader's map; sorting would scatter them

// Reads: one snapshot each.
export { liveSnapshot, statusSnapshot } from "./status.ts";
export { stopProgress, stopWorkers, workerList } from "./workers.ts";
export { drainProgress, laneList, laneOverview, pausedLanes } from "./lane-reads.ts";
export { jobDetail, jobsByIds, listJobs, resolveJobs } from "./jobs.ts";
export { metricsSnapshot } from "./metrics.ts";
export { eventsPage } from "./events.ts";
export { attemptNow, attemptOutput, jobAttempt, latestAttempt, shippedOutput } from "./output.ts";
export { jobFeedback } from "./feedback.ts";
export { reportSnapshot } from "./report.ts";
export { failureGroups, jobsInStates, latestOutput, triageCard } from "./triage.ts";
export { keptFailureGroups } from "./dead-groups.ts";
export { batchByName, followLook } from "./follow.ts";
export { finishedTimeline, ledgerHead, needGraph } from "./views.ts";
export { awaitedJobs, jobsMatching, pendingAndWorkers, selectionJobs } from "./wait.ts";

// Operator writes: add, retry, rerun, cancel, delete, prune, settings, lanes, batches, schedules, hooks.
export { addJobs } from "./add.ts";
export { retryJobs, retryWithOverrides } from "./retry.ts";
export { rerunJob } from "./rerun.ts";
export { cancelJobs } from "./cancel.ts";
export { checkDeletion, deleteJob, deleteJobs, deletionPreview } from "./delete.ts";
export { pruneJobs } from "./prune.ts";
export { allSettings, setSetting, settingOf, unsetSetting } from "./settings.ts";
export { pauseLane, resumeLane, setLaneSlots } from "./lanes.ts";
export { listBatches, sealBatch, setBatchFailFast, showBatch } from "./batches.ts";
export {
  addSchedule,
  listSchedules,
  pauseSchedule,
  removeSchedule,
  runScheduleNow,
  scheduleDetail,
  tickSchedules,
} from "./schedules.ts";
export { addHook, listHooks, removeHook } from "./hooks.ts";

// The worker's own operations: claim, record, heartbeat, register, reap, ship, its lanes.
export { claimJobs } from "./claim.ts";
export { complete, recordAttemptEnd, recordAttemptEnds } from "./record.ts";
export { heartbeat } from "./heartbeat.ts";
export { registerWorker, stopsAsked, workerIdHolder, workerStopped } from "./registry.ts";
export { attemptOwner, reap, reapCandidates, runningAttemptsOf, runningJobsOf } from "./reap.ts";
export { shipOutput, workerStartSettings } from "./ship.ts";
export { drainHolders, drainStates, laneView, nextDueAt } from "./worker-lanes.ts";
