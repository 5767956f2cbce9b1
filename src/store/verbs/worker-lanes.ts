/**
 * What a worker reads of the lanes it serves (docs/architecture.md "Lanes and
 * slots", "Drain", "Waking"): their steering rows, whether they are settled,
 * when their next job is due, and what holds a drain open. Each is one read
 * snapshot; none writes or signals.
 */
import type { Job, LaneCount, LaneSetting, WorkerRecord } from "../../model/job.ts";
import type { DrainState } from "../reader.ts";
import type { Store } from "../store.ts";

/**
 * Every lane's steering row and, with `withCounts` (a worker serving every
 * lane), the lanes that have queued or running jobs (their counts by state,
 * `n > 0`), one read snapshot.
 */
export async function laneView(
  store: Store,
  withCounts: boolean,
): Promise<{ settings: LaneSetting[]; withJobs: LaneCount[] }> {
  return await store.read(async (tx) => ({
    settings: await tx.listLanes(),
    withJobs: withCounts
      ? (await tx.countByStateAndLane()).filter((c) => (c.state === "queued" || c.state === "running") && c.n > 0)
      : [],
  }));
}

/** What holds a drain open in each of `lanes` at `now` (epoch seconds), in order: one `drainState` statement per lane, one snapshot. */
export async function drainStates(store: Store, lanes: readonly string[], now: number): Promise<DrainState[]> {
  return await store.read(async (tx) => {
    const out: DrainState[] = [];
    for (const lane of lanes) out.push(await tx.drainState(lane, now));
    return out;
  });
}

/** The earliest `next_run_at` (epoch seconds) of a queued job in any of `lanes`, or null: one statement per lane, one snapshot. */
export async function nextDueAt(store: Store, lanes: readonly string[]): Promise<number | null> {
  return await store.read(async (tx) => {
    let first: number | null = null;
    for (const lane of lanes) {
      const t = await tx.nextDueAt(lane);
      if (t !== null && (first === null || t < first)) first = t;
    }
    return first;
  });
}

/**
 * Held jobs of `lanes` (every lane with `all`), for a drain's `left held:`
 * line (docs/architecture.md "Holding a job"): the first `limit` by id and
 * how many there are. One snapshot; one statement per lane.
 */
export async function heldJobsIn(
  store: Store,
  lanes: readonly string[],
  all: boolean,
  limit: number,
): Promise<{ jobs: { id: number; queue: string }[]; count: number }> {
  return await store.read(async (tx) => {
    const counts = await tx.countHeldByLane();
    const wanted = counts.filter((c) => all || lanes.includes(c.queue));
    const count = wanted.reduce((n, c) => n + c.n, 0);
    const jobs: { id: number; queue: string }[] = [];
    for (const c of wanted) {
      if (jobs.length >= limit) break;
      const rows = await tx.listJobs({ states: ["queued"], held: true, queue: c.queue, limit: limit - jobs.length });
      jobs.push(...rows.map((j) => ({ id: j.id, queue: j.queue })));
    }
    return { jobs: jobs.sort((a, b) => a.id - b.id), count };
  });
}

/** What holds a drain of lane `queue` open: up to `limit` of its running jobs, newest first, each with its worker's registry row (null: none), one snapshot. */
export async function drainHolders(
  store: Store,
  queue: string,
  limit: number,
): Promise<{ job: Job; worker: WorkerRecord | null }[]> {
  return await store.read(async (tx) => {
    const jobs = await tx.listJobs({ queue, states: ["running"], limit });
    return Promise.all(
      jobs.map(async (j) => ({ job: j, worker: j.locked_by === null ? null : await tx.getWorker(j.locked_by) })),
    );
  });
}
