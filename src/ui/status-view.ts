/**
 * Text of `status`: the one-shot lines (the seed's wording, colored by state
 * only on a terminal) and the `--watch` frame, fitted to the terminal.
 */

import { REPORTED_STATES } from "../model/job.ts";
import type { LiveStatus } from "../ops/live.ts";
import type { StateCounts, StatusData } from "../ops/status.ts";
import { workerStateWord } from "../ops/worker-health.ts";
import { paint as makePaint, type Paint } from "./color.ts";
import { clip, clipLine, escapeControl, formatArgv, humanDuration, iso, table } from "./text.ts";

/** `canceled 0  dead 0  done 0  failed 0  queued 3  running 0`, non-zero counts in their state's color. */
function countsLine(c: StateCounts, color: Paint = makePaint(false)): string {
  return REPORTED_STATES.map((s) => (c[s] > 0 ? color.state(s, `${s} ${c[s]}`) : `${s} ${c[s]}`)).join("  ");
}

/**
 * The one-shot `status` text (unchanged wording; colors only when `color.on`).
 * `suggest` puts the queue's selection into the commands it suggests
 * (src/commands/selection.ts); job data (errors, argv) never goes through it.
 */
export function renderStatus(
  data: StatusData,
  color: Paint = makePaint(false),
  suggest: (text: string) => string = (t) => t,
  room = Infinity,
): string {
  const lines = [countsLine(data.counts, color)];
  if (data.scheduled > 0) lines.push(`scheduled ${data.scheduled} (queued, not yet due)`);
  if (data.held > 0) lines.push(`held ${data.held} (queued, kept from starting: ${suggest("spoolctl release ID")})`);
  const waiting = data.waiting_on_needs;
  if (waiting && waiting.count > 0) {
    const shown = waiting.jobs.map((j) => `${j.job_id} on ${j.waiting_on.join(",")}`).join("; ");
    lines.push(
      `waiting ${waiting.count} (queued, waiting for other jobs: ${shown}${waiting.count > waiting.jobs.length ? "; …" : ""})`,
    );
  }
  const lanes = Object.keys(data.queues).sort();
  if (lanes.length > 1 || (lanes.length === 1 && lanes[0] !== "default")) {
    for (const lane of lanes) lines.push(`  ${lane}: ${countsLine(data.queues[lane]!, color)}`);
  }
  lines.push(...pausedLines(data, color, suggest));
  if (data.stranded.length) {
    // A stale worker lives (stopped, blocked): another worker would not take its jobs, so say so, not "start one".
    const silentOnly = data.stranded.every((h) => h.worker_state === "stale");
    // On a full disk a new worker could write no more than the ones there: free space first, not "start one".
    const none =
      data.live_workers === 0 && !silentOnly
        ? data.full_disks?.length
          ? " (a disk of the queue is full: no worker can write until space is freed; see below)"
          : suggest(" (no worker is running: start one, spoolctl work)")
        : "";
    const what = silentOnly ? "running jobs whose worker is silent" : "running jobs whose worker is gone or silent";
    lines.push(color.red(`${what}: ${data.stranded.length}${none}`));
    for (const h of data.stranded.slice(0, 10))
      lines.push(`  ${color.red(`job ${h.job_id}`)}  ${h.worker_state}: ${escapeControl(h.fate)}`);
    if (data.stranded.length > 10)
      lines.push(`  … ${data.stranded.length - 10} more (${suggest("spoolctl status --json")})`);
  }
  if (data.recent_dead.length) {
    lines.push("recent dead:");
    // One line per job at a terminal (`room` columns): the command is cut, never wrapped.
    for (const j of data.recent_dead)
      lines.push(
        clipLine(
          `  ${color.state("dead", `job ${j.id}`)}  ${clip(escapeControl(j.last_error ?? "-"))}  ${clip(formatArgv(j.argv))}`,
          room,
        ),
      );
  }
  if (data.schedules?.length) {
    lines.push(`schedules: ${data.schedules.length}`);
    for (const sc of data.schedules.slice(0, 10)) {
      const next = sc.next_slot === null ? "paused" : `next ${iso(sc.next_slot, false)}`;
      const last =
        sc.last_job_id === null ? "no job yet" : `last job ${sc.last_job_id} ${sc.last_job_state ?? "deleted"}`;
      lines.push(`  ${escapeControl(sc.name)}  ${next}  ${last}`);
    }
    if (data.schedules.length > 10)
      lines.push(`  … ${data.schedules.length - 10} more (${suggest("spoolctl schedule list")})`);
  }
  for (const d of data.full_disks ?? []) {
    lines.push(
      color.red(
        `disk full: the ${d.role} disk (${escapeControl(d.path)}) has ${Math.floor(d.free_bytes / 1024)} KiB free; workers pause claiming until space is freed (${suggest("spoolctl doctor")})`,
      ),
    );
  }
  return lines.join("\n");
}

/** One loud line per paused lane (docs/architecture.md "Lanes and slots"): why, until when, what waits, how to resume. */
function pausedLines(
  data: Pick<StatusData, "paused_lanes">,
  color: Paint = makePaint(false),
  suggest: (text: string) => string = (t) => t,
): string[] {
  return data.paused_lanes.map((l) => {
    const why = l.reason ? ` (${escapeControl(l.reason)})` : "";
    const until = l.paused_until === null ? "until resumed" : `until ${iso(l.paused_until, false)}`;
    return color.red(
      `PAUSED lane ${l.queue}${why} ${until}: ${l.queued} queued job(s) wait; ${suggest(`spoolctl resume ${l.queue}`)}`,
    );
  });
}

/** The `--watch` frame as lines (not yet fitted to the terminal). */
export function renderLiveStatus(live: LiveStatus, color: Paint, intervalSeconds: number): string[] {
  const s = live.status;
  const lines = [
    color.dim(`spoolctl status --watch · every ${intervalSeconds}s · ${iso(live.at, false)} · Ctrl-C to quit`),
    "",
    countsLine(s.counts, color),
    `scheduled ${s.scheduled} (of the queued, not yet due)  held ${s.held}  live workers ${s.live_workers}`,
    ...pausedLines(s, color),
  ];
  const lanes = Object.keys(s.queues).sort();
  if (lanes.length) {
    lines.push("");
    const cell = (state: string, n: number) => (n > 0 ? color.state(state, String(n)) : String(n));
    lines.push(
      ...table(
        // Scheduled jobs are queued jobs not yet due: a part of QUEUED, not beside it.
        ["LANE", "QUEUED", "OF WHICH SCHEDULED", "HELD", "RUNNING", "DONE", "DEAD", "CANCELED"],
        lanes.map((lane) => {
          const q = s.queues[lane]!;
          return [
            lane,
            cell("queued", q.queued),
            cell("scheduled", q.scheduled),
            cell("held", q.held),
            cell("running", q.running),
            cell("done", q.done),
            cell("dead", q.dead),
            cell("canceled", q.canceled),
          ];
        }),
      ).split("\n"),
    );
  }
  // A running job whose worker is gone says so beside the worker (docs/architecture.md "Dead workers in the views").
  const gone = new Map(s.stranded.map((h) => [h.job_id, workerStateWord(h)]));
  const workerCell = (jobId: number, worker: string | null) =>
    gone.has(jobId) ? color.red(`${worker ?? "-"} (${gone.get(jobId)})`) : (worker ?? "-");
  lines.push("", color.bold(`RUNNING (${s.counts.running})`));
  if (live.running.length === 0) lines.push(color.dim("  nothing running"));
  else {
    lines.push(
      ...table(
        ["ID", "LANE", "ATTEMPT", "ELAPSED", "WORKER", "COMMAND"],
        live.running.map((r) => [
          color.state("running", String(r.id)),
          r.queue,
          String(r.attempt_no),
          humanDuration(r.elapsed_seconds),
          workerCell(r.id, r.worker_id),
          clip(formatArgv(r.argv)),
        ]),
      ).split("\n"),
    );
    if (s.counts.running > live.running.length)
      lines.push(color.dim(`  … ${s.counts.running - live.running.length} more`));
  }
  lines.push("", color.bold("RECENT FAILURES"));
  if (live.failures.length === 0) lines.push(color.dim("  none"));
  else {
    lines.push(
      ...table(
        ["JOB", "ATTEMPT", "ENDED", "RESULT", "NOW", "COMMAND"],
        live.failures.map((f) => [
          String(f.job_id),
          String(f.attempt_no),
          f.finished_at === null ? "-" : `${humanDuration(Math.max(0, live.at - f.finished_at))} ago`,
          color.red(escapeControl(`${f.failure_reason ?? f.attempt_state}: ${f.error ?? "-"}`)),
          f.job_state ? color.state(f.job_state) : "-",
          clip(formatArgv(f.argv)),
        ]),
      ).split("\n"),
    );
  }
  return lines;
}

/** Cuts a line to `width` terminal columns, keeping SGR codes intact (and resetting after a cut). */
function fitLine(line: string, width: number): string {
  return clipLine(line, width);
}

/** Fits lines to a `width` × `height` screen; a last line says how many were cut. */
export function fitScreen(lines: string[], width: number, height: number): string[] {
  const w = Math.max(20, width - 1);
  let shown = lines;
  if (lines.length > height)
    shown = [
      ...lines.slice(0, Math.max(1, height - 1)),
      `… ${lines.length - Math.max(1, height - 1)} more lines (enlarge the terminal)`,
    ];
  return shown.map((l) => fitLine(l, w));
}
