/** The worker's log lines on stderr (`spoolctl: job 1 attempt 1 succeeded (0.0s) -> done`), one per event. */

import { holdText } from "../ops/need-holds.ts";
import type { Leftovers, Outcome } from "../ops/outcome.ts";
import { counted } from "../ops/values.ts";
import type { WorkerEvent } from "../worker/api.ts";
import { HOST } from "../worker/liveness.ts";
import { clip, crashBudget, escapeControl, formatArgv, retryBudget } from "./text.ts";

function next(outcome: Outcome): string {
  if (outcome.jobState === "queued" && outcome.backoffSeconds !== null)
    return `queued, retry in ${outcome.backoffSeconds}s`;
  return outcome.jobState;
}

function verdict(outcome: Outcome): string {
  switch (outcome.attemptState) {
    case "succeeded":
      return "succeeded";
    case "timed_out":
      return outcome.error ?? "timed out";
    case "canceled":
      return outcome.jobState === "queued" ? "interrupted" : "canceled";
    default:
      return outcome.failureReason === "spawn_failed"
        ? `could not start: ${escapeControl(outcome.error ?? "")}`
        : `failed: ${escapeControl(outcome.error ?? "")}`;
  }
}

/** What an attempt left running, as its worker line says it (docs/architecture.md "Leftover processes"). */
function leftLine(left: Leftovers): string {
  const n = left.pids.length;
  const pids = `PID${n === 1 ? "" : "s"} ${left.pids.join(", ")}`;
  return left.killed
    ? `ended the ${counted(n, "process", "processes")} it left running (${pids})`
    : `${counted(n, "process", "processes")} left running (${pids})`;
}

/** Why attempt 2 or later runs: the previous attempt's end and what the budget says. */
function rerun(job: Extract<WorkerEvent, { type: "started" }>["job"]): string {
  const previous = job.last_error ? `previous: ${escapeControl(job.last_error)}; ` : "";
  if (job.attempts === 0 && job.crashes === 0) return `again (${previous}fresh budget)`;
  const budgets = [
    job.attempts > 0 ? retryBudget(job.attempts, job.max_retries) : null,
    job.crashes > 0 ? crashBudget(job.crashes, job.max_crashes) : null,
  ];
  return `again (${previous}${budgets.filter(Boolean).join("; ")})`;
}

/** `job 5` or `job 5 deploy`: a job as worker lines name it (the name escaped: it is one line). */
function jobWords(id: number, name: string | null | undefined): string {
  return name ? `job ${id} ${escapeControl(name)}` : `job ${id}`;
}

/**
 * The lines of a drain's summary that name the dependents closed because a
 * need died: `spoolctl: job 5 deploy closed: needs job 3, dead` (README
 * "Running jobs"), `more` of them left unsaid.
 */
export function closedLines(
  jobs: { id: number; name: string | null; last_error: string | null }[],
  more = 0,
): string[] {
  const lines = jobs.map((j) => {
    const m = /^need_failed: job (\d+) ended (\w+)/.exec(j.last_error ?? "");
    const why = m ? `needs job ${m[1]}, ${m[2]}` : escapeControl((j.last_error ?? "").replace(/^need_failed: /, ""));
    return `spoolctl: ${jobWords(j.id, j.name)} closed: ${why}`;
  });
  if (more > 0) lines.push(`spoolctl: … and ${more} more closed dependents (spoolctl list --state canceled)`);
  return lines;
}

/**
 * One line per worker event, e.g. `spoolctl: job 1 attempt 1 succeeded (0.0s) -> done`;
 * null for an event that says nothing by itself. A start says the job, its name, lane and
 * attempt, so a CI log reads which job ran where (README "Running jobs").
 */
export function workerLine(event: WorkerEvent): string | null {
  switch (event.type) {
    case "started": {
      const head = `spoolctl: ${jobWords(event.job.id, event.job.name)} attempt ${event.attemptNo} started in lane ${event.job.queue}`;
      return `${head}${event.attemptNo === 1 ? "" : ` ${rerun(event.job)}`}: ${clip(formatArgv(event.job.argv), 80)}`;
    }
    case "schedule":
      return event.outcomes
        .map((o) => {
          const slot = new Date(o.slot * 1000).toISOString();
          if (o.outcome === "fired") return `spoolctl: schedule ${o.schedule} slot ${slot} -> job ${o.job_id}`;
          if (o.outcome === "skipped")
            return `spoolctl: schedule ${o.schedule} slot ${slot} skipped: its previous job is still active (--overlap skip)`;
          return `spoolctl: schedule ${o.schedule}: ${counted(o.count ?? 1, "slot")} from ${slot} missed (--catch-up)`;
        })
        .join("\n");
    case "idle":
      return `spoolctl: waiting for jobs in lane${event.queue.includes(",") ? "s" : ""} ${event.queue}; Ctrl-C to stop`;
    case "lane_paused":
      return `spoolctl: ${escapeControl(event.message)}: no job of it starts here; running jobs finish`;
    case "lane_resumed":
      return `spoolctl: lane ${event.queue} resumed: its jobs start again`;
    case "lane_slots":
      return `spoolctl: warning: lane ${event.queue} has its own ceiling of ${event.slots} running job(s) (spoolctl lane set), which wins over this worker's --slots ${event.own}`;
    case "drain_waiting": {
      const jobs = event.running.map(
        (r) =>
          `job ${r.jobId} on worker ${escapeControl(r.workerId ?? "?")}${r.host && r.host !== HOST ? ` (${escapeControl(r.host)})` : ""}, silent ${Math.round(r.silentSeconds)}s`,
      );
      return `spoolctl: drain of lane ${event.queue} waits for running jobs of other workers: ${jobs.join("; ")}${event.running.length === 3 ? "; …" : ""}${event.leaseSeconds === null ? "" : ` (a job whose worker stays silent ${Math.round(event.leaseSeconds)}s is reaped and run here)`}`;
    }
    case "drain_needs":
      return event.holds
        .slice(0, 3)
        .map((h) => `spoolctl: drain of lane ${h.queue} waits: ${escapeControl(holdText(h))}`)
        .concat(event.holds.length > 3 ? [`spoolctl: … and ${event.holds.length - 3} more dependents`] : [])
        .join("\n");
    case "drain_left":
      return event.holds
        .slice(0, 5)
        .map(
          (h) =>
            `spoolctl: left queued: ${escapeControl(holdText(h))}${h.stuckLane ? ` (serve it: spoolctl work${h.stuckLane === "default" ? "" : ` --queue ${h.stuckLane}`})` : ""}`,
        )
        .concat(
          event.holds.length > 5
            ? [`spoolctl: … and ${event.holds.length - 5} more dependents left queued (spoolctl status)`]
            : [],
        )
        .join("\n");
    case "drain_held":
      return `spoolctl: left held: ${event.jobs.map((j) => `job ${j.id} (lane ${escapeControl(j.queue)})`).join(", ")}${event.count > event.jobs.length ? `, … ${event.count - event.jobs.length} more` : ""} (a drain does not wait for held jobs; spoolctl release ID lets them run)`;
    case "finished":
      return `spoolctl: job ${event.jobId} attempt ${event.attemptNo} ${verdict(event.outcome)} (${event.seconds.toFixed(1)}s) -> ${next(event.outcome)}${event.left ? `; ${leftLine(event.left)}` : ""}`;
    case "lost":
      return `spoolctl: job ${event.jobId} attempt ${event.attemptNo} ended after the job was taken from this worker (canceled, retried, or reaped when its lease expired); result not recorded`;
    case "reaped":
      // The seed's exact wording (issue 3): "now queued", without the retry delay.
      return !event.reaped.byLease
        ? `spoolctl: reaped job ${event.reaped.jobId} (worker pid ${event.reaped.workerPid} died); now ${event.reaped.outcome.jobState}`
        : `spoolctl: reaped job ${event.reaped.jobId} (worker pid ${event.reaped.workerPid} on ${escapeControl(event.reaped.host)} lost its lease); now ${event.reaped.outcome.jobState}`;
    case "orphans":
      return `spoolctl: killed ${counted(event.killed.length, "orphaned process group")} left on this host by dead workers (${event.killed.map((k) => `job ${k.jobId} attempt ${k.attemptNo}`).join(", ")})`;
    case "orphan_spared":
      return `spoolctl: warning: left process group ${event.pgid} alone: it holds this worker (its own group, or its shell's), though a process in it belongs to job ${event.jobId} attempt ${event.attemptNo} of this queue; end that process yourself if it should not run`;
    case "lease_lost":
      return `spoolctl: cannot renew the lease of ${counted(event.jobIds.length, "running job")} for ${event.seconds.toFixed(0)}s; stopped them (job ${event.jobIds.join(", ")}) before another worker takes them over`;
    case "watchdog":
      return `spoolctl: ${escapeControl(event.message)}`;
    case "transient":
      return `spoolctl: ${escapeControl(event.message)}; will retry`;
    case "storage":
    case "id_wait":
    case "tracing":
      return `spoolctl: ${escapeControl(event.message)}`;
    case "stopping":
      return event.inFlight > 0
        ? `spoolctl: ${event.reason}: finishing ${counted(event.inFlight, "running job")}, then exiting (${event.reason.startsWith("got ") ? "signal again" : "Ctrl-C or SIGTERM to this worker"} to kill them)`
        : `spoolctl: ${event.reason}: exiting`;
  }
}
