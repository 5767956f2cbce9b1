/**
 * What holds a drain open when its worker has nothing to run (docs/architecture.md
 * "Drain"): the lane's running jobs, which are other workers' (the drain has none
 * of its own in flight), and dependents whose needs are still to run elsewhere;
 * and which dependents hold nothing, since their needs cannot run in this drain.
 */
import { holdOf, holdText, type NeedHold } from "../ops/need-holds.ts";
import type { Store } from "../store/store.ts";
import { drainDependents } from "../store/verbs/need-holds.ts";
import { drainHolders, heldJobsIn } from "../store/verbs/worker-lanes.ts";
import type { WorkerEvent, WorkSummary } from "./api.ts";
import { judge } from "./liveness.ts";
import type { Timing } from "./timing.ts";

/**
 * The `drain_waiting` event for `queue`: its first three running jobs, each with
 * its worker's host and how long the worker has been silent (seconds, on the
 * queue's clock); `reapThreshold` (seconds) is said on a queue shared by hosts,
 * where a silent worker's job is reaped by lease. Null when nothing runs.
 */
async function whatHoldsTheDrain(
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

/**
 * At a drain's end, says what it leaves: the dependents whose needs cannot run
 * here (left queued, docs/architecture.md "Drain") and the held jobs of the
 * lanes served ("Holding a job"), as events; answers the summary's
 * `left_queued`.
 */
export async function sayWhatTheDrainLeft(
  store: Store,
  lanes: { readonly holds: DependentHolds | null; served(): string[] },
  allLanes: boolean,
  emit: (event: WorkerEvent) => void,
): Promise<WorkSummary["left_queued"]> {
  const stuck = lanes.holds?.stuck ?? [];
  if (stuck.length > 0) emit({ type: "drain_left", holds: stuck });
  const held = await heldJobsIn(store, lanes.served(), allLanes, 5);
  if (held.count > 0) emit({ type: "drain_held", ...held });
  return leftQueued(stuck);
}

/** The drain's `left_queued` summary field: each dependent left queued, in the words of its stderr line. */
function leftQueued(holds: readonly NeedHold[]): WorkSummary["left_queued"] {
  return holds.map((h) => ({
    job_id: h.jobId,
    queue: h.queue,
    need_id: h.needId,
    need_lane: h.needLane,
    text: holdText(h),
    serve_lane: h.stuckLane,
  }));
}

/** How long a drain has nothing to run before it says what it waits for, milliseconds. */
const DRAIN_QUIET_MS = 2000;

/**
 * A drain left with nothing to run, two seconds on, names once what holds it
 * open: other workers' running jobs. It first reaps the jobs of workers of
 * this host certainly dead since the last reap, so that none is named: they
 * are requeued at once (docs/architecture.md "Reaping"); another host's
 * silent worker is named, and reaped when its lease expires. Once per idle
 * spell: {@link DrainNotice.reset} when a job starts.
 */
export class DrainNotice {
  private said = false;
  /** Since when the drain has had nothing to run (performance.now(), ms; null: it has work). */
  private idleSince: number | null = null;

  /** A job started: the next idle spell may be said again. */
  reset(): void {
    this.said = false;
    this.idleSince = null;
  }

  /** Called at each idle turn of a drain; `reapThreshold` in seconds (src/worker/timing.ts). */
  async maybeSay(
    store: Store,
    lanes: { readonly holds: DependentHolds | null; served(): string[]; settled(): Promise<boolean> },
    reapThreshold: number,
    io: { reapNow(): Promise<unknown>; emit(event: WorkerEvent): void },
  ): Promise<void> {
    const now = performance.now();
    this.idleSince ??= now;
    if (this.said || now - this.idleSince < DRAIN_QUIET_MS) return;
    await io.reapNow();
    if (await lanes.settled()) return;
    this.said = true;
    for (const lane of lanes.served()) {
      const event = await whatHoldsTheDrain(store, lane, reapThreshold);
      if (event) {
        io.emit(event);
        return;
      }
    }
    // Nothing runs: dependents whose needs are still to run elsewhere hold it (judged by settled()).
    const holding = lanes.holds?.holding ?? [];
    if (holding.length > 0) io.emit({ type: "drain_needs", holds: holding });
  }
}
