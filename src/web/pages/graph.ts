/**
 * A dependency graph drawn as SVG (docs/architecture.md "The web view"):
 * needs to the left, dependents to the right, each job a box coloured and
 * labelled by its state that links to its page.
 */
import type { NeedGraph } from "../../store/verbs/views.ts";
import { type Html, html } from "../html.ts";
import { commandText } from "./layout.ts";

const BOX_W = 170;
const BOX_H = 44;
const GAP_X = 60;
const GAP_Y = 16;

/** Each job's column: 0 for a job with no need in the graph, else one more than its deepest need's. */
function columns(graph: NeedGraph): Map<number, number> {
  const needs = new Map<number, number[]>();
  for (const e of graph.edges) needs.set(e.job_id, [...(needs.get(e.job_id) ?? []), e.need_id]);
  const col = new Map<number, number>();
  const visiting = new Set<number>();
  const depth = (id: number): number => {
    const known = col.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) return 0; // a cycle cannot be added, but never loop on one
    visiting.add(id);
    const d = Math.max(-1, ...(needs.get(id) ?? []).map(depth)) + 1;
    visiting.delete(id);
    col.set(id, d);
    return d;
  };
  for (const job of graph.jobs) depth(job.id);
  return col;
}

/** The SVG of `graph`; `focus` (a job id) is drawn outlined. */
export function graphSvg(graph: NeedGraph, focus?: number): Html {
  if (graph.jobs.length === 0) return html`<p class="empty">No dependencies.</p>`;
  const col = columns(graph);
  const rows = new Map<number, number>();
  const place = new Map<number, { x: number; y: number }>();
  for (const job of [...graph.jobs].sort((a, b) => a.id - b.id)) {
    const c = col.get(job.id) ?? 0;
    const r = rows.get(c) ?? 0;
    rows.set(c, r + 1);
    place.set(job.id, { x: 8 + c * (BOX_W + GAP_X), y: 8 + r * (BOX_H + GAP_Y) });
  }
  const width = 16 + (Math.max(...col.values()) + 1) * (BOX_W + GAP_X) - GAP_X;
  const height = 16 + Math.max(...rows.values()) * (BOX_H + GAP_Y) - GAP_Y;
  const edges = graph.edges.map((e) => {
    const from = place.get(e.need_id);
    const to = place.get(e.job_id);
    if (!from || !to) return "";
    const x1 = from.x + BOX_W;
    const y1 = from.y + BOX_H / 2;
    const x2 = to.x;
    const y2 = to.y + BOX_H / 2;
    return html`<path class="edge" d="M${x1},${y1} C${x1 + GAP_X / 2},${y1} ${x2 - GAP_X / 2},${y2} ${x2},${y2}" marker-end="url(#arrow)"/>`;
  });
  const nodes = graph.jobs.map((job) => {
    const p = place.get(job.id)!;
    const label = job.name ?? job.idempotency_key ?? commandText(job.argv);
    return html`<a href="/jobs/${job.id}" class="node" data-id="${job.id}" data-state="${job.state}"><g><rect class="n-${job.state}${job.id === focus ? " focus" : ""}" x="${p.x}" y="${p.y}" width="${BOX_W}" height="${BOX_H}" rx="6"/><text x="${p.x + 8}" y="${p.y + 18}">${`#${job.id} ${job.state}`}</text><text class="sub" x="${p.x + 8}" y="${p.y + 34}">${label.length > 24 ? `${label.slice(0, 23)}…` : label}</text><title>job ${job.id} (${job.state}): ${commandText(job.argv)}</title></g></a>`;
  });
  return html`<figure class="graph"><svg viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="dependency graph of ${graph.jobs.length} jobs">
<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker></defs>
${edges}${nodes}</svg>${graph.truncated ? html`<figcaption>Only the nearest ${graph.jobs.length} jobs are drawn.</figcaption>` : ""}</figure>`;
}
