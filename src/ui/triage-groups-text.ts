/**
 * The text of failure groups (docs/architecture.md "Triage"): the table of
 * `list --group`, the rows of triage's group screen, and a group's card.
 * Pure functions of the data; widths are terminal columns (Bun.stringWidth).
 */
import type { FailureGroup } from "../ops/triage-groups.ts";
import { counted } from "../ops/values.ts";
import { clipColumns, columns, escapeControl, fitColumns, formatArgv, humanDuration, iso, table } from "./text.ts";
import { idList } from "./triage-card.ts";

/** "3m05s ago" for an epoch-seconds time. */
function ago(t: number, now: number): string {
  return `${humanDuration(Math.max(0, now - t))} ago`;
}

/** `list --state dead --group` as text: one row per group, largest first; `width` in columns (Infinity off a terminal: nothing cut). */
export function renderGroups(groups: FailureGroup[], width: number, now = Date.now() / 1000): string {
  if (groups.length === 0) return "no failed jobs";
  const jobs = groups.reduce((n, g) => n + g.count, 0);
  const signatureWidth = Math.max(30, width - 90);
  const rows = groups.map((g) => [
    g.closed_dependents?.length ? `${g.count} (+${g.closed_dependents.length} closed)` : String(g.count),
    g.signature.state,
    clipColumns(escapeControl(g.text), signatureWidth),
    g.lanes.join(","),
    ago(g.first_seen, now),
    ago(g.last_seen, now),
    clipColumns(formatArgv(g.example.argv), width === Infinity ? Infinity : 40),
  ]);
  const head = `${counted(groups.length, "group")} of ${counted(jobs, "job")}, largest first (their job ids: the same command with --json)`;
  return `${head}\n${table(["JOBS", "STATE", "SIGNATURE", "LANES", "FIRST", "LAST", "EXAMPLE"], rows)}`;
}

/** One row of triage's group screen, fitted to `width` columns. */
export function groupRow(g: FailureGroup, width: number, now = Date.now() / 1000): { label: string; hint: string } {
  const count = `${g.count} job${g.count === 1 ? "" : "s"}`.padStart(8);
  const hint = clipColumns(`${g.lanes.join(",")} · last ${ago(g.last_seen, now)}`, 30);
  // The menu draws "● [1] label (hint)": the label gets what the hint leaves.
  const label = clipColumns(`${count}  ${escapeControl(g.text)}`, Math.max(20, width - columns(hint) - 10));
  return { label, hint };
}

/** The body of a group's card (`width` columns inside the box, every line that wide). */
export function groupCardText(g: FailureGroup, width: number, now = Date.now() / 1000): string {
  const field = (name: string, value: string) => fitColumns(`${name.padEnd(10)}  ${value}`, width);
  const s = g.signature;
  return [
    field("signature", escapeControl(g.text)),
    field("jobs", `${g.count} ${s.state}`),
    field("reason", s.failure_reason ?? "-"),
    field("exit", s.signal !== null ? `signal ${s.signal}` : s.exit_code === null ? "-" : `code ${s.exit_code}`),
    field("lanes", g.lanes.join(", ")),
    field("first seen", `${iso(g.first_seen)} (${ago(g.first_seen, now)})`),
    field("last seen", `${iso(g.last_seen)} (${ago(g.last_seen, now)})`),
    field("example", `job ${g.example.job_id}: ${formatArgv(g.example.argv)}`),
    field("stderr", g.example.stderr_line === "" ? "(none)" : escapeControl(g.example.stderr_line)),
    field("job ids", idList(g.job_ids)),
    ...(g.closed_dependents?.length
      ? [field("closed", `${g.closed_dependents.length} waiting job(s) (need_failed): ${idList(g.closed_dependents)}`)]
      : []),
  ].join("\n");
}

/** A group's title: its size and place in the list. */
export function groupTitle(g: FailureGroup, index: number, total: number): string {
  return `Group ${index + 1} of ${total} · ${g.count} ${g.signature.state} job${g.count === 1 ? "" : "s"}`;
}
