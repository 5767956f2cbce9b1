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
export { addJobs } from "./add.ts";
export { listBatches, sealBatch, setBatchFailFast, showBatch } from "./batches.ts";
export { cancelJobs } from "./cancel.ts";
export { checkDeletion, deleteJob, deleteJobs, deletionPreview } from "./delete.ts";
export { addHook, listHooks, removeHook } from "./hooks.ts";
export { pauseLane, resumeLane, setLaneSlots } from "./lanes.ts";
export { pruneJobs } from "./prune.ts";
export { rerunJob } from "./rerun.ts";
export { retryJobs, retryWithOverrides } from "./retry.ts";
export {
  addSchedule,
  earliestScheduleSlot,
  fireDueSchedules,
  listSchedules,
  pauseSchedule,
  removeSchedule,
  runScheduleNow,
  scheduleDetail,
} from "./schedules.ts";
export { allSettings, queueSettings, setSetting, settingOf, unsetSetting } from "./settings.ts";

// The worker's own operations: register, heartbeat, reap, record, ship.
