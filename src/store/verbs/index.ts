/**
 * The queue's operations (docs/architecture.md "The operations"): every verb
 * the layers above `src/store/` may call. Each is one transaction of the
 * driver (`read` or `write` of `src/store/store.ts`), named for the job's life
 * or for the screen that reads it, with its guard in SQL; its docstring names
 * the transaction, the guard, the events it writes and the wake signals it
 * sends. Code above `src/store/` never opens a transaction itself.
 */

// Operator writes: add, retry, rerun, cancel, delete, prune, settings, lanes, batches, schedules, hooks.
export { addJobs } from "./add.ts";
export { listBatches, sealBatch, setBatchFailFast, showBatch } from "./batches.ts";
export { cancelJobs } from "./cancel.ts";
// The worker's own operations: register, heartbeat, reap, record, ship.
export { claimJobs } from "./claim.ts";
export { checkDeletion, deleteJob, deleteJobs, deletionPreview } from "./delete.ts";
// Reads: one snapshot each (status, job detail, lists, events, workers, triage, output).
export { eventsPage } from "./events.ts";
export { jobFeedback } from "./feedback.ts";
export { batchByName, followLook } from "./follow.ts";
export { heartbeat } from "./heartbeat.ts";
export { addHook, listHooks, removeHook } from "./hooks.ts";
export { jobDetail, jobsByIds, listJobs, resolveJobs } from "./jobs.ts";
export { drainProgress, laneList, laneOverview, pausedLanes } from "./lane-reads.ts";
export { pauseLane, resumeLane, setLaneSlots } from "./lanes.ts";
export { attemptNow, attemptOutput, jobAttempt, latestAttempt, shippedOutput } from "./output.ts";
export { pruneJobs } from "./prune.ts";
export { attemptOwner, reap, reapCandidates, runningAttemptsOf, runningJobsOf } from "./reap.ts";
export { complete, recordAttemptEnd, recordAttemptEnds } from "./record.ts";
export { registerWorker, stopsAsked, workerIdHolder, workerStopped } from "./registry.ts";
export { reportSnapshot } from "./report.ts";
export { rerunJob } from "./rerun.ts";
export { retryJobs, retryWithOverrides } from "./retry.ts";
export {
  addSchedule,
  listSchedules,
  pauseSchedule,
  removeSchedule,
  runScheduleNow,
  scheduleDetail,
  tickSchedules,
} from "./schedules.ts";
export { allSettings, setSetting, settingOf, unsetSetting } from "./settings.ts";
export { shipOutput, workerStartSettings } from "./ship.ts";
export { liveSnapshot, statusSnapshot } from "./status.ts";
export { failureGroups, jobsInStates, latestOutput, triageCard } from "./triage.ts";
export { finishedTimeline, ledgerHead, needGraph } from "./views.ts";
export { awaitedJobs, jobsMatching, pendingAndWorkers, selectionJobs } from "./wait.ts";
export { drainHolders, drainStates, laneView, nextDueAt } from "./worker-lanes.ts";
export { stopProgress, stopWorkers, workerList } from "./workers.ts";
