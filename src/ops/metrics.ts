/**
 * The Prometheus exposition of the queue (README "Metrics and traces",
 * docs/architecture.md "Metrics"): a pure function from one read snapshot to
 * the text format (or OpenMetrics), so `spoolctl metrics`, `metrics --serve`
 * and the web view's `/metrics` print the same thing. No I/O.
 */
import { type DeadJobKind, DURATION_BUCKETS, type MetricCount } from "../model/metrics.ts";

/** What one scrape reads, in one snapshot. Times epoch seconds. */
export interface MetricsSnapshot {
  /** The queue's clock at the read. */
  at: number;
  version: string;
  driver: string;
  counts: MetricCount[];
  /** Jobs now, by lane and state. */
  jobs: { queue: string; state: string; n: number }[];
  /** Held jobs now, by lane (a part of the queued ones; docs/architecture.md "Holding a job"). */
  held: { queue: string; n: number }[];
  /** Per lane with queued jobs: the earliest `next_run_at` of one (null: none). */
  earliestDue: { queue: string; next_run_at: number | null }[];
  /** Workers by host and judged status (live, stale, lease_expired, stopped, dead). */
  workers: { host: string; status: string }[];
  pausedLanes: string[];
  deadKinds: DeadJobKind[];
}

/** Content types of the two formats. */
export const CONTENT_TYPES = {
  prometheus: "text/plain; version=0.0.4; charset=utf-8",
  openmetrics: "application/openmetrics-text; version=1.0.0; charset=utf-8",
} as const;

/** Dead-job groups shown by name; the rest are summed as `other`. */
const DEAD_GROUPS_SHOWN = 10;

const JOB_STATES = ["queued", "running", "done", "dead", "canceled"];
const OUTCOMES = ["done", "dead", "canceled"];

function escapeLabel(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function labels(l: Record<string, string>): string {
  const parts = Object.entries(l).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return parts.length ? `{${parts.join(",")}}` : "";
}

function num(n: number): string {
  if (n === Number.POSITIVE_INFINITY) return "+Inf";
  return Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(15)));
}

/** A dead job's failure group label: `process_exit exit 1`, `timeout`, `worker_crash`, `never_ran`. */
function groupOf(k: DeadJobKind): string {
  if (k.failure_reason === null) return "never_ran";
  if (k.signal !== null) return `${k.failure_reason} signal ${k.signal}`;
  if (k.exit_code !== null && k.failure_reason === "process_exit") return `${k.failure_reason} exit ${k.exit_code}`;
  return k.failure_reason;
}

/**
 * Renders `snap` as the Prometheus text format 0.0.4, or OpenMetrics 1.0
 * (`openmetrics`: counter families named without `_total`, a `# UNIT` line
 * for the histograms, `# EOF` last). Names, help texts and labels are those
 * of README "Metrics and traces"; no job id or command is ever a label.
 */
export function renderExposition(snap: MetricsSnapshot, openmetrics = false): string {
  const out: string[] = [];
  const family = (name: string, type: string, help: string, unit?: string) => {
    const base = openmetrics && type === "counter" ? name.replace(/_total$/, "") : name;
    out.push(`# HELP ${base} ${help}`, `# TYPE ${base} ${type}`);
    if (openmetrics && unit) out.push(`# UNIT ${base} ${unit}`);
  };
  const sample = (name: string, l: Record<string, string>, v: number) => out.push(`${name}${labels(l)} ${num(v)}`);
  const lanes = [...new Set([...snap.jobs.map((j) => j.queue), ...snap.pausedLanes])].sort();
  const counted = (metric: string) => snap.counts.filter((c) => c.metric === metric);

  family("spoolctl_jobs", "gauge", "Jobs in the queue now, by lane and state.");
  for (const lane of lanes)
    for (const state of JOB_STATES)
      sample(
        "spoolctl_jobs",
        { lane, state },
        snap.jobs.filter((j) => j.queue === lane && j.state === state).reduce((a, j) => a + j.n, 0),
      );

  // Held is a flag on queued jobs, not a state: its own gauge, so summing spoolctl_jobs over states counts each job once.
  family("spoolctl_jobs_held", "gauge", "Queued jobs held by spoolctl hold (a part of state=queued), by lane.");
  for (const lane of lanes)
    sample(
      "spoolctl_jobs_held",
      { lane },
      snap.held.filter((h) => h.queue === lane).reduce((a, h) => a + h.n, 0),
    );

  family(
    "spoolctl_jobs_finished_total",
    "counter",
    "Jobs that reached a terminal state (done, dead, canceled), counted in the database: monotonic across restarts, hosts and prunes.",
  );
  const finished = counted("finished");
  const finishedLanes = [...new Set([...lanes, ...finished.map((c) => c.scope)])].sort();
  for (const lane of finishedLanes)
    for (const outcome of OUTCOMES)
      sample(
        "spoolctl_jobs_finished_total",
        { lane, outcome },
        finished.filter((c) => c.scope === lane && c.label === outcome).reduce((a, c) => a + c.n, 0),
      );

  for (const [metric, name, help] of [
    [
      "retries",
      "spoolctl_job_retries_total",
      "Requeues after a job-owned failure (exit, timeout, spawn failure) with retry budget left.",
    ],
    ["crashes", "spoolctl_job_crashes_total", "Crashes charged to jobs: attempts whose worker died and were reaped."],
  ] as const) {
    family(name, "counter", help);
    const rows = counted(metric);
    for (const lane of [...new Set([...finishedLanes, ...rows.map((c) => c.scope)])].sort())
      sample(
        name,
        { lane },
        rows.filter((c) => c.scope === lane).reduce((a, c) => a + c.n, 0),
      );
  }

  histogram(
    "spoolctl_job_queued_seconds",
    "Seconds from a job being due to its attempt's start, observed at each start, by lane.",
    counted("wait"),
    false,
  );
  histogram(
    "spoolctl_job_run_seconds",
    "Run time of each ended attempt, by lane and the attempt's outcome (succeeded, failed, timed_out, abandoned, canceled).",
    counted("run"),
    true,
  );

  family(
    "spoolctl_oldest_queued_job_age_seconds",
    "gauge",
    "Seconds the longest-waiting due queued job of the lane has been due (0: none).",
    "seconds",
  );
  for (const lane of lanes) {
    const due = snap.earliestDue.find((d) => d.queue === lane)?.next_run_at ?? null;
    sample("spoolctl_oldest_queued_job_age_seconds", { lane }, due === null ? 0 : Math.max(0, snap.at - due));
  }

  family(
    "spoolctl_workers",
    "gauge",
    "Workers in the registry, by host and state (live, stale, lease_expired, stopped, dead).",
  );
  const byWorker = new Map<string, { host: string; state: string; n: number }>();
  for (const w of snap.workers) {
    const key = `${w.host}\u0000${w.status}`;
    const row = byWorker.get(key) ?? { host: w.host, state: w.status, n: 0 };
    row.n++;
    byWorker.set(key, row);
  }
  for (const w of [...byWorker.values()].sort((a, b) => a.host.localeCompare(b.host) || a.state.localeCompare(b.state)))
    sample("spoolctl_workers", { host: w.host, state: w.state }, w.n);

  family("spoolctl_lane_paused", "gauge", "1 while the lane is paused fleet-wide, else 0.");
  for (const lane of lanes) sample("spoolctl_lane_paused", { lane }, snap.pausedLanes.includes(lane) ? 1 : 0);

  family(
    "spoolctl_schedule_slots_total",
    "counter",
    "Schedule slots decided, by schedule and outcome (fired, missed, skipped, manual).",
  );
  for (const c of counted("slots").sort((a, b) => a.scope.localeCompare(b.scope) || a.label.localeCompare(b.label)))
    sample("spoolctl_schedule_slots_total", { schedule: c.scope, outcome: c.label }, c.n);

  family("spoolctl_hook_jobs_finished_total", "counter", "Hook jobs that reached a terminal state, by outcome.");
  const hooks = counted("hook_finished");
  for (const outcome of OUTCOMES)
    sample(
      "spoolctl_hook_jobs_finished_total",
      { outcome },
      hooks.filter((c) => c.label === outcome).reduce((a, c) => a + c.n, 0),
    );

  family(
    "spoolctl_dead_jobs",
    "gauge",
    `Dead jobs now, by how their last attempt failed (the ${DEAD_GROUPS_SHOWN} largest groups, the rest as other).`,
  );
  const groups = new Map<string, number>();
  for (const k of snap.deadKinds) groups.set(groupOf(k), (groups.get(groupOf(k)) ?? 0) + k.n);
  const ranked = [...groups].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  for (const [group, n] of ranked.slice(0, DEAD_GROUPS_SHOWN)) sample("spoolctl_dead_jobs", { group }, n);
  if (ranked.length > DEAD_GROUPS_SHOWN)
    sample(
      "spoolctl_dead_jobs",
      { group: "other" },
      ranked.slice(DEAD_GROUPS_SHOWN).reduce((a, [, n]) => a + n, 0),
    );

  family("spoolctl_build_info", "gauge", "Always 1: the spoolctl version and the store's driver.");
  sample("spoolctl_build_info", { version: snap.version, driver: snap.driver }, 1);

  if (openmetrics) out.push("# EOF");
  return `${out.join("\n")}\n`;

  function histogram(name: string, help: string, rows: MetricCount[], byOutcome: boolean) {
    family(name, "histogram", help, "seconds");
    const keys = new Map<string, { lane: string; outcome?: string }>();
    for (const r of rows)
      keys.set(`${r.scope}\u0000${r.label}`, byOutcome ? { lane: r.scope, outcome: r.label } : { lane: r.scope });
    for (const [key, l] of [...keys].sort((a, b) => a[0].localeCompare(b[0]))) {
      const mine = rows.filter((r) => `${r.scope}\u0000${r.label}` === key);
      let cumulative = 0;
      [...DURATION_BUCKETS, Number.POSITIVE_INFINITY].forEach((le, i) => {
        cumulative += mine.filter((r) => r.bucket === i).reduce((a, r) => a + r.n, 0);
        sample(`${name}_bucket`, { ...l, le: num(le) }, cumulative);
      });
      sample(
        `${name}_sum`,
        l,
        mine.reduce((a, r) => a + r.sum, 0),
      );
      sample(`${name}_count`, l, cumulative);
    }
  }
}
