/**
 * The metrics' fixed data (README "Metrics and traces", docs/architecture.md
 * "Metrics"): the histogram buckets the schema's triggers count into, and the
 * names of the counters they keep in `metric_counts`.
 */

/**
 * Upper bounds, in seconds, of the buckets of both duration histograms (time
 * queued before start, run time): 5 ms to 1 h, then `+Inf`. The triggers of
 * schema v16 count an observation into the first bucket whose bound is ≥ it
 * (index 0..17; 18 is `+Inf`); a change here needs a migration step that
 * rewrites them.
 */
export const DURATION_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600,
];

/**
 * What a `metric_counts` row counts (its `metric` column), and what its
 * `scope` and `label` hold:
 * - `finished`: jobs that reached a terminal state; scope the lane, label the state (done, dead, canceled);
 * - `hook_finished`: the same, of hook jobs only (keyed `hook:`);
 * - `retries`: requeues after a job-owned failure (the retry budget charged); scope the lane;
 * - `crashes`: crashes charged (a reap of a dead worker's job); scope the lane;
 * - `wait`: an attempt's start, observed as seconds since its job was due; scope the lane, bucket, sum;
 * - `run`: an attempt's end, observed as its run time in seconds; scope the lane, label the attempt's state, bucket, sum;
 * - `slots`: a schedule's slot decided; scope the schedule, label the outcome (fired, skipped, missed, manual).
 */
type MetricKind = "finished" | "hook_finished" | "retries" | "crashes" | "wait" | "run" | "slots";

/** One summed `metric_counts` row (see {@link MetricKind}); `bucket` indexes {@link DURATION_BUCKETS} (its length: `+Inf`), 0 for a counter; `sum` seconds. */
export interface MetricCount {
  metric: MetricKind;
  scope: string;
  label: string;
  bucket: number;
  n: number;
  sum: number;
}

/** Dead jobs of one lane whose last attempt failed one way (see the store's `deadJobKinds`); all three null: it never ran. */
export interface DeadJobKind {
  queue: string;
  failure_reason: string | null;
  exit_code: number | null;
  signal: number | null;
  n: number;
}

/**
 * Dead jobs of one lane in one kept failure group (docs/architecture.md "Kept
 * dead counts"): the group's key and parts (the last attempt's reason, exit
 * code, signal and recorded stderr signature, as written, `""` for a job that
 * never ran, null when none was recorded) and how many.
 */
export interface DeadGroupCount {
  key: string;
  queue: string;
  failure_reason: string | null;
  exit_code: number | null;
  signal: number | null;
  signature: string | null;
  n: number;
}

/** When a kept failure group's jobs ended (epoch seconds) and its newest job, from `dead_jobs`' index. */
export interface DeadGroupSpan {
  key: string;
  first_seen: number;
  last_seen: number;
  newest_job_id: number;
}
