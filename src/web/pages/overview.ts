/**
 * `/`: the queue at a glance (docs/architecture.md "The web view"): counts
 * by state and lane, workers, paused lanes, schedules with their next slot,
 * and the finished jobs and failures of the last hour and day.
 */
import { finishedTimeline, type Timeline } from "../../store/verbs/views.ts";
import { type Html, html } from "../html.ts";
import { type Page, type PageContext, type Row, stateBadge, table, when } from "./layout.ts";

const STATES = ["queued", "running", "done", "dead", "canceled"] as const;

/** A stacked bar chart of `timeline` as SVG, with its totals in words (the chart is not the only carrier). */
function timelineChart(title: string, timeline: Timeline): Html {
  const width = 600;
  const height = 120;
  const n = timeline.buckets.length;
  const max = Math.max(1, ...timeline.buckets.map((b) => b.done + b.dead + b.canceled));
  const barWidth = width / n;
  const totals = { done: 0, dead: 0, canceled: 0 };
  const bars = timeline.buckets.map((b, i) => {
    let y = height;
    const parts: Html[] = [];
    for (const state of ["done", "dead", "canceled"] as const) {
      totals[state] += b[state];
      if (b[state] === 0) continue;
      const h = (b[state] / max) * (height - 4);
      y -= h;
      parts.push(
        html`<rect class="bar-${state}" x="${(i * barWidth + 0.5).toFixed(1)}" y="${y.toFixed(1)}" width="${Math.max(1, barWidth - 1).toFixed(1)}" height="${h.toFixed(1)}"><title>${new Date(b.start * 1000).toISOString().slice(11, 16)} UTC: ${b.done} done, ${b.dead} dead, ${b.canceled} canceled</title></rect>`,
      );
    }
    return parts;
  });
  return html`<figure class="chart"><figcaption>${title}: ${totals.done} done, ${totals.dead} dead, ${totals.canceled} canceled</figcaption>
<svg viewBox="0 0 ${width} ${height}" role="img" aria-label="${title}: ${totals.done} done, ${totals.dead} dead, ${totals.canceled} canceled" preserveAspectRatio="none">${bars}</svg></figure>`;
}

/** The overview page. */
export async function overviewPage(ctx: PageContext): Promise<Page> {
  const [status, workers, schedules, hour, day] = await Promise.all([
    ctx.verb("status"),
    ctx.verb("workers"),
    ctx.verb("schedule-list"),
    finishedTimeline(ctx.store, 3600, 60),
    finishedTimeline(ctx.store, 86400, 48),
  ]);
  const counts = html`<ul class="counts">${STATES.map(
    (s) =>
      html`<li><a href="/jobs?state=${s}">${stateBadge(s)} <span class="n" data-count="${s}">${status.counts[s] ?? 0}</span></a></li>`,
  )}<li><a href="/jobs?state=scheduled"><span class="state s-scheduled">scheduled</span> <span class="n">${status.scheduled}</span></a></li><li><a href="/jobs?state=held"><span class="state s-held">held</span> <span class="n">${status.held}</span></a></li></ul>`;
  const lanes = Object.entries(status.queues as Record<string, Record<string, number>>).map(
    ([lane, c]) =>
      html`<tr><th scope="row"><a href="/jobs?queue=${encodeURIComponent(lane)}">${lane}</a></th>${STATES.map((s) => html`<td>${c[s] ?? 0}</td>`)}</tr>`,
  );
  const paused = (status.paused_lanes as Row[]).map(
    (p) =>
      html`<tr><th scope="row">${p.queue}</th><td>${p.reason ?? "—"}</td><td>${p.paused_until ? when(p.paused_until) : "until resumed"}</td></tr>`,
  );
  const workerRows = (workers.workers as Row[]).map(
    (w) =>
      html`<tr><td>${w.worker_id}</td><td>${w.host}</td><td>${w.queue}</td><td><span class="wstate w-${w.status}">${w.status}</span></td><td>${w.running_jobs.length}</td><td>${when(w.heartbeat_at)}</td></tr>`,
  );
  const scheduleRows = (schedules.schedules as Row[]).map(
    (s) =>
      html`<tr><td>${s.name}</td><td>${s.rule}</td><td>${s.queue}</td><td>${s.paused ? "paused" : s.next_fire}</td></tr>`,
  );
  const disks = (status.full_disks ?? []) as Row[];
  const body = html`${counts}
${disks.length ? html`<p class="alert" role="alert">Full disk: ${disks.map((d) => JSON.stringify(d))}</p>` : ""}
${status.live_workers === 0 ? html`<p class="alert">No live worker: queued jobs wait until one runs (<code>spoolctl work</code>).</p>` : ""}
<section aria-labelledby="h-charts"><h2 id="h-charts">Finished jobs</h2>
${timelineChart("Last hour, per minute", hour)}
${timelineChart("Last day, per 30 minutes", day)}
<p class="legend"><span class="key bar-done"></span> done <span class="key bar-dead"></span> dead <span class="key bar-canceled"></span> canceled</p></section>
<section aria-labelledby="h-lanes"><h2 id="h-lanes">Lanes</h2>${table("Jobs by lane", ["lane", ...STATES], lanes)}
${table("Paused lanes", ["lane", "reason", "until"], paused, "none paused")}</section>
<section aria-labelledby="h-workers"><h2 id="h-workers">Workers</h2>${table("Workers", ["worker", "host", "lanes", "state", "running", "last heartbeat"], workerRows, "no worker has run recently")}</section>
<section aria-labelledby="h-sched"><h2 id="h-sched">Schedules</h2>${table("Schedules", ["name", "rule", "lane", "next slot"], scheduleRows)}</section>`;
  return { title: "Overview", body, live: "replace" };
}
