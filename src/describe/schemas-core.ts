/**
 * JSON Schemas of the data of the core verbs (add, work, status, list, show,
 * output, workers, stop) and the row shapes they share. Mirrors the result
 * types in `src/ops/` and `src/worker/loop.ts`; the contract test validates
 * real output against them.
 */
import {
  ATTEMPT_STATES,
  EVENTS,
  FAIL_FAST_MODES,
  FAILURE_REASONS,
  JOB_STATES,
  REPORTED_STATES,
} from "../store/model.ts";
import { arrayOf, bool, enumOf, int, type JsonSchema, mapOf, nullable, num, object, oneOf, str } from "./schema-kit.ts";

/** A job state. */
export const jobState = enumOf(JOB_STATES);
/** A string-to-string map (tags, env). */
export const stringMap = mapOf(str);

/** A ledger row. */
export const jobEvent = object({
  id: int,
  job_id: int,
  at: num,
  event: enumOf(EVENTS),
  worker_id: nullable(str),
  detail: nullable(str),
});

/** A job as `list` reports it (no env values). */
const jobSummaryProps: Record<string, JsonSchema> = {
  id: int,
  state: jobState,
  queue: str,
  priority: int,
  argv: arrayOf(str),
  attempts: int,
  crashes: int,
  attempts_total: int,
  max_retries: int,
  max_crashes: nullable(int),
  timeout_seconds: num,
  created_at: num,
  next_run_at: num,
  started_at: nullable(num),
  finished_at: nullable(num),
  last_exit_code: nullable(int),
  last_error: nullable(str),
  idempotency_key: nullable(str),
  tags: stringMap,
  note: nullable(str),
  cwd: nullable(str),
  env_keys: arrayOf(str),
  locked_by: nullable(str),
  scheduled: bool,
  batch: nullable(str),
  waiting_on: arrayOf(int),
};
/** A batch with its counts and verdict (src/ops/batch.ts BatchSummary). */
export const batchSummary = object({
  name: str,
  created_at: num,
  sealed: bool,
  sealed_at: nullable(num),
  fail_fast: nullable(enumOf(FAIL_FAST_MODES)),
  failed: bool,
  failed_at: nullable(num),
  failed_job_id: nullable(int),
  total: int,
  counts: object(Object.fromEntries(JOB_STATES.map((s) => [s, int]))),
  settled: bool,
  all_succeeded: nullable(bool),
});

/** A job summary. */
export const jobSummary = object(jobSummaryProps);

/** An attempt row. */
export const attempt = object(
  {
    job_id: int,
    attempt_no: int,
    state: enumOf(ATTEMPT_STATES),
    worker_id: str,
    worker_pid: int,
    pgid: nullable(int),
    pgid_start_time: nullable(str),
    started_at: num,
    finished_at: nullable(num),
    exit_code: nullable(int),
    signal: nullable(int),
    error: nullable(str),
    failure_reason: nullable(enumOf(FAILURE_REASONS)),
    stdout_path: str,
    stderr_path: str,
    stderr_last_line: nullable(str),
    worker_start_time: nullable(str),
    stderr_signature: nullable(str),
    host: nullable(str),
  },
  ["host"],
);

/** A failure group (`list --group`; docs/architecture.md "Triage"): jobs that failed alike. */
export const failureGroup = object(
  {
    signature: object({
      state: enumOf(["dead", "canceled"]),
      failure_reason: nullable(enumOf(FAILURE_REASONS)),
      exit_code: nullable(int),
      signal: nullable(int),
      stderr: str,
    }),
    text: str,
    count: int,
    job_ids: arrayOf(int),
    lanes: arrayOf(str),
    first_seen: num,
    last_seen: num,
    example: object({ job_id: int, argv: arrayOf(str), stderr_line: str }),
    closed_dependents: arrayOf(int),
  },
  ["closed_dependents"],
);

/** What `add` reports per job. */
export const addedJob = object({
  job_id: int,
  state: jobState,
  queue: str,
  priority: int,
  next_run_at: num,
  cwd: nullable(str),
  env_keys: arrayOf(str),
  deduplicated: bool,
});

const counts = object(Object.fromEntries(REPORTED_STATES.map((s) => [s, int])));
const streamView = object({ path: nullable(str), missing: bool, size_bytes: int, text: str, truncated: bool });
/** A running job's worker as the views judge it (docs/architecture.md "Dead workers in the views"). */
const workerHealth = object({
  job_id: int,
  worker_id: nullable(str),
  worker_pid: nullable(int),
  worker_host: str,
  worker_state: enumOf(["live", "stale", "dead", "lease_expired"]),
  heartbeat_age_seconds: num,
  fate: str,
});

const workerView = object({
  worker_id: str,
  pid: int,
  host: str,
  queue: str,
  status: enumOf(["live", "stale", "lease_expired", "stopped", "dead"]),
  started_at: num,
  heartbeat_at: num,
  stopped_at: nullable(num),
  stop_requested: bool,
  running_jobs: arrayOf(int),
});

/** Data schemas of the core verbs, by verb name. */
export const CORE_DATA_SCHEMAS: Record<string, JsonSchema> = {
  add: oneOf(addedJob, object({ count: int, jobs: arrayOf(addedJob) })),
  work: object({
    worker_id: str,
    executed: int,
    succeeded: int,
    failed: int,
    reaped: int,
    claimed: bool,
    drained: bool,
    job_ids: arrayOf(int),
  }),
  status: object(
    {
      counts,
      scheduled: int,
      queues: mapOf(object({ ...Object.fromEntries(REPORTED_STATES.map((s) => [s, int])), scheduled: int })),
      recent_dead: arrayOf(jobSummary),
      live_workers: int,
      stranded: arrayOf(workerHealth),
      paused_lanes: arrayOf(
        object({ queue: str, paused_at: num, paused_until: nullable(num), reason: nullable(str), queued: int }),
      ),
      waiting_on_needs: object({ count: int, jobs: arrayOf(object({ job_id: int, waiting_on: arrayOf(int) })) }),
      full_disks: arrayOf(object({ role: enumOf(["database", "spool"]), path: str, free_bytes: int })),
      schedules: arrayOf(
        object({
          name: str,
          paused: bool,
          next_slot: nullable(num),
          last_job_id: nullable(int),
          last_job_state: nullable(str),
        }),
      ),
      batch: batchSummary,
    },
    ["full_disks", "schedules", "batch"],
  ),
  list: oneOf(
    object({ count: int, jobs: arrayOf(object({ ...jobSummaryProps, worker_health: nullable(workerHealth) })) }),
    object({ count: int, job_count: int, groups: arrayOf(failureGroup) }),
  ),
  show: object({
    job: object({
      ...jobSummaryProps,
      env: stringMap,
      cancel_requested: bool,
      locked_pid: nullable(int),
      heartbeat_at: nullable(num),
    }),
    worker_health: nullable(workerHealth),
    attempts: arrayOf(attempt),
    events: arrayOf(jobEvent),
  }),
  output: object({
    attempts: arrayOf(
      object({ job_id: int, attempt_no: int, state: enumOf(ATTEMPT_STATES), stdout: streamView, stderr: streamView }, [
        "stdout",
        "stderr",
      ]),
    ),
  }),
  workers: object({ count: int, workers: arrayOf(workerView) }),
  stop: object({ requested: arrayOf(str), stopped: nullable(arrayOf(str)) }),
};
