/**
 * What holds a drain open when its worker has nothing to run (docs/architecture.md
 * "Drain"): the lane's running jobs, which are other workers' (the drain has none
 * of its own in flight), and dependents whose needs are still to run elsewhere;
 * and which dependents hold nothing, since their needs cannot run in this drain.
 */
import { holdOf, type NeedHold } from "../ops/need-holds.ts";
import type { Store } from "../store/store.ts";
import { drainDependents } from "../store/verbs/need-holds.ts";
import { drainHolders } from "../store/verbs/worker-lanes.ts";
import type { WorkerEvent } from "./api.ts";
import { judge } from "./liveness.ts";
import type { Timing } from "./timing.ts";

/**
 * The `drain_waiting` event for `queue`: its first three running jobs, each with
 * its worker's host and how long the worker has been silent (seconds, on the
 * queue's clock); `reapThreshold` (seconds) is said on a queue shared by hosts,
 * where a silent worker's job is reaped by lease. Null when nothing runs.
 */
export async function whatHoldsTheDrain(
  store: Store,
  queue: string,
  reapThreshold: number,
): Promise<Extract<WorkerEvent, { type: "drain_waiting" }> | null> {
  const running = await drainHolders(store, queue, 3);
  if (running.length === 0) return null;
  const at = store.now();
  return {
    type: "drain_waiting",
    queue,
    leaseSeconds: store.shipsOutput ? reapThreshold : null,
    running: running.map(({ job, worker }) => ({
      jobId: job.id,
      workerId: job.locked_by,
      host: worker?.host ?? null,
      silentSeconds: Math.max(0, at - (job.heartbeat_at ?? at)),
    })),
  };
}

/** What a drain's dependents wait on: those whose needs can run (they hold it) and those whose needs cannot. */
export interface DependentHolds {
  /** True when, in every lane, the only thing left is dependents whose needs cannot run in this drain. */
  settled: boolean;
  holding: NeedHold[];
  stuck: NeedHold[];
}

/**
 * Judges the dependents that hold the drain of `lanes` (served by this drain;
 * `ours` is "all" with --all-lanes) when nothing of them runs (docs/architecture.md
 * "Drain"): the rule for delayed jobs applied to their dependents (`holdOf`,
 * src/ops/need-holds.ts). `paused(lane)`: whether the drain counts the lane as
 * paused (its queued jobs hold nothing). Settled only when every waiting job of
 * every unpaused lane was read and none of them can run.
 */
export async function dependentHolds(
  store: Store,
  lanes: readonly string[],
  ours: readonly string[] | "all",
  paused: (lane: string) => boolean,
  timing: Timing,
): Promise<DependentHolds> {
  const now = store.now();
  const read = await drainDependents(store, lanes, now, {
    judge: (w) =>
      judge({ host: w.host, pid: w.pid, bootId: w.boot_id, startTime: w.start_time, pidNs: w.pid_ns ?? null }),
    stale: { now, seconds: STALE_BEATS * timing.heartbeat, leaseSeconds: timing.reapThreshold },
  });
  const reach = { paused: read.paused, ours: ours === "all" ? ("all" as const) : new Set(ours), live: read.live, now };
  const memo = new Map();
  const holding: NeedHold[] = [];
  const stuck: NeedHold[] = [];
  let settled = true;
  for (const lane of read.lanes) {
    if (paused(lane.queue)) {
      if (lane.state.running > 0) settled = false;
      continue;
    }
    if (lane.state.running > 0 || lane.blocked.length < lane.state.waiting) settled = false;
    for (const job of lane.blocked) {
      const hold = holdOf(job, read.graph, reach, memo);
      (hold.runs ? holding : stuck).push(hold);
    }
  }
  return { settled: settled && holding.length === 0, holding, stuck };
}

/** Heartbeat intervals without a heartbeat after which a worker no longer counts as serving its lanes (as `workers` says `stale`). */
const STALE_BEATS = 3;
