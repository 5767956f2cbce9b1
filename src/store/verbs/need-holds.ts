/**
 * What a drain and `wait` read to judge queued dependents (docs/architecture.md
 * "Drain", "Dependencies"): the dependents that hold a drain's lanes, their
 * needs walked up to the jobs that must run first, the paused lanes and the
 * lanes live workers serve. The rule itself is `holdOf` of src/ops/need-holds.ts.
 * Each verb is one read snapshot: no guard, no event, no wake.
 */
import type { Job } from "../../model/job.ts";
import { ALL_LANES, workerLanes } from "../../ops/lanes.ts";
import type { NeedGraph } from "../../ops/need-holds.ts";
import type { DrainState, StoreReader } from "../reader.ts";
import type { Store } from "../store.ts";
import { pausedLanesIn } from "./lane-reads.ts";
import type { WorkersJudged } from "./wait.ts";
import { listWorkers } from "./workers.ts";

/** At most this many jobs are read walking up from the dependents; past it a need counts as able to run. */
const GRAPH_LIMIT = 2000;

/**
 * The unmet needs of `roots`, transitively, inside `tx`: one `unmetNeeds` and
 * one `listJobs` statement per level, at most {@link GRAPH_LIMIT} jobs read.
 */
async function needGraph(tx: StoreReader, roots: readonly Job[]): Promise<NeedGraph> {
  const jobs = new Map(roots.map((j) => [j.id, j]));
  const unmet = new Map<number, number[]>();
  let frontier = roots.filter((j) => j.state === "queued" && j.needs_left > 0);
  while (frontier.length > 0 && jobs.size < GRAPH_LIMIT) {
    const found = await tx.unmetNeeds(frontier.map((j) => j.id));
    const next: number[] = [];
    for (const [id, needs] of found) {
      unmet.set(id, needs);
      for (const n of needs) if (!jobs.has(n) && !next.includes(n)) next.push(n);
    }
    const read = next.length ? await tx.listJobs({ ids: next.slice(0, GRAPH_LIMIT), limit: GRAPH_LIMIT }) : [];
    for (const j of read) jobs.set(j.id, j);
    frontier = read.filter((j) => j.state === "queued" && j.needs_left > 0);
  }
  return { jobs, unmet };
}

/** The lanes live workers serve, {@link ALL_LANES} for one serving every lane, judged by `workers`. */
async function liveLanes(tx: StoreReader, workers: WorkersJudged): Promise<Set<string>> {
  const rows = await listWorkers(tx, workers.judge, 1000, workers.stale);
  const live = new Set<string>();
  for (const w of rows) {
    if (w.status !== "live") continue;
    const lanes = workerLanes(w.queue);
    for (const l of lanes === "all" ? [ALL_LANES] : lanes) live.add(l);
  }
  return live;
}

/** What {@link drainDependents} read: per lane its drain state and blocked dependents, and what judges them. */
export interface DrainDependents {
  lanes: { queue: string; state: DrainState; blocked: Job[] }[];
  graph: NeedGraph;
  paused: Set<string>;
  live: Set<string>;
}

/**
 * For a drain of `lanes` at `now` (epoch seconds), one snapshot: each lane's
 * `drainState` and its queued dependents that count in it (`blockedWaiting`,
 * at most `limit` a lane), their needs walked up (`needGraph`), the paused
 * lanes and the lanes live workers serve (`workers`). Read only when a drain
 * with nothing running is held by waiting jobs.
 */
export async function drainDependents(
  store: Pick<Store, "read">,
  lanes: readonly string[],
  now: number,
  workers: WorkersJudged,
  limit = 1000,
): Promise<DrainDependents> {
  return store.read(async (tx) => {
    const out: DrainDependents["lanes"] = [];
    for (const queue of lanes) {
      const state = await tx.drainState(queue, now);
      const blocked = state.waiting > 0 ? await tx.blockedWaiting(queue, now, limit) : [];
      out.push({ queue, state, blocked });
    }
    return {
      lanes: out,
      graph: await needGraph(
        tx,
        out.flatMap((l) => l.blocked),
      ),
      paused: new Set((await pausedLanesIn(tx, now)).map((l) => l.queue)),
      live: await liveLanes(tx, workers),
    };
  });
}

/**
 * The needs of the queued dependents among `jobs`, walked up (`needGraph`),
 * and the lanes paused at `now` (epoch seconds), one snapshot: what `wait`
 * reads to name a need's lane that no worker serves.
 */
export async function needsOfWaiting(
  store: Pick<Store, "read">,
  jobs: readonly Job[],
  now: number,
): Promise<{ graph: NeedGraph; paused: Set<string> }> {
  return store.read(async (tx) => ({
    graph: await needGraph(tx, jobs),
    paused: new Set((await pausedLanesIn(tx, now)).map((l) => l.queue)),
  }));
}
