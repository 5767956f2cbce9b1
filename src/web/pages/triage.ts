/**
 * `/triage` and the batch pages (docs/architecture.md "The web view"): dead
 * jobs by kept failure group, each group retried or deleted whole with the
 * bulk verbs' `--all --failure-group`; a batch's
 * verdict, counts and dependency graph.
 */
import { keptFailureGroups } from "../../store/verbs/dead-groups.ts";
import { needGraph } from "../../store/verbs/views.ts";
import { type Html, html } from "../html.ts";
import { graphSvg } from "./graph.ts";
import { actionButton, commandText, type Page, type PageContext, type Row, table, when } from "./layout.ts";

/** Failure groups the triage page shows in full; the rest are counted (the page stays small on any queue). */
const GROUPS_SHOWN = 100;

/** The state tabs and the totals line. */
function triageHead(state: string, jobs: number, groups: number): Html {
  return html`<p><a href="/triage"${state === "dead" ? html` aria-current="true"` : ""}>Dead</a> · <a href="/triage?state=canceled"${state === "canceled" ? html` aria-current="true"` : ""}>Canceled</a> — ${jobs} jobs in ${groups} groups, largest first.</p>`;
}

/**
 * The triage page, the largest failure group first. Dead jobs come from the
 * kept counts (docs/architecture.md "Kept dead counts"), each group's actions
 * naming the group by its key (`--failure-group`), never listing its jobs, so
 * the page is a few kilobytes at any size; canceled jobs are grouped as
 * `list --state canceled --group` groups them.
 */
export async function triagePage(ctx: PageContext): Promise<Page> {
  if (ctx.url.searchParams.get("state") === "canceled") return canceledPage(ctx);
  const kept = await keptFailureGroups(ctx.store, GROUPS_SHOWN);
  const groups = kept.groups.map((g, i) => {
    const select = { all: "true", state: "dead", "failure-group": g.key };
    return html`<article class="group" aria-labelledby="g-${i}" data-group="${g.key}">
<h2 id="g-${i}"><span class="count">${g.count}</span> ${g.text}</h2>
<p>Lanes: ${g.lanes.join(", ")} · first ${when(g.first_seen)} · last ${when(g.last_seen)}</p>
<p>Example: <a href="/jobs/${g.example.job_id}">job ${g.example.job_id}</a> <code>${commandText(g.example.argv)}</code></p>${g.example.stderr_line ? html`<pre class="sample">${g.example.stderr_line}</pre>` : ""}
<p class="ids"><a href="/jobs?state=dead&amp;failure-group=${encodeURIComponent(g.key)}">The group's jobs</a></p>
<div class="actions">${actionButton(ctx, `Retry these ${g.count}`, "retry", select, { preview: true, confirm: "Retry {jobs} of this group?" })}
${actionButton(ctx, `Delete these ${g.count}`, "delete", { ...select, yes: "true" }, { preview: true, confirm: "Delete {jobs} of this group with their history and output, for good?", danger: true })}</div>
</article>`;
  });
  const more = kept.group_count - kept.groups.length;
  const body = html`${triageHead("dead", kept.job_count, kept.group_count)}
${groups.length ? groups : html`<p class="empty">No dead jobs.</p>`}${more > 0 ? html`<p>And ${more} smaller groups (<code>spoolctl triage</code> walks them all).</p>` : ""}`;
  return { title: "Triage", body, live: "none" };
}

/** The canceled tab: the groups of `list --state canceled --group`, acted on by id. */
async function canceledPage(ctx: PageContext): Promise<Page> {
  const grouped = await ctx.verb("list", { state: "canceled", group: "true" });
  const groups = (grouped.groups as Row[]).map((g, i) => {
    const ids = (g.job_ids as number[]).map(String);
    return html`<article class="group" aria-labelledby="g-${i}">
<h2 id="g-${i}"><span class="count">${g.count}</span> ${g.text}</h2>
<p>Lanes: ${(g.lanes as string[]).join(", ")} · first ${when(g.first_seen)} · last ${when(g.last_seen)}</p>
${g.example ? html`<p>Example: <a href="/jobs/${g.example.job_id}">job ${g.example.job_id}</a> <code>${commandText(g.example.argv)}</code></p>${g.example.stderr_line ? html`<pre class="sample">${g.example.stderr_line}</pre>` : ""}` : ""}
<p class="ids">Jobs: ${(g.job_ids as number[]).slice(0, 50).map((id) => html`<a href="/jobs/${id}">${id}</a> `)}${g.job_ids.length > 50 ? `and ${g.job_ids.length - 50} more` : ""}</p>
<div class="actions">${actionButton(ctx, `Retry these ${g.count}`, "retry", { id: ids }, { confirm: `Retry the ${g.count} jobs of this group?` })}
${actionButton(ctx, `Delete these ${g.count}`, "delete", { id: ids, yes: "true" }, { preview: true, confirm: "Delete {jobs} of this group with their history and output, for good?", danger: true })}</div>
</article>`;
  });
  const body = html`${triageHead("canceled", grouped.job_count, grouped.count)}
${groups.length ? groups : html`<p class="empty">No canceled jobs.</p>`}`;
  return { title: "Triage", body, live: "none" };
}

/** The list of batches. */
export async function batchesPage(ctx: PageContext): Promise<Page> {
  const list = await ctx.verb("batch-list");
  const rows = (list.batches as Row[]).map(
    (b) =>
      html`<tr><td><a href="/batches/${encodeURIComponent(b.name)}">${b.name}</a></td><td>${verdict(b)}</td><td>${b.total}</td><td>${b.counts.done}</td><td>${b.counts.dead}</td><td>${b.counts.canceled}</td><td>${b.counts.queued + b.counts.running}</td><td>${when(b.created_at)}</td></tr>`,
  );
  return {
    title: "Batches",
    body: table("Batches", ["batch", "verdict", "jobs", "done", "dead", "canceled", "to go", "created"], rows),
    live: "replace",
  };
}

/** A batch's verdict in words. */
function verdict(b: Row): string {
  if (b.failed) return "failed";
  if (b.settled) return "succeeded";
  return b.sealed ? "running" : "open";
}

/** One batch: its verdict and counts, and its jobs as a graph coloured by state. */
export async function batchPage(ctx: PageContext, name: string): Promise<Page> {
  const [batch, jobs] = await Promise.all([
    ctx.verb("batch-show", { name }),
    ctx.verb("list", { batch: name, limit: "300" }),
  ]);
  const graph = await needGraph(
    ctx.store,
    (jobs.jobs as Row[]).map((j) => j.id),
    1,
    300,
  );
  const c = batch.counts;
  const body = html`<dl class="facts"><dt>Verdict</dt><dd class="verdict v-${verdict(batch)}">${verdict(batch)}</dd>
<dt>Jobs</dt><dd>${batch.total}: ${c.done} done, ${c.dead} dead, ${c.canceled} canceled, ${c.running} running, ${c.queued} queued</dd>
<dt>Fail-fast</dt><dd>${batch.fail_fast ?? "off"}</dd><dt>Sealed</dt><dd>${batch.sealed ? when(batch.sealed_at) : "no"}</dd></dl>
${actionButton(ctx, "Seal", "batch-seal", { name }, { confirm: `Seal batch ${name}? No job can join it afterwards.` })}
<section aria-labelledby="h-graph"><h2 id="h-graph">Graph</h2>${graphSvg(graph)}</section>
<p><a href="/jobs?batch=${encodeURIComponent(name)}">The batch's jobs as a list</a></p>`;
  return { title: `Batch ${name}`, body, live: "replace" };
}
