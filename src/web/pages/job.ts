/**
 * `/jobs/ID`: one job (docs/architecture.md "The web view"): its actions with
 * the CLI's guards, its attempts newest first, the tail of its latest
 * attempt's output (earlier windows on demand, the running one live), its
 * ledger rows and its needs up and down as a graph.
 */
import type { Attempt } from "../../model/job.ts";
import { needGraph } from "../../store/verbs/views.ts";
import { type Html, html } from "../html.ts";
import { windowBefore } from "../tail.ts";
import { graphSvg } from "./graph.ts";
import {
  actionButton,
  commandText,
  duration,
  type Page,
  type PageContext,
  type Row,
  stateBadge,
  table,
  when,
} from "./layout.ts";

/** Bytes of output a page shows at first, and per "load earlier". */
export const OUTPUT_WINDOW = 64 * 1024;

/** The pane of one stream of `attempt`: its last window, "load earlier" when there is more, live while it runs. */
async function streamPane(ctx: PageContext, attempt: Attempt, stream: "stdout" | "stderr"): Promise<Html> {
  const w = await windowBefore(ctx.store, attempt, stream, null, OUTPUT_WINDOW);
  const running = attempt.state === "running";
  return html`<section class="stream" aria-labelledby="h-${stream}"><h3 id="h-${stream}">${stream} <small>${w.size} bytes${running ? ", live" : ""}</small></h3>
${w.offset > 0 ? html`<button type="button" class="load-earlier" data-job="${attempt.job_id}" data-attempt="${attempt.attempt_no}" data-stream="${stream}" data-before="${w.offset}">Load earlier output (${w.offset} bytes before)</button>` : ""}
<pre class="output" id="out-${stream}" tabindex="0" aria-label="${stream} of attempt ${attempt.attempt_no}"${running ? html` data-tail="true" data-job="${attempt.job_id}" data-attempt="${attempt.attempt_no}" data-stream="${stream}" data-from="${w.end}"` : ""}>${w.text}</pre></section>`;
}

/** The job page for job reference `ref` (id, key, or name). */
export async function jobPage(ctx: PageContext, ref: string): Promise<Page> {
  const detail = await ctx.verb("show", { id: ref });
  const job = detail.job;
  const attempts = [...(detail.attempts as Attempt[])].reverse();
  const id = String(job.id);
  const actions = html`<div class="actions">
${actionButton(ctx, "Retry", "retry", { id }, { confirmFlags: "force=true" })}
${actionButton(ctx, "Rerun", "rerun", { id }, { confirm: `Run job ${id}'s command again as a new job?` })}
${actionButton(ctx, "Cancel", "cancel", { id }, { confirm: `Cancel job ${id}?`, confirmFlags: "running=true&yes=true" })}
${job.state === "queued" ? (job.held ? actionButton(ctx, "Release", "release", { id }) : actionButton(ctx, "Hold", "hold", { id })) : ""}
${job.state === "queued" ? actionButton(ctx, "Run first", "priority", { id, value: String(Math.min(2147483647, job.priority + 1000)) }, { confirm: `Raise job ${id}'s priority by 1000?` }) : ""}
${actionButton(ctx, "Delete", "delete", { id, yes: "true" }, { preview: true, confirm: `Delete job ${id} with its history and output, for good?`, danger: true })}
</div>`;
  const facts = html`<dl class="facts">
<dt>State</dt><dd>${stateBadge(job.held ? "held" : job.state)}${job.held ? " (queued, kept from starting until released)" : ""}${job.cancel_requested ? " (cancel requested)" : ""}</dd>
${job.name ? html`<dt>Name</dt><dd>${job.name}</dd>` : ""}
<dt>Command</dt><dd><code>${commandText(job.argv)}</code></dd>
<dt>Priority</dt><dd>${job.priority}</dd>
<dt>Lane</dt><dd><a href="/jobs?queue=${encodeURIComponent(job.queue)}">${job.queue}</a></dd>
${job.idempotency_key ? html`<dt>Key</dt><dd>${job.idempotency_key}</dd>` : ""}
${job.batch ? html`<dt>Batch</dt><dd><a href="/batches/${encodeURIComponent(job.batch)}">${job.batch}</a></dd>` : ""}
<dt>Tags</dt><dd>${Object.entries(job.tags ?? {}).map(([k, v]) => html`<span class="tag">${k}=${String(v)}</span> `)}</dd>
<dt>Attempts</dt><dd>${job.attempts_total} (${job.attempts} failures charged, ${job.max_retries} retries allowed; crashes ${job.crashes})</dd>
<dt>Last error</dt><dd class="err">${job.last_error ?? "—"}</dd>
<dt>Added</dt><dd>${when(job.created_at)}</dd><dt>Finished</dt><dd>${when(job.finished_at)}</dd>
${job.cwd ? html`<dt>Folder</dt><dd><code>${job.cwd}</code></dd>` : ""}
</dl>`;
  const attemptRows = attempts.map(
    (a: Row) =>
      html`<tr><td>${a.attempt_no}</td><td>${stateBadge(a.state)}</td><td>${a.exit_code ?? "—"}</td><td>${a.signal ?? "—"}</td><td>${duration(a.finished_at && a.started_at ? a.finished_at - a.started_at : null)}</td><td>${a.host ?? "—"}</td><td>${a.worker_id}</td><td class="err">${a.error ?? ""}</td><td>${when(a.started_at)}</td></tr>`,
  );
  const latest = attempts[0];
  const output = latest
    ? html`<section aria-labelledby="h-output"><h2 id="h-output">Output of attempt ${latest.attempt_no}</h2>${await streamPane(ctx, latest, "stdout")}${await streamPane(ctx, latest, "stderr")}</section>`
    : html`<p class="empty">Not run yet.</p>`;
  const graph = await needGraph(ctx.store, [job.id], 3, 60);
  const events = (detail.events as Row[]).map(
    (e) =>
      html`<tr><td>${when(e.at)}</td><td>${e.event}</td><td>${e.worker_id ?? ""}</td><td class="detail">${e.detail ?? ""}</td></tr>`,
  );
  const body = html`${actions}${facts}
<section aria-labelledby="h-attempts"><h2 id="h-attempts">Attempts</h2>${table("Attempts, newest first", ["#", "state", "exit", "signal", "duration", "host", "worker", "error", "started"], attemptRows, "none yet")}</section>
${output}
<section aria-labelledby="h-graph"><h2 id="h-graph">Needs and dependents</h2>${graphSvg(graph, job.id)}</section>
<section aria-labelledby="h-events"><h2 id="h-events">Events</h2>${table("Ledger rows, oldest first", ["at", "event", "worker", "detail"], events)}</section>`;
  return { title: `Job ${job.id}`, body, live: "replace" };
}
