/**
 * The data of the core verbs (add, work, status, list, show, output, workers,
 * stop), each written once as a JSON Schema with its TypeScript type derived
 * from it (docs/contract.md "JSON Schema export"); the rows they share are in
 * ./schemas-rows.ts. The contract test validates real output against them.
 * Times are epoch seconds.
 */

import {
  arrayOf,
  bool,
  enumOf,
  int,
  type JsonSchema,
  mapOf,
  nullable,
  num,
  object,
  oneOf,
  optional,
  type Static,
  str,
} from "../contract/schema-kit.ts";
import { ATTEMPT_STATES } from "../model/job.ts";
import {
  addedJob,
  attempt,
  batchSummary,
  failureGroup,
  jobEvent,
  jobSummary,
  jobSummaryProps,
  stateCounts,
  streamView,
  stringMap,
  workerHealth,
  workerView,
} from "./schemas-rows.ts";

/** `add --json` data: the job added, or `{count, jobs}` with `--from`. */
const addData = oneOf(addedJob, object({ count: int, jobs: arrayOf(addedJob) }));
/** `add --json` data (see {@link addData}). */
export type AddData = Static<typeof addData>;

/** What a worker did, as `work --json` reports it. */
const workSummary = object({
  worker_id: str,
  executed: int,
  succeeded: int,
  failed: int,
  reaped: int,
  claimed: bool,
  drained: bool,
  job_ids: arrayOf(int),
  /**
   * `--drain`: the dependents it left queued because a need cannot run in it
   * (delayed, paused lane, lane no live worker serves; docs/architecture.md
   * "Drain"), as its `left queued:` stderr lines say them; [] otherwise.
   */
  left_queued: arrayOf(
    object({
      job_id: int,
      queue: str,
      /** Its first need that cannot run; null: a need was deleted. */
      need_id: nullable(int),
      need_lane: nullable(str),
      /** The words of the stderr line: `job 3 waits on job 2: job 2 is delayed until …`. */
      text: str,
      /** When a worker is all that is missing: the lane to serve (`spoolctl work --queue LANE`), else null. */
      serve_lane: nullable(str),
    }),
  ),
});
/** `work --json` data (see {@link workSummary}). */
export type WorkSummary = Static<typeof workSummary>;

/** A paused lane as `status --json` reports it. */
const pausedLane = object({
  queue: str,
  paused_at: num,
  /** When it resumes by itself; null: until `spoolctl resume`. */
  paused_until: nullable(num),
  reason: nullable(str),
  /** Its queued jobs, which wait. */
  queued: int,
});

/** A full disk of the queue, as `status --json` reports it. Bytes. */
const fullDisk = object({ role: enumOf(["database", "spool"]), path: str, free_bytes: int });
/** A full disk (see {@link fullDisk}). */
export type FullDisk = Static<typeof fullDisk>;

/** A schedule as `status` shows it. */
const statusSchedule = object({
  name: str,
  paused: bool,
  /** The next slot (null while paused). */
  next_slot: nullable(num),
  last_job_id: nullable(int),
  last_job_state: nullable(str),
});

/** `status --json` data. */
const statusData = object({
  counts: stateCounts,
  scheduled: int,
  /** Queued jobs held by `hold` (a part of `queued`, as `scheduled` is; docs/architecture.md "Holding a job"). */
  held: int,
  queues: mapOf(object({ ...stateCounts.properties, scheduled: int, held: int })),
  recent_dead: arrayOf(jobSummary),
  /** Registered workers judged alive and heartbeating (a `stale` one is not counted). */
  live_workers: int,
  /**
   * Running jobs whose worker is not live (dead, lease expired, or not
   * heartbeating), with what will happen to each (docs/architecture.md "Dead
   * workers in the views"); at most 1000.
   */
  stranded: arrayOf(workerHealth),
  /** Lanes paused now (docs/architecture.md "Lanes and slots"), by name. */
  paused_lanes: arrayOf(pausedLane),
  /** Queued jobs that wait for other jobs: how many, and the oldest 10 with what each waits on (docs/architecture.md "Dependencies"). */
  waiting_on_needs: object({ count: int, jobs: arrayOf(object({ job_id: int, waiting_on: arrayOf(int) })) }),
  /**
   * Disks of the queue on this host that are full (docs/architecture.md
   * "Storage conditions"): workers pause claiming meanwhile. Set by the
   * `status` verb, which knows where the queue lives.
   */
  full_disks: optional(arrayOf(fullDisk)),
  /** The recurring schedules, when there are any (docs/architecture.md "Recurring jobs"). */
  schedules: optional(arrayOf(statusSchedule)),
  /** `status --batch NAME`: that batch's counts and verdict (docs/architecture.md "Batches"). */
  batch: optional(batchSummary),
});
/** `status --json` data (see {@link statusData}). */
export type StatusData = Static<typeof statusData>;

/** A page of `list`: a running job says whether its worker is still there (`worker_health`, null otherwise). */
const listedJobs = object({
  count: int,
  jobs: arrayOf(object({ ...jobSummaryProps, worker_health: nullable(workerHealth) })),
});
/** A page of jobs (see {@link listedJobs}). */
export type ListedJobs = Static<typeof listedJobs>;

/** `list --group` data: the failure groups of the dead (or canceled) jobs selected. */
const groupedList = object({
  /** Number of groups. */
  count: int,
  /** Number of jobs in all groups. */
  job_count: int,
  groups: arrayOf(failureGroup),
});

/** `list --json` data: a page of jobs, or the groups with `--group`. */
const listData = oneOf(listedJobs, groupedList);
/** `list --json` data (see {@link listData}). */
export type ListData = Static<typeof listData>;

/** `show` data: the whole row (env values included), its worker's health while running, attempts and events. */
const jobDetail = object({
  job: object({
    ...jobSummaryProps,
    env: stringMap,
    cancel_requested: bool,
    locked_pid: nullable(int),
    heartbeat_at: nullable(num),
    /** The W3C trace context `add` found in its environment (README "Metrics and traces"); null: none. */
    trace: nullable(object({ traceparent: nullable(str), tracestate: nullable(str), baggage: nullable(str) })),
  }),
  worker_health: nullable(workerHealth),
  attempts: arrayOf(attempt),
  events: arrayOf(jobEvent),
  /**
   * A dead or canceled job whose own retry its needs refuse: the need, its
   * state, and the job to retry instead (the root of the chain; null when a
   * need was deleted). Absent otherwise.
   */
  retry_blocked: optional(object({ need_id: nullable(int), need_state: str, retry: nullable(int) })),
});
/** `show --json` data (see {@link jobDetail}). */
export type JobDetail = Static<typeof jobDetail>;

/** One attempt's output: the streams asked for. */
const attemptOutput = object({
  job_id: int,
  attempt_no: int,
  state: enumOf(ATTEMPT_STATES),
  stdout: optional(streamView),
  stderr: optional(streamView),
});
/** One attempt's output (see {@link attemptOutput}). */
export type AttemptOutput = Static<typeof attemptOutput>;

/** `workers --json` data. */
const workersData = object({ count: int, workers: arrayOf(workerView) });

/** `stop --json` data: the workers asked to stop, and with `--wait` those that stopped (else null). */
const stopData = object({ requested: arrayOf(str), stopped: nullable(arrayOf(str)) });
/** `stop --json` data (see {@link stopData}). */
export type StopData = Static<typeof stopData>;

/** Data schemas of the core verbs, by verb name. */
export const CORE_DATA_SCHEMAS: Record<string, JsonSchema> = {
  add: addData,
  work: workSummary,
  status: statusData,
  list: listData,
  show: jobDetail,
  output: object({ attempts: arrayOf(attemptOutput) }),
  workers: workersData,
  stop: stopData,
};
