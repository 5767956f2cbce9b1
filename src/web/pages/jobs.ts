/**
 * `/jobs`: the job list (docs/architecture.md "The web view"): filters by
 * state, lane, tag, batch and text (command line, key or last error, as
 * `list --search`),
 * newest first on `list`'s keyset cursor, and actions on every job that
 * matches, with the count previewed before the confirmation.
 */
import { type Html, html } from "../html.ts";
import { actionButton, commandText, type Page, type PageContext, type Row, stateBadge, table, when } from "./layout.ts";

/** The filters of the page, as `list` takes them. */
const FILTERS = ["state", "queue", "tag", "batch", "search", "failure-group"] as const;

/** The page's filters from its URL, as `list` flags. */
function listFilters(url: URL): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of FILTERS) {
    const v = url.searchParams.get(key)?.trim();
    if (v) out[key] = v;
  }
  return out;
}

/** One row of the list. */
function jobRow(job: Row): Html {
  const cmd = commandText(job.argv);
  return html`<tr data-id="${job.id}"><td><a href="/jobs/${job.id}">${job.id}</a></td><td>${stateBadge(job.held ? "held" : job.state)}</td><td>${job.name ?? ""}</td><td>${job.queue}</td><td class="cmd" title="${cmd}">${cmd}</td><td>${job.idempotency_key ?? ""}</td><td>${Object.entries(job.tags ?? {}).map(([k, v]) => html`<span class="tag">${k}=${String(v)}</span> `)}</td><td>${job.attempts_total}</td><td class="err">${job.last_error ?? ""}</td><td>${when(job.finished_at ?? job.created_at)}</td></tr>`;
}

/** The jobs page. */
export async function jobsPage(ctx: PageContext): Promise<Page> {
  const filters = listFilters(ctx.url);
  const cursor = ctx.url.searchParams.get("cursor") ?? undefined;
  const page = await ctx.verb("list", { ...filters, limit: "50", cursor });
  const stateValue = ctx.url.searchParams.get("state") ?? "";
  const field = (name: string, label: string, hint: string) =>
    html`<label>${label} <input name="${name}" value="${ctx.url.searchParams.get(name) ?? ""}" placeholder="${hint}"></label>`;
  const form = html`<form class="filters" method="get" action="/jobs" role="search">
<label>State <select name="state">${["", "queued", "scheduled", "held", "running", "done", "dead", "canceled"].map(
    (s) => html`<option value="${s}"${s === stateValue ? html` selected` : ""}>${s || "any"}</option>`,
  )}</select></label>
${field("queue", "Lane", "default")} ${field("tag", "Tag", "k=v")} ${field("batch", "Batch", "name")} ${field("search", "Text", "command, key or error…")}
<button type="submit">Filter</button> <a href="/jobs">Clear</a></form>`;
  const jobs = page.jobs as Row[];
  const pagination = page.pagination;
  const selection: Record<string, string> = { ...filters, all: "true" };
  const unstated = Object.fromEntries(Object.entries(selection).filter(([k]) => k !== "state"));
  // Each verb's own guard decides what of the selection it takes (retry: ended jobs; cancel: queued
  // ones, so the state filter is not its to take; delete: ended ones unless the state says queued).
  const bulk = html`<div class="bulk" aria-label="Act on every matching job">
${actionButton(ctx, "Retry all matching", "retry", selection, { preview: true, confirm: "Retry {jobs}?" })}
${actionButton(ctx, "Cancel all matching", "cancel", unstated, { preview: true, confirm: "Cancel {jobs}?", danger: true })}
${actionButton(ctx, "Hold all matching", "hold", unstated, { preview: true, confirm: "Hold {jobs} (kept queued, not started)?" })}
${actionButton(ctx, "Release all matching", "release", unstated, { preview: true, confirm: "Release {jobs}?" })}
${actionButton(ctx, "Delete all matching", "delete", { ...selection, yes: "true" }, { preview: true, confirm: "Delete {jobs} with their history and output, for good?", danger: true })}
</div>`;
  // A text search reads a window of ids a page: say how far it looked.
  const searched =
    pagination?.searched_to !== undefined && pagination.truncated
      ? html`<p class="note">Searched jobs from id ${pagination.searched_to} up; older ones on the next page.</p>`
      : "";
  const next = pagination?.truncated
    ? html`<a class="next" rel="next" href="/jobs?${new URLSearchParams({ ...Object.fromEntries(FILTERS.map((k) => [k, ctx.url.searchParams.get(k) ?? ""]).filter(([, v]) => v)), cursor: String(pagination.cursor) }).toString()}">Older jobs →</a>`
    : "";
  const body = html`${form}${bulk}
<div id="job-list" data-first-id="${jobs[0]?.id ?? 0}" data-filters="${new URLSearchParams(filters).toString()}">
${table("Jobs, newest first", ["id", "state", "name", "lane", "command", "key", "tags", "attempts", "last error", "time"], jobs.map(jobRow), "no job matches")}
</div>${searched}${next}`;
  return { title: "Jobs", body, live: cursor ? "none" : "bar" };
}
