/**
 * Markdown rendering of a report (`report --markdown`): a summary suitable for a CI step
 * summary (`$GITHUB_STEP_SUMMARY`): one headline, counts per lane when there are
 * several, a table of jobs (failures first) and the failures' output tails in
 * collapsible blocks. Cell text is escaped so that a command cannot break the
 * table or inject HTML; the size is bounded (GitHub caps a summary at 1 MiB).
 */
import { type CaseResult, caseLabel, type ReportCase, type ReportData, type ReportTotals } from "../ops/report.ts";
import { xmlSafe } from "./junit.ts";
import { escapeControl, formatArgv, humanDuration, iso } from "./text.ts";

/** Rows of the job table at most. */
const MAX_ROWS = 500;
/** Failure blocks with output at most. */
const MAX_DETAILS = 50;

const LABEL: Record<CaseResult, string> = {
  passed: "✅ passed",
  flaky: "⚠️ flaky",
  failed: "❌ failed",
  skipped: "⏭️ skipped",
  pending: "⏳ not finished",
};
const ORDER: Record<CaseResult, number> = { failed: 0, pending: 1, flaky: 2, skipped: 3, passed: 4 };

/** Escapes text for a table cell or a line of prose: `|`, HTML and markdown punctuation. */
function mdText(text: string): string {
  return escapeControl(text)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/([\\`*_[\]|#~])/g, "\\$1");
}

/** Escapes text inside raw HTML (a `<summary>`): markdown is not parsed there. */
function htmlText(text: string): string {
  return escapeControl(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** An inline code span that holds any text (fence longer than any backtick run inside; pipes escaped for tables). */
function mdCode(text: string): string {
  const body = escapeControl(text).replace(/\|/g, "\\|");
  const longest = Math.max(0, ...(body.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  const pad = body.startsWith("`") || body.endsWith("`") || body === "" ? " " : "";
  return `${fence}${pad}${body}${pad}${fence}`;
}

/** A fenced code block that holds any text. */
function mdBlock(text: string): string {
  const clean = xmlSafe(text);
  const longest = Math.max(2, ...(clean.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  return `${fence}text\n${clean}\n${fence}`;
}

function headline(t: ReportTotals): string {
  const parts = [
    `**${t.jobs} job${t.jobs === 1 ? "" : "s"}**`,
    `${LABEL.passed} ${t.passed}`,
    `${LABEL.failed} ${t.failed}`,
    `${LABEL.skipped} ${t.skipped}`,
  ];
  if (t.flaky) parts.push(`${LABEL.flaky} ${t.flaky}`);
  if (t.pending) parts.push(`${LABEL.pending} ${t.pending}`);
  parts.push(`⏱️ ${humanDuration(t.time_seconds)}`);
  return parts.join(" · ");
}

function jobRow(c: ReportCase): string {
  const label = caseLabel(c);
  const cells = [
    // The name (or key) a person gave the job, after its id (docs/architecture.md "Job names").
    label === null ? String(c.id) : `${c.id} ${mdText(label)}`,
    mdText(c.queue),
    LABEL[c.result],
    String(c.attempts_total),
    humanDuration(c.time_seconds),
    mdCode(formatArgv(c.argv)),
    c.message ? mdText(c.message) : "",
  ];
  return `| ${cells.join(" | ")} |`;
}

function failureDetail(c: ReportCase): string {
  const label = caseLabel(c);
  const lines = [
    `<details><summary>job ${c.id}${label === null ? "" : ` ${htmlText(label)}`}: ${htmlText(c.message ?? c.state)}</summary>`,
    "",
  ];
  if (c.stderr_tail) lines.push("stderr (tail):", "", mdBlock(c.stderr_tail), "");
  if (c.stdout_tail) lines.push("stdout (tail):", "", mdBlock(c.stdout_tail), "");
  lines.push("</details>");
  return lines.join("\n");
}

/** The summary document. `title` is its heading. */
export function renderMarkdown(report: ReportData, title = "spoolctl report"): string {
  const out: string[] = [`## ${mdText(title)}`, "", headline(report.totals), ""];
  if (report.cases.length === 0) {
    out.push("No jobs matched.");
    return `${out.join("\n")}\n`;
  }
  const lanes = Object.entries(report.lanes);
  if (lanes.length > 1) {
    out.push(
      "| lane | jobs | passed | failed | skipped | not finished | time |",
      "|---|---:|---:|---:|---:|---:|---:|",
    );
    for (const [lane, t] of lanes)
      out.push(
        `| ${mdText(lane)} | ${t.jobs} | ${t.passed} | ${t.failed} | ${t.skipped} | ${t.pending} | ${humanDuration(t.time_seconds)} |`,
      );
    out.push("");
  }
  const sorted = [...report.cases].sort((a, b) => ORDER[a.result] - ORDER[b.result] || a.id - b.id);
  out.push("| job | lane | result | attempts | time | command | reason |", "|---:|---|---|---:|---:|---|---|");
  for (const c of sorted.slice(0, MAX_ROWS)) out.push(jobRow(c));
  if (sorted.length > MAX_ROWS)
    out.push("", `… and ${sorted.length - MAX_ROWS} more jobs (see the JUnit report or \`spoolctl report --json\`).`);
  if (report.truncated) out.push("", "Only the newest jobs are included: more jobs matched than `--limit`.");
  const failed = sorted.filter((c) => c.result === "failed" && (c.stderr_tail || c.stdout_tail));
  if (failed.length) {
    out.push("", "### Failures", "");
    for (const c of failed.slice(0, MAX_DETAILS)) out.push(failureDetail(c), "");
    if (failed.length > MAX_DETAILS) out.push(`… and ${failed.length - MAX_DETAILS} more failures.`, "");
  }
  out.push("", `<sub>generated ${iso(report.generated_at)} by spoolctl</sub>`);
  return `${out.join("\n")}\n`;
}
