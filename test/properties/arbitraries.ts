/**
 * fast-check generators shared by the outcome and backoff properties: a running job with
 * random budgets and counters, how its attempt ended, and the queue's settings within the
 * bounds `config set` accepts (src/model/limits.ts).
 */
import fc from "fast-check";
import type { Job } from "../../src/model/job.ts";
import { DEFAULTS, LIMITS } from "../../src/model/limits.ts";
import type { QueueSettings } from "../../src/model/settings.ts";
import type { ProcessEnd } from "../../src/ops/outcome.ts";
import { newJob } from "../support/store.ts";

/** A running job as the claim leaves it: `attempts`/`crashes` within their budgets (else it would be dead). */
export const runningJob: fc.Arbitrary<Job> = fc
  .record({
    max_retries: fc.integer({ min: 0, max: 20 }),
    max_crashes: fc.option(fc.integer({ min: 0, max: 20 }), { nil: null }),
    attemptsFrac: fc.double({ min: 0, max: 1, noNaN: true }),
    crashesFrac: fc.double({ min: 0, max: 1, noNaN: true }),
    cancel_requested: fc.boolean(),
    next_run_at: fc.integer({ min: 0, max: 2_000_000_000 }),
    timeout_seconds: fc.integer({ min: 0, max: 86_400 }),
  })
  .map((r) => ({
    ...newJob({ max_retries: r.max_retries, max_crashes: r.max_crashes, timeout_seconds: r.timeout_seconds }),
    id: 1,
    batch: null,
    state: "running" as const,
    attempts: Math.floor(r.attemptsFrac * r.max_retries),
    crashes: r.max_crashes === null ? Math.floor(r.crashesFrac * 50) : Math.floor(r.crashesFrac * r.max_crashes),
    last_attempt_no: 1,
    locked_by: "w",
    locked_pid: 1,
    locked_at: r.next_run_at,
    heartbeat_at: r.next_run_at,
    last_exit_code: null,
    last_error: null,
    created_at: r.next_run_at,
    started_at: r.next_run_at,
    finished_at: null,
    cancel_requested: r.cancel_requested,
    held: false,
    name: null,
    needs_left: 0,
    next_run_at: r.next_run_at,
  }));

/** Settings within `config set`'s bounds (src/model/limits.ts LIMITS). */
export const settings: fc.Arbitrary<QueueSettings> = fc.record({
  max_retries: fc.constant(DEFAULTS.max_retries),
  timeout: fc.constant(DEFAULTS.timeout_seconds),
  backoff_base: fc.oneof(
    fc.constant(DEFAULTS.backoff_base),
    fc.double({ min: LIMITS.backoff_base.min, max: LIMITS.backoff_base.max, noNaN: true }),
  ),
  backoff_cap: fc.oneof(
    fc.constant(DEFAULTS.backoff_cap),
    fc.integer({ min: LIMITS.backoff_cap.min, max: LIMITS.backoff_cap.max }),
  ),
  output_cap: fc.constant(DEFAULTS.output_cap),
  retry_spawn_failures: fc.constantFrom(0, 1),
  kill_leftovers: fc.constantFrom(0, 1),
});

const code = fc.option(fc.integer({ min: 0, max: 255 }), { nil: null });
const signal = fc.option(fc.integer({ min: 1, max: 64 }), { nil: null });

/** Every way an attempt can end (src/ops/outcome.ts ProcessEnd). */
export const processEnd: fc.Arbitrary<ProcessEnd> = fc.oneof(
  fc.record({ kind: fc.constant("exited" as const), code: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant("signaled" as const), signal: fc.integer({ min: 1, max: 64 }) }),
  fc.record({ kind: fc.constant("timed_out" as const), code, signal }),
  fc.record({ kind: fc.constant("spawn_failed" as const), error: fc.string(), permanent: fc.boolean() }),
  fc.record({ kind: fc.constant("canceled" as const), code, signal }),
  fc.record({ kind: fc.constant("interrupted" as const), code, signal }),
  fc.record({ kind: fc.constant("worker_crash" as const), error: fc.string() }),
  fc.record({
    kind: fc.constant("output_write_failed" as const),
    code,
    signal,
    error: fc.constant("no space left on device"),
    lostBefore: fc.integer({ min: 0, max: 2 }),
  }),
);

/** A moment, epoch seconds. */
export const now = fc.double({ min: 1_000_000_000, max: 2_000_000_000, noNaN: true });
