/**
 * The frame every page shares (docs/architecture.md "The web view"): the
 * navigation, the CSRF token the page's script sends with each write, the
 * live-update mode, and the small pieces rows are made of.
 */
import type { Store } from "../../store/store.ts";
import { type Html, html } from "../html.ts";

/**
 * A verb's data or one of its rows as a page reads it: the shapes are the
 * verbs' envelope schemas (src/describe/, checked by the contract tests),
 * read here without restating them.
 */
// biome-ignore lint/suspicious/noExplicitAny: see above
export type Row = any;

/** What a page renders from: the verbs' data, the queue for the screen-only reads, and the request. */
export interface PageContext {
  /** The `data` of verb `name`'s envelope for `params` (query keys as the API takes them); raises the envelope's error. */
  verb(name: string, params?: Record<string, string | string[] | undefined>): Promise<Row>;
  store: Store;
  url: URL;
  readOnly: boolean;
  csrf: string;
  /** The queue served, as the page header names it. */
  queueLabel: string;
}

/** A page: its title, its body, and how it follows changes (`replace`: redrawn; `bar`: "N new" bar; `none`). */
export interface Page {
  title: string;
  body: Html;
  live: "replace" | "bar" | "none";
}

const NAV: [string, string][] = [
  ["/", "Overview"],
  ["/jobs", "Jobs"],
  ["/triage", "Triage"],
  ["/batches", "Batches"],
  ["/lanes", "Lanes"],
  ["/schedules", "Schedules"],
  ["/hooks", "Hooks"],
  ["/workers", "Workers"],
];

/** The whole document of `page`, for a request of `path`. */
export function layout(page: Page, ctx: PageContext, path: string): string {
  const current = (href: string) => (href === "/" ? path === "/" : path === href || path.startsWith(`${href}/`));
  return `<!doctype html>${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · spoolctl</title>
<meta name="csrf-token" content="${ctx.csrf}">
<link rel="stylesheet" href="/assets/app.css">
<script src="/assets/app.js" defer></script>
</head>
<body data-live="${page.live}" data-read-only="${ctx.readOnly ? "true" : "false"}">
<a class="skip" href="#main">Skip to content</a>
<header>
<strong class="brand">spoolctl</strong>
<nav aria-label="Main"><ul>${NAV.map(
    ([href, label]) => html`<li><a href="${href}"${current(href) ? html` aria-current="page"` : ""}>${label}</a></li>`,
  )}</ul></nav>
<span class="queue" title="the queue served">${ctx.queueLabel}</span>
${ctx.readOnly ? html`<span class="badge ro">read-only</span>` : ""}
<span id="live-state" role="status" aria-live="polite"></span>
</header>
<div id="new-bar" hidden><button type="button" id="new-show"></button></div>
<main id="main" tabindex="-1">
<h1>${page.title}</h1>
${page.body}
</main>
<div id="toast" role="status" aria-live="polite"></div>
<dialog id="confirm" aria-labelledby="confirm-title">
<form method="dialog">
<h2 id="confirm-title">Confirm</h2>
<p id="confirm-text"></p>
<menu><button value="cancel" type="submit">Cancel</button> <button value="ok" type="submit" id="confirm-ok" class="danger">Confirm</button></menu>
</form>
</dialog>
</body>
</html>`}`;
}

/** A job state as a coloured badge (colour and word, never colour alone). */
export function stateBadge(state: string): Html {
  return html`<span class="state s-${state}">${state}</span>`;
}

/** A command line (argv) as one line of text, shell-quoted where needed. */
export function commandText(argv: readonly string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`)).join(" ");
}

/** An epoch-seconds time as ISO text (UTC, to the second), or an em dash. */
export function when(epochSeconds: number | null | undefined): Html {
  if (epochSeconds === null || epochSeconds === undefined) return html`—`;
  const iso = new Date(epochSeconds * 1000).toISOString().replace(/\.\d+Z$/, "Z");
  return html`<time datetime="${iso}">${iso.replace("T", " ").replace("Z", "")}</time>`;
}

/** A duration in seconds as short text (`850ms`, `3.2s`, `4m 10s`). */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "—";
  if (seconds < 1) return `${Math.round(seconds * 1000)}ms`;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const m = Math.floor(seconds / 60);
  return m < 60 ? `${m}m ${Math.round(seconds % 60)}s` : `${Math.floor(m / 60)}h ${m % 60}m`;
}

/**
 * A button that runs write verb `verb` with `params` through the API (the
 * page's script asks first with `confirm`; `preview` asks the verb's
 * `dry-run` for the count first; `confirmFlags` are added when the verb asks
 * for explicit confirmation, exit 2). Not drawn on a read-only view.
 */
export function actionButton(
  ctx: PageContext,
  label: string,
  verb: string,
  params: Record<string, string | string[]>,
  opts: { confirm?: string; preview?: boolean; confirmFlags?: string; danger?: boolean } = {},
): Html {
  if (ctx.readOnly) return html``;
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const one of Array.isArray(v) ? v : [v]) query.append(k, one);
  return html`<button type="button" class="action${opts.danger ? " danger" : ""}" data-verb="${verb}" data-params="${query.toString()}"${
    opts.confirm ? html` data-confirm="${opts.confirm}"` : ""
  }${opts.preview ? html` data-preview="true"` : ""}${opts.confirmFlags ? html` data-confirm-flags="${opts.confirmFlags}"` : ""}>${label}</button>`;
}

/** A table with a caption (for screen readers), `head` cells and `rows`; `empty` when there are none. */
export function table(caption: string, head: string[], rows: Html[], empty = "none"): Html {
  if (rows.length === 0) return html`<p class="empty">${caption}: ${empty}</p>`;
  return html`<table><caption>${caption}</caption><thead><tr>${head.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead><tbody>${rows}</tbody></table>`;
}
