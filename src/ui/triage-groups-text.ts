/**
 * The text of failure groups (docs/architecture.md "Triage"): the table of
 * `list --group`, the rows of triage's group screen, and a group's card.
 * Pure functions of the data; widths are terminal columns (Bun.stringWidth).
 */
import type { FailureGroup } from "../ops/triage-groups.ts";
import { counted } from "../ops/values.ts";
import {
  clipColumns,
  columns,
  escapeControl,
  fitColumns,
  formatArgv,
  humanDuration,
  idList,
  iso,
  table,
  wrapColumns,
} from "./text.ts";

/** "3m05s ago" for an epoch-seconds time. */
function ago(t: number, now: number): string {
  return `${humanDuration(Math.max(0, now - t))} ago`;
}

/** The columns of `list --group` that give way on a narrow terminal, least important first. */
const YIELDING = ["EXAMPLE", "FIRST", "LAST", "LANES"] as const;
/** The signature is worth this many columns before another column is shown beside it. */
const SIGNATURE_ROOM = 50;

/**
 * `list --state dead --group` as text: one row per group, largest first;
 * `width` in columns (Infinity off a terminal: nothing cut). On a narrow
 * terminal the signature keeps its room and the other columns give way,
 * the example command first, then the first and last seen, then the lanes.
 */
export function renderGroups(groups: FailureGroup[], width: number, now = Date.now() / 1000): string {
  if (groups.length === 0) return "no failed jobs";
  const jobs = groups.reduce((n, g) => n + g.count, 0);
  const cells = groups.map((g) => ({
    JOBS: g.closed_dependents?.length ? `${g.count} (+${g.closed_dependents.length} closed)` : String(g.count),
    STATE: g.signature.state,
    SIGNATURE: escapeControl(g.text),
    LANES: g.lanes.join(","),
    FIRST: ago(g.first_seen, now),
    LAST: ago(g.last_seen, now),
    EXAMPLE: clipColumns(formatArgv(g.example.argv), width === Infinity ? Infinity : 40),
  }));
  type Column = keyof (typeof cells)[number];
  const natural = (c: Column) => Math.max(c.length, ...cells.map((r) => columns(r[c])));
  let shown: Column[] = ["JOBS", "STATE", "SIGNATURE", "LANES", "FIRST", "LAST", "EXAMPLE"];
  let signatureWidth = Infinity;
  if (width !== Infinity) {
    const want = Math.min(natural("SIGNATURE"), SIGNATURE_ROOM);
    for (let drop = 0; ; drop++) {
      shown = shown.filter((c) => !YIELDING.slice(0, drop).includes(c as (typeof YIELDING)[number]));
      const others = shown.filter((c) => c !== "SIGNATURE").reduce((n, c) => n + natural(c) + 2, 0);
      signatureWidth = Math.max(20, width - 1 - others);
      if (signatureWidth >= want || drop === YIELDING.length) break;
    }
  }
  const rows = cells.map((r) =>
    shown.map((c) => (c === "SIGNATURE" ? clipColumns(r.SIGNATURE, signatureWidth) : r[c])),
  );
  const head = `${counted(groups.length, "group")} of ${counted(jobs, "job")}, largest first (their job ids: the same command with --json)`;
  return `${head}\n${table(shown, rows)}`;
}

/**
 * One row of triage's group screen: the label (size and signature) and its
 * hint (lanes, last seen) fit `width` columns together with the " (…)" around
 * the hint. The signature keeps its room: the hint gives way first (its time,
 * then its lanes are cut short).
 */
export function groupRow(g: FailureGroup, width: number, now = Date.now() / 1000): { label: string; hint: string } {
  const count = `${g.count} job${g.count === 1 ? "" : "s"}`.padStart(8);
  const label = `${count}  ${escapeControl(g.text)}`;
  const lanes = g.lanes.join(",");
  for (const hint of [`${lanes} · last ${ago(g.last_seen, now)}`, lanes])
    if (columns(label) + columns(hint) + 3 <= width) return { label, hint };
  const hint = clipColumns(lanes, 12);
  return { label: clipColumns(label, Math.max(20, width - columns(hint) - 3)), hint };
}

/** The body of a group's card (`width` columns inside the box, every line that wide). */
export function groupCardText(g: FailureGroup, width: number, now = Date.now() / 1000): string {
  const field = (name: string, value: string) => fitColumns(`${name.padEnd(10)}  ${value}`, width);
  const s = g.signature;
  // The signature is what the group is: it wraps (up to 3 lines) where the other fields are cut.
  const signature = wrapColumns(escapeControl(g.text), Math.max(10, width - 12), 3);
  return [
    field("signature", signature[0]!),
    ...signature.slice(1).map((l) => field("", l)),
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
