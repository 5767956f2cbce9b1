/**
 * Reads of lanes for the screens that mention them (docs/architecture.md
 * "The operations", "Reads"; "Lanes and slots", "Drain"): which lanes are
 * paused, what they hold, and what a drain still waits for. Each verb is one
 * read snapshot: no guard, no event, no wake.
 */

import type { Job, LaneCount, LaneSetting } from "../../model/job.ts";
import { type LaneView, laneViews, pauseInForce } from "../../ops/lanes.ts";
import type { JudgeWorker, StaleAfter, WorkerView } from "../../ops/workers.ts";
import { drainLeft, type StoreReader } from "../reader.ts";
import type { SnapshotReader } from "../store.ts";
import { listWorkers } from "./workers.ts";

/** The paused lanes among `lanes` (all when absent) at `now` (epoch seconds), with their rows, inside `tx`. */
export async function pausedLanesIn(tx: StoreReader, now: number, lanes?: Iterable<string>): Promise<LaneSetting[]> {
  const wanted = lanes === undefined ? null : new Set(lanes);
  return (await tx.listLanes()).filter((l) => pauseInForce(l, now) && (wanted === null || wanted.has(l.queue)));
}

/**
 * `lane list`: every lane that has jobs queued or running, a setting (slots, a
 * pause in force) or a live worker naming it, by name, judged on the queue's
 * clock; with `stale`, a silent worker does not count as serving. One read
 * snapshot: no guard, no event, no wake. The rows are composed by `laneViews`
 * of src/ops/lanes.ts from this transaction's reads.
 */
export async function laneList(store: SnapshotReader, judge: JudgeWorker, stale?: StaleAfter): Promise<LaneView[]> {
  return await store.read((tx) => readLanes(tx, judge, store.now(), stale));
}

/** {@link laneList}'s rows at `now` (epoch seconds), read inside `tx`: job counts, lane rows, live workers. */
async function readLanes(tx: StoreReader, judge: JudgeWorker, now: number, stale?: StaleAfter): Promise<LaneView[]> {
  const counts = await tx.countByStateAndLane();
  const lanes = await tx.listLanes();
  const live = (await listWorkers(tx, judge, 1000, stale)).filter((w) => w.status === "live");
  return laneViews(counts, lanes, live, now);
}

/**
 * The lanes paused now among `lanes` (all when absent), with their rows, and
 * the queue's clock they were judged at (epoch seconds). One read snapshot:
 * no guard, no event, no wake.
 */
export async function pausedLanes(
  store: SnapshotReader,
  lanes?: Iterable<string>,
): Promise<{ now: number; lanes: LaneSetting[] }> {
  const now = store.now();
  return { now, lanes: await store.read((tx) => pausedLanesIn(tx, now, lanes)) };
}

/** What {@link laneOverview} reads; `workers` also reads the registry, judged as the views judge it. */
export interface LaneOverviewQuery {
  /** Only these lanes' pauses (all when absent); the counts are every lane's. */
  lanes?: Iterable<string>;
  workers?: { judge: JudgeWorker; stale?: StaleAfter };
}

/** The lanes' pauses, job counts and (when asked) live workers, judged at `now` (epoch seconds). */
export interface LaneOverview {
  now: number;
  paused: LaneSetting[];
  counts: LaneCount[];
  /** The live workers (at most 1000); empty when `workers` was not asked. */
  live: WorkerView[];
}

/**
 * What the lane notices of `add` and of the drain's closing line read, in one
 * snapshot on the queue's clock: the paused lanes, the job counts by state and
 * lane, and the live workers. Read only: no guard, no event, no wake.
 */
export async function laneOverview(store: SnapshotReader, q: LaneOverviewQuery): Promise<LaneOverview> {
  const now = store.now();
  return await store.read(async (tx) => ({
    now,
    paused: await pausedLanesIn(tx, now, q.lanes),
    live: q.workers
      ? (await listWorkers(tx, q.workers.judge, 1000, q.workers.stale)).filter((w) => w.status === "live")
      : [],
    counts: await tx.countByStateAndLane(),
  }));
}

/** A drain's progress (docs/architecture.md "Drain"): job counts over the lanes it serves. */
export interface DrainProgress {
  /** What still holds the drain: {@link drainLeft} summed over its lanes. */
  left: number;
  running: number;
  /** Its lanes paused now, by name. */
  paused: string[];
}

/**
 * What a drain of `lanes` (`"all"`: `--all-lanes`, every lane with queued or
 * running jobs) still waits for, in one snapshot on the queue's clock: each
 * lane's `drainState` counted by {@link drainLeft}, the one rule the worker's
 * exit uses, so the progress line says "0 left" exactly when the drain may
 * end. Read only: no guard, no event, no wake.
 */
export async function drainProgress(store: SnapshotReader, lanes: readonly string[] | "all"): Promise<DrainProgress> {
  const now = store.now();
  return await store.read(async (tx) => {
    const names =
      lanes === "all"
        ? [
            ...new Set(
              (await tx.countByStateAndLane())
                .filter((c) => (c.state === "queued" || c.state === "running") && c.n > 0)
                .map((c) => c.queue),
            ),
          ].sort()
        : [...lanes];
    const paused = new Set((await pausedLanesIn(tx, now, lanes === "all" ? undefined : names)).map((l) => l.queue));
    const out: DrainProgress = { left: 0, running: 0, paused: [] };
    for (const lane of names) {
      const state = await tx.drainState(lane, now);
      out.left += drainLeft(state, paused.has(lane));
      out.running += state.running;
    }
    out.paused = [...paused].sort();
    return out;
  });
}

/**
 * Jobs the queue closed since `since` (epoch seconds, the store's clock)
 * because a need of theirs died (`need_failed`, docs/architecture.md
 * "Dependencies"), oldest first, at most `limit`: what a drain's summary
 * names ("job 5 deploy closed: needs job 3, dead"). One snapshot.
 */
export async function closedByNeedsSince(store: SnapshotReader, since: number, limit = 50): Promise<Job[]> {
  const jobs = await store.read(async (tx) => tx.listJobs({ states: ["canceled"], finishedSince: since, limit: 1000 }));
  return jobs
    .filter((j) => j.last_error?.startsWith("need_failed: ") === true)
    .reverse()
    .slice(0, limit);
}
