/**
 * The operator's pages (docs/architecture.md "The web view"): lanes (pause,
 * timed pause, resume, slots), schedules (pause, resume, run now), hooks and
 * workers, each from its verb's data and acting through the write verbs.
 */
import { html } from "../html.ts";
import { actionButton, commandText, type Page, type PageContext, type Row, table, when } from "./layout.ts";

/** The lanes page. */
export async function lanesPage(ctx: PageContext): Promise<Page> {
  const data = await ctx.verb("lane-list");
  const rows = (data.lanes as Row[]).map((l) => {
    const pause = ctx.readOnly
      ? ""
      : html`<form class="verb-form" data-verb="pause" data-params="lane=${encodeURIComponent(l.queue)}"><label>Reason <input name="reason" size="12"></label> <label>For <input name="for" size="5" placeholder="30m"></label> <button type="submit">Pause</button></form>`;
    return html`<tr><th scope="row"><a href="/jobs?queue=${encodeURIComponent(l.queue)}">${l.queue}</a></th><td>${l.queued}</td><td>${l.running}${l.slots === null ? "" : ` / ${l.slots}`}</td><td>${l.workers}</td><td>${l.paused ? html`paused${l.pause_reason ? html`: ${l.pause_reason}` : ""}${l.paused_until ? html` until ${when(l.paused_until)}` : ""}` : "running"}</td><td>${l.paused ? actionButton(ctx, "Resume", "resume", { lane: l.queue }) : pause}</td></tr>`;
  });
  return {
    title: "Lanes",
    body: table("Lanes", ["lane", "queued", "running / slots", "workers", "state", "action"], rows),
    live: "replace",
  };
}

/** The schedules page. */
export async function schedulesPage(ctx: PageContext): Promise<Page> {
  const data = await ctx.verb("schedule-list");
  const rows = (data.schedules as Row[]).map((s) => {
    const name = s.name as string;
    return html`<tr><th scope="row">${name}</th><td>${s.rule}</td><td>${s.queue}</td><td><code>${commandText(s.argv)}</code></td><td>${s.paused ? "paused" : s.next_fire}</td><td>${s.last_job_id ? html`<a href="/jobs/${s.last_job_id}">job ${s.last_job_id}</a> ${s.last_job_state ?? ""}` : "—"}</td><td>${s.catch_up} / ${s.overlap}</td><td>${
      s.paused
        ? actionButton(ctx, "Resume", "schedule-resume", { name })
        : actionButton(ctx, "Pause", "schedule-pause", { name })
    } ${actionButton(ctx, "Run now", "schedule-run-now", { name }, { confirm: `Add schedule ${name}'s job now?` })}</td></tr>`;
  });
  return {
    title: "Schedules",
    body: table(
      "Schedules",
      ["name", "rule", "lane", "command", "next slot", "last job", "catch-up / overlap", "action"],
      rows,
    ),
    live: "replace",
  };
}

/** The hooks page. */
export async function hooksPage(ctx: PageContext): Promise<Page> {
  const data = await ctx.verb("hook-list");
  const rows = (data.hooks as Row[]).map(
    (h) =>
      html`<tr><th scope="row">${h.name}</th><td>${h.on}</td><td>${h.queue ?? "any"}</td><td>${h.tag ?? "any"}</td><td>${h.run_queue}</td><td><code>${commandText(h.argv)}</code></td><td>${actionButton(ctx, "Remove", "hook-rm", { name: h.name }, { confirm: `Remove hook ${h.name}?`, danger: true })}</td></tr>`,
  );
  return {
    title: "Hooks",
    body: table("Hooks", ["name", "on", "lane", "tag", "runs in lane", "command", "action"], rows),
    live: "replace",
  };
}

/** The workers page: every worker recorded, live ones first as `workers --all` orders them. */
export async function workersPage(ctx: PageContext): Promise<Page> {
  const data = await ctx.verb("workers", { all: "true" });
  const rows = (data.workers as Row[]).map(
    (w) =>
      html`<tr><th scope="row">${w.worker_id}</th><td>${w.host}</td><td>${w.pid}</td><td>${w.queue}</td><td><span class="wstate w-${w.status}">${w.status}</span>${w.stop_requested ? " (stop asked)" : ""}</td><td>${(w.running_jobs as Row[]).map((j) => html`<a href="/jobs/${j.job_id ?? j.id ?? j}">${j.job_id ?? j.id ?? j}</a> `)}</td><td>${when(w.started_at)}</td><td>${when(w.heartbeat_at)}</td><td>${w.status === "alive" || w.status === "busy" || w.status === "idle" ? actionButton(ctx, "Stop", "stop", { "worker-id": w.worker_id }, { confirm: `Ask worker ${w.worker_id} to stop after its running jobs?` }) : ""}</td></tr>`,
  );
  return {
    title: "Workers",
    body: table(
      "Workers",
      ["worker", "host", "pid", "lanes", "state", "running jobs", "started", "last heartbeat", "action"],
      rows,
    ),
    live: "replace",
  };
}
