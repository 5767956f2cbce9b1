/**
 * Saying a lane's state where it matters (docs/architecture.md "Lanes and
 * slots"): `add` to a paused lane or to a lane no live worker serves, the
 * drain's progress and closing lines, and the jobs `wait` and `list` show.
 * Reads only; each function reads one snapshot through a verb of
 * src/store/verbs/lane-reads.ts. Commands in the messages are
 * bare (`spoolctl work --queue builds`): the verb's runner carries the user's
 * `--db` into them.
 */
import type { Warning } from "../contract/errors.ts";
import { pauseText, serves } from "../ops/lanes.ts";
import { counted } from "../ops/values.ts";
import type { JudgeWorker, StaleAfter } from "../ops/workers.ts";
import type { SnapshotReader } from "../store/store.ts";
import { laneOverview, pausedLanes } from "../store/verbs/lane-reads.ts";

/** The command that serves `lane` (`spoolctl work`, with `--queue` unless it is the default lane). */
function serveCommand(lane: string, drain = false): string {
  return `spoolctl work${drain ? " --drain" : ""}${lane === "default" ? "" : ` --queue ${lane}`}`;
}

/** How {@link addNotices} tells a live worker (the views' judgement of a worker row, and its `stale` age). */
export interface WorkerJudge {
  judge: JudgeWorker;
  stale?: StaleAfter;
}

/**
 * The warnings of an `add` into `lanes` (`added`: how many jobs this add
 * queued in each lane), read after its commit: `LANE_PAUSED` for a paused
 * lane (the job is added and waits), and `LANE_UNSERVED` when no live worker
 * serves a lane other than `default` and its queued jobs are all this add's
 * (said once per backlog, not at every add of a script), with the command
 * that serves it. `workers` may be null when every lane is `default`: the
 * workers and the counts are then not read.
 */
export async function addNotices(
  store: SnapshotReader,
  added: Map<string, number>,
  workers: WorkerJudge | null,
): Promise<Warning[]> {
  // Only LANE_UNSERVED needs the workers, and it is never said for the default lane.
  const judged = workers !== null && [...added.keys()].some((lane) => lane !== "default");
  const look = await laneOverview(store, { lanes: added.keys(), ...(judged ? { workers } : {}) });
  const { now, live, counts } = look;
  const warnings: Warning[] = [];
  const paused = new Map(look.paused.map((l) => [l.queue, l]));
  for (const [lane, n] of added) {
    const pause = paused.get(lane);
    if (pause)
      warnings.push({
        code: "LANE_PAUSED",
        message: `${pauseText(pause, now)}: the job was added and waits`,
      });
    const queued = counts.find((c) => c.queue === lane && c.state === "queued")?.n ?? 0;
    // The default lane is what `spoolctl work` serves, the first thing a new user runs: no warning for it.
    if (judged && lane !== "default" && n > 0 && queued <= n && !live.some((w) => serves(w.queue, lane)))
      warnings.push({
        code: "LANE_UNSERVED",
        message: `no live worker serves lane ${lane}: the job waits until one does (${serveCommand(lane)}, or ${serveCommand(lane, true)} to run what is queued and exit)`,
      });
  }
  return warnings;
}

/**
 * What a drain's closing line adds (one snapshot at `now`): the paused lanes
 * among those it served, with the jobs they still hold, and the lanes it did
 * not serve that have queued jobs, with the command that drains each.
 */
export async function drainNotes(store: SnapshotReader, served: string[], allLanes: boolean): Promise<string[]> {
  const { now, counts, paused } = await laneOverview(store, {});
  const notes: string[] = [];
  const queued = (lane: string) => counts.find((c) => c.queue === lane && c.state === "queued")?.n ?? 0;
  for (const lane of paused) {
    if (!allLanes && !served.includes(lane.queue)) continue;
    if (queued(lane.queue) > 0)
      notes.push(`${pauseText(lane, now)}: ${counted(queued(lane.queue), "queued job")} left for later`);
  }
  if (allLanes) return notes;
  const others = [...new Set(counts.filter((c) => c.state === "queued" && c.n > 0).map((c) => c.queue))]
    .filter((lane) => !served.includes(lane))
    .sort();
  for (const lane of others.slice(0, 5))
    notes.push(
      `lane ${lane} has ${counted(queued(lane), "queued job")} this drain did not serve: ${serveCommand(lane, true)}`,
    );
  if (others.length > 5) notes.push(`${others.length - 5} more lanes have queued jobs: spoolctl lane list`);
  return notes;
}

/**
 * `LANE_PAUSED` warnings for the queued `jobs` that sit in paused lanes
 * (`list`, `wait`): one per lane, naming how many of them wait there and how
 * to resume it. One read; none when no lane is paused.
 */
export async function pausedJobWarnings(
  store: SnapshotReader,
  jobs: { id: number; queue: string; state: string }[],
): Promise<Warning[]> {
  const queued = jobs.filter((j) => j.state === "queued");
  if (queued.length === 0) return [];
  const { now, lanes: paused } = await pausedLanes(store, new Set(queued.map((j) => j.queue)));
  return paused.map((lane) => {
    const ids = queued.filter((j) => j.queue === lane.queue).map((j) => j.id);
    const shown = ids.slice(0, 5).join(", ") + (ids.length > 5 ? ", …" : "");
    return {
      code: "LANE_PAUSED" as const,
      message: `${pauseText(lane, now)}: ${counted(ids.length, "queued job")} (${shown}) wait${ids.length === 1 ? "s" : ""} for it`,
    };
  });
}
