/**
 * What an attempt left running once its own process exited, as its
 * `left_running` event records it (docs/architecture.md "Leftover
 * processes"), read back for `show` and `feedback`. Pure: no I/O.
 */
import type { LeftRunning } from "../describe/schemas-jobs.ts";
import type { JobEvent } from "../model/job.ts";

// Defined once, as the JSON Schemas `spoolctl schema` prints.
export type { LeftRunning };

/**
 * The `left_running` records among `events`, oldest first; with
 * `attemptNo`, only that attempt's. A detail that does not parse is skipped.
 */
export function leftRunningOf(events: JobEvent[], attemptNo?: number): LeftRunning[] {
  const out: LeftRunning[] = [];
  for (const e of events) {
    if (e.event !== "left_running" || e.detail === null) continue;
    try {
      const d = JSON.parse(e.detail) as { attempt?: unknown; pids?: unknown; killed?: unknown };
      if (typeof d.attempt !== "number" || !Array.isArray(d.pids)) continue;
      if (attemptNo !== undefined && d.attempt !== attemptNo) continue;
      out.push({
        attempt: d.attempt,
        pids: d.pids.filter((p): p is number => typeof p === "number"),
        killed: d.killed === true,
      });
    } catch {
      // not ours to judge: a detail written by something else
    }
  }
  return out;
}

/**
 * One line about what an attempt left running: its PIDs, and whether its
 * worker ended them or how to have them ended.
 */
export function leftRunningText(l: LeftRunning): string {
  const n = l.pids.length;
  const what = `attempt ${l.attempt} left ${n} process${n === 1 ? "" : "es"} running after it exited: PID${n === 1 ? "" : "s"} ${l.pids.join(", ")}`;
  return l.killed
    ? `${what}; its worker ended ${n === 1 ? "it" : "them"} (--kill-leftovers)`
    : `${what}; left alone (add --kill-leftovers, or config set kill_leftovers on, has workers end them)`;
}
