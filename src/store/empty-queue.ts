/**
 * The empty queue: what a queue that does not exist yet reads as, for any
 * driver (docs/architecture.md "The driver contract"). A verb that opened the
 * queue for reading (`create: false`) sees no job, no setting, no worker, no
 * lane, no schedule and no hook, and a guarded write finds nothing to change,
 * exactly as on a freshly migrated queue; nothing is created. A write that
 * would create a row is refused (`INTERNAL`): the verbs that add do open with
 * `create`, so reaching one is a bug, never a lost write.
 */
import { SpoolError } from "../contract/errors.ts";
import type { AttemptKey, AttemptLease } from "./attempt-types.ts";
import type { RecurringWriter } from "./recurring.ts";
import type { StoreWriter } from "./writer.ts";

/** Refuses a write that would create a row in a queue opened without `create`. */
async function refuse(): Promise<never> {
  throw new SpoolError("INTERNAL", "the queue does not exist yet: this write needs it opened with create");
}

/** Schedules and hooks of the empty queue: none. */
const EMPTY_RECURRING: RecurringWriter = {
  earliestSlot: async () => null,
  listSchedules: async () => [],
  getSchedule: async () => null,
  slotsOf: async () => [],
  listHooks: async () => [],
  addSchedule: refuse,
  removeSchedule: async () => false,
  setPaused: async () => false,
  fireDue: async () => [],
  fireNow: async () => null,
  addHook: refuse,
  removeHook: async () => false,
};

/**
 * A transaction on the empty queue, for reads and writes alike: every read
 * answers empty; every guarded write (requeue, cancel, delete, resume, …)
 * finds no row and reports so; a write that would create a row raises
 * `INTERNAL` (see the module comment).
 */
export const EMPTY_QUEUE: StoreWriter = {
  recurring: EMPTY_RECURRING,
  getJob: async () => null,
  findActiveJobByKey: async () => null,
  findActiveJobsByKeys: async () => new Map(),
  findLatestJobByKey: async () => null,
  findLatestJobByName: async () => null,
  listJobs: async () => [],
  failureGroups: async () => [],
  unmetNeeds: async () => new Map(),
  waitingOnNeeds: async () => ({ count: 0, jobs: [] }),
  countByStateAndLane: async () => [],
  countMatchingByState: async () => [],
  metricCounts: async () => [],
  finishedTimeline: async () => [],
  needEdges: async () => [],
  lastEventId: async () => 0,
  deadJobKinds: async () => [],
  deadGroupCounts: async () => [],
  deadGroupSpans: async () => [],
  countScheduledByLane: async () => [],
  countHeldByLane: async () => [],
  recentDead: async () => [],
  recentFailedAttempts: async () => [],
  drainState: async () => ({ running: 0, waiting: 0 }),
  blockedWaiting: async () => [],
  attemptsOf: async () => [],
  getAttempt: async () => null,
  eventsOf: async () => [],
  readAttemptOutput: async () => null,
  listSettings: async () => ({}),
  getSetting: async () => null,
  nextDueAt: async () => null,
  staleRunningJobs: async () => [],
  getWorker: async () => null,
  listWorkers: async () => [],
  runningJobsByWorker: async () => [],
  listEvents: async () => [],
  pruneCandidates: async () => [],
  historyCounts: async () => ({ attempts: 0, events: 0 }),
  getBatch: async () => null,
  listBatches: async () => [],
  listLanes: async () => [],
  insertJob: refuse,
  // No job to add: an empty list adds nothing, anything else would create rows.
  addJobs: async (jobs, _now, _needs, batch) => (jobs.length === 0 && !batch ? [] : refuse()),
  sealBatch: refuse,
  setBatchFailFast: async () => null,
  appendEvent: refuse,
  recordAttempt: async () => false,
  appendAttemptOutput: async () => false,
  setSetting: refuse,
  upsertWorker: refuse,
  markWorkerStopped: async () => {},
  heartbeatJobs: async (_workerId: string, attempts: AttemptKey[]): Promise<AttemptLease[]> =>
    attempts.map((a) => ({ jobId: a.jobId, attemptNo: a.attemptNo, owned: false, cancelRequested: false })),
  heartbeatWorker: async () => ({ stopRequested: false }),
  requestWorkerStop: async () => [],
  deleteSetting: async () => false,
  requeueJob: async () => false,
  requeueJobs: async () => [],
  rerunJob: async () => null,
  closeAttempt: async () => false,
  reviveDependents: async () => [],
  cancelQueuedJob: async () => false,
  keyedRetryMatches: async () => [],
  retryNeedRows: async () => [],
  requeueMatching: async () => [],
  cancelMany: async () => ({ canceled: [], requested: [], closed: [] }),
  requestCancel: async () => false,
  deleteJobs: async () => ({ jobs: 0, attempts: 0, events: 0, closed: [] }),
  updateJobSettings: async () => false,
  setHeld: async () => [],
  editQueuedJob: async () => null,
  pauseLane: refuse,
  resumeLane: async () => null,
  setLaneSlots: refuse,
};
