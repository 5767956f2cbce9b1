/**
 * JUnit XML rendering of a report (`report --junit`). Layout, chosen for what CI
 * systems display (GitHub test reporters, GitLab, Jenkins, Azure):
 *
 * - `<testsuites name="spoolctl">` with the overall counts;
 * - one `<testsuite name="spoolctl.<lane>">` per lane (CI groups by suite);
 * - one `<testcase classname="spoolctl.<lane>" name="<name>">` per job (its
 *   name, else its key, else `job <id>: <command>`), `time` = the summed run time of its attempts (seconds);
 * - dead → `<failure message="<reason>: <detail>" type="<reason>">` whose body is
 *   the message and the stderr tail; canceled and unfinished → `<skipped>`;
 * - flaky (done after failed attempts) → one `<flakyFailure>` per failed
 *   attempt (Maven Surefire's rerun format), and no failure;
 * - `<system-out>` / `<system-err>`: tails of what did not pass.
 *
 * Text is XML-escaped; ANSI escape sequences, control characters and code
 * points XML 1.0 forbids are removed.
 */
import { caseLabel, type ReportCase, type ReportData, type ReportTotals } from "../ops/report.ts";
import { formatArgv } from "./text.ts";

/** Longest testcase name; longer commands are cut with an ellipsis. */
const NAME_MAX = 200;

/** Removes ANSI escape sequences (CSI, OSC) and characters XML 1.0 cannot carry. */
export function xmlSafe(text: string): string {
  return text
    .replace(/\u001b\[[0-?]*[ -/]*[@-~]/g, "")
    .replace(/\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?/g, "")
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffe\uffff]/g, "")
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "");
}

/** Escapes text content. */
function xmlText(text: string): string {
  return xmlSafe(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Escapes an attribute value (double-quoted); newlines and tabs survive as character references. */
function xmlAttr(text: string): string {
  return xmlText(text)
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;")
    .replace(/\n/g, "&#10;")
    .replace(/\r/g, "&#13;")
    .replace(/\t/g, "&#9;");
}

function attrs(pairs: Record<string, string | number>): string {
  return Object.entries(pairs)
    .map(([k, v]) => ` ${k}="${xmlAttr(String(v))}"`)
    .join("");
}

function seconds(n: number): string {
  return n.toFixed(3);
}

function isoOrNull(epoch: number | null): string | null {
  return epoch === null ? null : new Date(epoch * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * The job's name, else its key (docs/architecture.md "Job names"), else `job
 * <id>: <command>`, the command shell-quoted; cut to a readable length.
 */
function caseName(c: ReportCase): string {
  const name = caseLabel(c) ?? `job ${c.id}: ${formatArgv(c.argv)}`;
  return name.length > NAME_MAX ? `${name.slice(0, NAME_MAX - 1)}…` : name;
}

function counts(t: ReportTotals): Record<string, string | number> {
  return {
    tests: t.jobs,
    failures: t.failed,
    errors: 0,
    skipped: t.skipped + t.pending,
    time: seconds(t.time_seconds),
  };
}

function testcase(c: ReportCase): string {
  const head = `    <testcase${attrs({ name: caseName(c), classname: `spoolctl.${c.queue}`, time: seconds(c.time_seconds) })}`;
  const body: string[] = [];
  const props = [
    ["job_id", String(c.id)],
    ["state", c.state],
    // Named as in the JSON: `attempts_total` is every attempt started (JSON `attempts` counts only failures).
    ["attempts_total", String(c.attempts_total)],
    ...Object.entries(c.tags).map(([k, v]) => [`tag.${k}`, v]),
  ];
  body.push(
    `      <properties>`,
    ...props.map(([name, value]) => `        <property${attrs({ name: name!, value: value! })}/>`),
    `      </properties>`,
  );
  if (c.result === "failed") {
    const text = c.stderr_tail ? `${c.message}\n\nstderr (tail):\n${c.stderr_tail}` : (c.message ?? "");
    body.push(
      `      <failure${attrs({ message: c.message ?? "failed", type: c.failure_reason ?? "dead" })}>${xmlText(text)}</failure>`,
    );
  } else if (c.result === "flaky") {
    // Surefire's rerun layout: the test passed; each failed run before it is one <flakyFailure>.
    for (const a of c.flaky_attempts)
      body.push(
        `      <flakyFailure${attrs({ message: `attempt ${a.attempt_no}: ${a.message}`, type: a.failure_reason ?? "failed" })}/>`,
      );
  } else if (c.result === "skipped" || c.result === "pending") {
    body.push(`      <skipped${attrs({ message: c.message ?? c.state })}/>`);
  }
  if (c.stdout_tail) body.push(`      <system-out>${xmlText(c.stdout_tail)}</system-out>`);
  if (c.stderr_tail) body.push(`      <system-err>${xmlText(c.stderr_tail)}</system-err>`);
  return `${head}>\n${body.join("\n")}\n    </testcase>`;
}

/** The whole document. */
export function renderJunit(report: ReportData, hostname: string): string {
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>'];
  lines.push(`<testsuites${attrs({ name: "spoolctl", ...counts(report.totals) })}>`);
  for (const [lane, totals] of Object.entries(report.lanes)) {
    const cases = report.cases.filter((c) => c.queue === lane);
    const first = cases.map((c) => c.started_at ?? c.created_at).reduce((a, b) => Math.min(a, b), Infinity);
    const suite: Record<string, string | number> = { name: `spoolctl.${lane}`, ...counts(totals), hostname };
    const stamp = isoOrNull(Number.isFinite(first) ? first : report.generated_at);
    if (stamp) suite.timestamp = stamp;
    lines.push(`  <testsuite${attrs(suite)}>`);
    for (const c of cases) lines.push(testcase(c));
    lines.push("  </testsuite>");
  }
  lines.push("</testsuites>");
  return `${lines.join("\n")}\n`;
}
