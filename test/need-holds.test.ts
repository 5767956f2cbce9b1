/**
 * `holdOf` (src/ops/need-holds.ts), pure: whether a queued dependent's needs
 * can run in a drain, and the words that say why not (docs/architecture.md
 * "Drain"). The end-to-end cases are in drain-needs.test.ts.
 */
import { expect, test } from "bun:test";
import type { Job } from "../src/model/job.ts";
import { ALL_LANES } from "../src/ops/lanes.ts";
import { holdOf, holdText, type LaneReach, type NeedGraph } from "../src/ops/need-holds.ts";
import { newJob } from "./support/store.ts";

const NOW = 1_800_000_000;

function job(id: number, over: Partial<Job> = {}): Job {
  return {
    ...newJob(),
    id,
    batch: null,
    name: null,
    state: "queued",
    attempts: 0,
    crashes: 0,
    last_attempt_no: 0,
    locked_by: null,
    locked_pid: null,
    locked_at: null,
    heartbeat_at: null,
    last_exit_code: null,
    last_error: null,
    created_at: NOW - 10,
    started_at: null,
    finished_at: null,
    cancel_requested: false,
    needs_left: 0,
    held: false,
    ...over,
  };
}

/** A graph of `jobs`, each dependent's unmet needs in `unmet`. */
function graph(jobs: Job[], unmet: Record<number, number[]>): NeedGraph {
  return {
    jobs: new Map(jobs.map((j) => [j.id, j])),
    unmet: new Map(Object.entries(unmet).map(([k, v]) => [Number(k), v])),
  };
}

const reach = (over: Partial<LaneReach> = {}): LaneReach => ({
  paused: new Set(),
  ours: new Set(["default"]),
  live: new Set(),
  now: NOW,
  ...over,
});

const dep = job(2, { needs_left: 1 });

test("a need delayed by its adder cannot run: the dependent holds nothing", () => {
  const g = graph([job(1, { next_run_at: NOW + 3600 }), dep], { 2: [1] });
  const h = holdOf(dep, g, reach());
  expect(h).toMatchObject({ jobId: 2, needId: 1, needLane: "default", runs: false, stuckLane: null });
  expect(holdText(h)).toBe(
    "job 2 waits on job 1: job 1 is delayed until 2027-01-15T09:00:00Z (a drain does not wait for delayed jobs, nor for the jobs that need them)",
  );
});

test("a need in a retry backoff (it ran before) can run: the dependent holds the drain", () => {
  const g = graph([job(1, { next_run_at: NOW + 7.2, last_attempt_no: 1 }), dep], { 2: [1] });
  const h = holdOf(dep, g, reach());
  expect(h.runs).toBe(true);
  expect(holdText(h)).toBe("job 2 waits on job 1: job 1 (lane default) waits out a retry backoff (due in 8s)");
});

test("a need in a paused lane cannot run, even when the drain serves the lane", () => {
  const g = graph([job(1, { queue: "p" }), dep], { 2: [1] });
  const h = holdOf(dep, g, reach({ paused: new Set(["p"]), ours: new Set(["default", "p"]) }));
  expect(h).toMatchObject({ runs: false, needLane: "p" });
  expect(h.why).toBe("job 1 is in paused lane p");
});

test("a need in a lane nobody serves cannot run; served by the drain, a live worker or an all-lanes worker, it can", () => {
  const g = graph([job(1, { queue: "other" }), dep], { 2: [1] });
  const stuck = holdOf(dep, g, reach());
  expect(stuck).toMatchObject({ runs: false, stuckLane: "other", stuckJob: 1, needLane: "other" });
  expect(stuck.why).toBe("job 1 is in lane other, which no live worker serves");
  expect(holdOf(dep, g, reach({ live: new Set(["other"]) })).runs).toBe(true);
  expect(holdOf(dep, g, reach({ live: new Set([ALL_LANES]) })).runs).toBe(true);
  expect(holdOf(dep, g, reach({ ours: "all" })).runs).toBe(true);
  expect(holdOf(dep, g, reach({ ours: new Set(["default", "other"]) })).why).toBe("job 1 (lane other) is due");
});

test("a running need can run, whatever its lane", () => {
  const g = graph([job(1, { queue: "other", state: "running" }), dep], { 2: [1] });
  expect(holdOf(dep, g, reach())).toMatchObject({ runs: true, why: "job 1 (lane other) is running" });
});

test("the chain is walked: the first need up it that cannot run is named, with the lane that lacks a worker", () => {
  const g = graph([job(1, { queue: "far" }), job(3, { needs_left: 1 }), job(4, { needs_left: 1 })], {
    3: [1],
    4: [3],
  });
  const h = holdOf(job(4, { needs_left: 1 }), g, reach());
  expect(h).toMatchObject({ needId: 3, runs: false, stuckLane: "far", stuckJob: 1 });
  expect(holdText(h)).toBe(
    "job 4 waits on job 3: job 3 waits on job 1; job 1 is in lane far, which no live worker serves",
  );
});

test("of several needs, one that cannot run is picked over ones that can", () => {
  const d = job(5, { needs_left: 2 });
  const g = graph([job(1), job(2, { next_run_at: NOW + 60 }), d], { 5: [1, 2] });
  const h = holdOf(d, g, reach());
  expect(h).toMatchObject({ needId: 2, runs: false });
});

test("a need that was deleted (needs_left counts more than the unmet rows) cannot run", () => {
  const d = job(5, { needs_left: 2 });
  const g = graph([job(1), d], { 5: [1] });
  const h = holdOf(d, g, reach());
  expect(h).toMatchObject({ needId: null, runs: false });
  expect(holdText(h)).toBe("job 5: job 5 needs a job that was deleted (add its command again)");
});

test("a need that was not read (past the read limit) counts as able to run", () => {
  const g = graph([dep], { 2: [1] });
  expect(holdOf(dep, g, reach()).runs).toBe(true);
});
