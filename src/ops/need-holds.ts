/**
 * Whether a queued dependent's needs can still run, and why not (docs/architecture.md
 * "Drain", "Dependencies"): the rule a drain applies to dependents, and what `wait`
 * names in its `NO_WORKER` warning. Pure: the caller reads the jobs, their unmet
 * needs, the paused lanes and the lanes live workers serve.
 */
import type { Job } from "../model/job.ts";
import { ALL_LANES } from "./lanes.ts";

/** The dependents read and their needs, transitively (src/store/verbs/need-holds.ts `needGraph`). */
export interface NeedGraph {
  /** Every job read, by id: the dependents and the needs found walking up from them. */
  jobs: Map<number, Job>;
  /** The unmet needs of each queued job read that has `needs_left > 0`, ids ascending. */
  unmet: Map<number, number[]>;
}

/** Who can run which lane, at `now` (epoch seconds, the queue's clock). */
export interface LaneReach {
  /** Lanes whose pause is in force. */
  paused: ReadonlySet<string>;
  /** Lanes the judging drain serves itself (`"all"`: `--all-lanes`); none for `wait`. */
  ours: ReadonlySet<string> | "all";
  /** Lanes a live worker serves, {@link ALL_LANES} for one that serves every lane. */
  live: ReadonlySet<string>;
  now: number;
}

/**
 * What a blocked job waits on: `needId` its first need that cannot run (or,
 * when every one can, its first unmet need; null: a need was deleted), that
 * need's lane, whether the job can still run (`runs`), and why in words.
 * `stuckLane`, `stuckJob`: when a worker is all that is missing, the lane
 * that lacks one and the job up the chain that waits there.
 */
export interface NeedHold {
  jobId: number;
  queue: string;
  needId: number | null;
  needLane: string | null;
  runs: boolean;
  why: string;
  stuckLane: string | null;
  stuckJob: number | null;
}

interface Reach {
  runs: boolean;
  why: string;
  stuckLane: string | null;
  stuckJob?: number;
}

function served(lane: string, reach: LaneReach): boolean {
  return reach.ours === "all" || reach.ours.has(lane) || reach.live.has(lane) || reach.live.has(ALL_LANES);
}

function seconds(s: number): string {
  return `${Math.max(0, Math.ceil(s))}s`;
}

/** Whether job `id` can run (or is running) in time: the rule at {@link holdOf}. */
function reachOf(id: number, graph: NeedGraph, reach: LaneReach, memo: Map<number, Reach>): Reach {
  const known = memo.get(id);
  if (known) return known;
  const job = graph.jobs.get(id);
  let out: Reach;
  if (!job) out = { runs: true, why: `job ${id} (not read)`, stuckLane: null };
  else if (job.state === "running")
    out = { runs: true, why: `job ${id} (lane ${job.queue}) is running`, stuckLane: null };
  else if (job.state !== "queued") out = { runs: true, why: `job ${id} ended ${job.state}`, stuckLane: null };
  else if (job.held)
    out = { runs: false, why: `job ${id} is held (spoolctl release ${id} lets it run)`, stuckLane: null };
  else if (reach.paused.has(job.queue))
    out = { runs: false, why: `job ${id} is in paused lane ${job.queue}`, stuckLane: null };
  else if (job.last_attempt_no === 0 && job.next_run_at > reach.now)
    out = {
      runs: false,
      why: `job ${id} is delayed until ${new Date(job.next_run_at * 1000).toISOString().replace(/\.\d+Z$/, "Z")} (a drain does not wait for delayed jobs, nor for the jobs that need them)`,
      stuckLane: null,
    };
  else if (!served(job.queue, reach))
    out = {
      runs: false,
      why: `job ${id} is in lane ${job.queue}, which no live worker serves`,
      stuckLane: job.queue,
      stuckJob: id,
    };
  else {
    const needs = job.needs_left > 0 ? (graph.unmet.get(id) ?? []) : [];
    if (job.needs_left > needs.length)
      out = { runs: false, why: `job ${id} needs a job that was deleted (add its command again)`, stuckLane: null };
    else {
      const inner = needs.map((n) => ({ n, r: reachOf(n, graph, reach, memo) }));
      const stuck = inner.find((x) => !x.r.runs);
      if (stuck) out = { ...stuck.r, why: `job ${id} waits on job ${stuck.n}; ${stuck.r.why}` };
      else if (inner.length > 0)
        out = { runs: true, why: `job ${id} waits on job ${inner[0]!.n}; ${inner[0]!.r.why}`, stuckLane: null };
      else if (job.next_run_at > reach.now)
        out = {
          runs: true,
          why: `job ${id} (lane ${job.queue}) waits out a retry backoff (due in ${seconds(job.next_run_at - reach.now)})`,
          stuckLane: null,
        };
      else out = { runs: true, why: `job ${id} (lane ${job.queue}) is due`, stuckLane: null };
    }
  }
  memo.set(id, out);
  return out;
}

/**
 * What the queued dependent `job` (`needs_left > 0`) waits on (docs/architecture.md
 * "Drain"). A need can run when it is running, or queued, in a lane that is not
 * paused and that this drain or a live worker serves, not delayed by its adder
 * before its first run, and its own needs can run. A need held, delayed, in a paused
 * lane, in a lane nobody serves, or one that was deleted, cannot: the dependent
 * holds no drain open, like a delayed job. `memo` may be shared across calls
 * on one graph.
 */
export function holdOf(job: Job, graph: NeedGraph, reach: LaneReach, memo = new Map<number, Reach>()): NeedHold {
  const needs = graph.unmet.get(job.id) ?? [];
  const base = { jobId: job.id, queue: job.queue };
  if (job.needs_left > needs.length)
    return {
      ...base,
      needId: null,
      needLane: null,
      runs: false,
      why: `job ${job.id} needs a job that was deleted (add its command again)`,
      stuckLane: null,
      stuckJob: null,
    };
  const inner = needs.map((n) => ({ n, r: reachOf(n, graph, reach, memo) }));
  const pick = inner.find((x) => !x.r.runs) ?? inner[0];
  if (!pick)
    return {
      ...base,
      needId: null,
      needLane: null,
      runs: true,
      why: "its needs are met",
      stuckLane: null,
      stuckJob: null,
    };
  return {
    ...base,
    needId: pick.n,
    needLane: graph.jobs.get(pick.n)?.queue ?? null,
    runs: pick.r.runs,
    why: pick.r.why,
    stuckLane: pick.r.stuckLane,
    stuckJob: pick.r.stuckJob ?? null,
  };
}

/** One line of a hold: `job 2 waits on job 1: job 1 is delayed until …`. */
export function holdText(hold: NeedHold): string {
  return hold.needId === null
    ? `job ${hold.jobId}: ${hold.why}`
    : `job ${hold.jobId} waits on job ${hold.needId}: ${hold.why}`;
}
