/**
 * Lanes an operator steers (docs/architecture.md "Lanes and slots"): what a
 * lane looks like to `lane list`, pause and resume, a lane's fleet-wide slot
 * ceiling, and which lanes a worker serves. The rules themselves (a paused
 * lane starts nothing, a lane's slots win) are in the claim statement; this
 * module decides nothing a concurrent writer could invalidate.
 */
import { invalidValue, SpoolError } from "../contract/errors.ts";
import type { LaneSetData, LaneView, PauseData, ResumeData } from "../describe/schemas-lanes.ts";
import type { LaneCount, LaneSetting } from "../model/job.ts";
import { LIMITS } from "../model/limits.ts";
import { durationText } from "./values.ts";
import type { WorkerView } from "./workers.ts";

/** The registry's lane column of a worker serving every lane (`work --all-lanes`); no lane may be called so. */
export const ALL_LANES = "*";

/** The lanes a worker serves, as its registry row's `queue` column says: a list (`a,b`), or every lane. */
export function workerLanes(column: string): string[] | "all" {
  return column === ALL_LANES ? "all" : column.split(",").filter((l) => l !== "");
}

/** The registry column for the lanes a worker serves: `a,b` in order of preference, or {@link ALL_LANES}. */
export function lanesColumn(lanes: readonly string[] | "all"): string {
  return lanes === "all" ? ALL_LANES : lanes.join(",");
}

/** Whether a worker whose registry column is `column` serves `lane`. */
export function serves(column: string, lane: string): boolean {
  const lanes = workerLanes(column);
  return lanes === "all" || lanes.includes(lane);
}

/** Whether `lane`'s pause is in force at `now` (epoch seconds), as the claim judges it. */
export function pauseInForce(lane: LaneSetting | undefined, now: number): boolean {
  return lane !== undefined && lane.paused_at !== null && (lane.paused_until === null || lane.paused_until > now);
}

/** A pause in words: `paused (reason), resumes by itself in 25m` or `paused (reason) until spoolctl resume LANE`. */
export function pauseText(lane: LaneSetting, now: number): string {
  const why = lane.pause_reason ? ` (${lane.pause_reason})` : "";
  const until =
    lane.paused_until === null
      ? ` until spoolctl resume ${lane.queue}`
      : `, resumes by itself in ${durationText(Math.max(1, Math.ceil(lane.paused_until - now)))}`;
  return `lane ${lane.queue} is paused${why}${until}`;
}

// Defined once, as the JSON Schemas `spoolctl schema` prints.
export type { LaneView };

/**
 * Every lane that has jobs queued or running, a setting (slots, a pause in
 * force) or a live worker naming it, by name, at `now` (epoch seconds), from
 * one snapshot's job counts, lane rows and `live` workers.
 */
export function laneViews(
  counts: readonly LaneCount[],
  lanes: readonly LaneSetting[],
  live: readonly WorkerView[],
  now: number,
): LaneView[] {
  const views = new Map<string, LaneView>();
  const view = (queue: string): LaneView => {
    let v = views.get(queue);
    if (!v) {
      v = {
        queue,
        queued: 0,
        running: 0,
        slots: null,
        paused: false,
        paused_at: null,
        paused_until: null,
        pause_reason: null,
        workers: 0,
      };
      views.set(queue, v);
    }
    return v;
  };
  for (const { state, queue, n } of counts) {
    if (state === "queued" && n > 0) view(queue).queued = n;
    if (state === "running" && n > 0) view(queue).running = n;
  }
  for (const lane of lanes) {
    const paused = pauseInForce(lane, now);
    if (lane.slots === null && !paused && !views.has(lane.queue)) continue;
    Object.assign(view(lane.queue), {
      slots: lane.slots,
      paused,
      paused_at: paused ? lane.paused_at : null,
      paused_until: paused ? lane.paused_until : null,
      pause_reason: paused ? lane.pause_reason : null,
    });
  }
  for (const w of live) {
    const lanes = workerLanes(w.queue);
    if (lanes === "all") continue;
    for (const lane of lanes) view(lane);
  }
  for (const v of views.values()) v.workers = live.filter((w) => serves(w.queue, v.queue)).length;
  return [...views.values()].sort((a, b) => a.queue.localeCompare(b.queue));
}

export type { LaneSetData, PauseData, ResumeData };

/**
 * Parses `lane set`'s `--slots` value: an integer within `LIMITS.slots`, or
 * `none` (any case) to clear the lane's ceiling (null). Raises
 * `INVALID_INPUT` naming the flag and both spellings.
 */
export function parseLaneSlots(raw: string): number | null {
  if (/^\s*none\s*$/i.test(raw)) return null;
  const { min, max } = LIMITS.slots;
  const n = /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (Number.isSafeInteger(n) && n >= min && n <= max) return n;
  const error = invalidValue("--slots", raw, `an integer ${min}-${max}, or none to clear the lane's ceiling`);
  throw new SpoolError(error.code, error.message, {
    remediation:
      "spoolctl lane set LANE --slots N sets the ceiling; --slots none clears it (spoolctl pause LANE holds a lane)",
    detail: error.detail,
  });
}
