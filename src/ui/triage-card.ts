/**
 * The text of `spoolctl triage`: one job's card (command, failure,
 * exit code, budgets, last error, output tails), its full output, and the
 * closing summary. Pure functions of the data, so the flow stays about prompts.
 */

import { DISK_LOSS_LIMIT } from "../ops/outcome.ts";
import type { AttemptOutput } from "../ops/output.ts";
import { lostToDisk } from "../ops/record.ts";
import type { RetriedWithOverrides } from "../ops/retry.ts";
import type { TriageCard } from "../ops/triage.ts";
import { counted, timeoutText } from "../ops/values.ts";
import { originText } from "./origin.ts";
import {
  attemptsText,
  clipColumns,
  escapeControl,
  fitColumns,
  formatArgv,
  humanDuration,
  idList,
  iso,
  tailAtLineStart,
} from "./text.ts";

/** Lines of each stream's tail shown on a card; `v` shows everything. */
const CARD_TAIL_LINES = 8;

/** What one triage session changed (and looked at), for its closing summary. */
export interface TriageSummary {
  /** Jobs whose card was shown. */
  looked_at: number;
  /** Jobs in the list when the session started. */
  listed: number;
  /** Everything done to groups and single jobs, in the order it happened. */
  steps: TriageStep[];
  /** The lanes of the jobs retried, in the order they were first retried (for the `Next:` hint). */
  lanes: string[];
  /** Ended by Ctrl-C (the job or group on screen was left as it was). */
  interrupted: boolean;
}

/** One thing a session did: to a whole group, or to one job. */
type TriageStep = ({ kind: "group" } & GroupAction) | ({ kind: "job" } & JobAction);

/** One action on a single job, for the summary. */
interface JobAction {
  job_id: number;
  action: "retried" | "deleted" | "skipped";
  /** Retried with new settings: what changed. */
  changed?: RetriedWithOverrides["changed"];
}

/** Records that jobs of `lanes` were retried, keeping the first-retried order. */
export function noteLanes(summary: TriageSummary, lanes: Iterable<string>): void {
  for (const lane of lanes) if (!summary.lanes.includes(lane)) summary.lanes.push(lane);
}

/** One action on a whole failure group, for the summary. Sizes in bytes. */
export interface GroupAction {
  /** The group's signature text. */
  signature: string;
  action: "retried" | "deleted" | "skipped";
  job_ids: number[];
  /** Retried with new settings: what changed (the same for each job). */
  changed?: RetriedWithOverrides["changed"];
  /** Deleted: what went with the jobs. */
  removed?: { attempts: number; events: number; bytes: number };
}

/** Cuts `text` to `width` terminal columns with an ellipsis, so a box never wraps. */
const clip = clipColumns;

/** The last `n` lines of a stream, control characters escaped (job output must not drive the terminal). */
function tailLines(text: string, n: number, width: number): string[] {
  const lines = (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
  return lines.slice(-n).map((l) => clip(escapeControl(l.replace(/\r$/, "")).replaceAll("\\t", "  "), width));
}

/** The body of a job's card; `width` is the room inside the box, and every line is that wide (a stable box). */
export function cardText(card: TriageCard, width: number, now = Date.now() / 1000): string {
  const { job, feedback: f } = card;
  const field = (name: string, value: string) => clip(`${name.padEnd(10)}  ${value}`, width);
  const ended =
    job.finished_at === null
      ? "-"
      : `${iso(job.finished_at)} (${humanDuration(Math.max(0, now - job.finished_at))} ago)`;
  const tags = Object.entries(job.tags)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");
  const lines = [
    ...(job.name ? [field("name", escapeControl(job.name))] : []),
    field("command", formatArgv(job.argv)),
    ...(originText(job.idempotency_key) ? [field("made by", escapeControl(originText(job.idempotency_key)!))] : []),
    field("queue", job.queue + (tags ? `   tags ${escapeControl(tags)}` : "")),
    field("failure", f.failure_reason ?? (job.state === "canceled" ? "canceled before it ran" : "-")),
    field("exit code", f.exit_code === null ? "-" : String(f.exit_code)),
    // A job dead of a full disk spent that budget (its last error says so; triage shows dead jobs).
    field(
      "attempts",
      attemptsText(job, job.last_attempt_no, job.state === "dead" && lostToDisk(job.last_error) ? DISK_LOSS_LIMIT : 0),
    ),
    field("timeout", timeoutText(job.timeout_seconds)),
    field("ended", ended),
  ];
  if (job.last_error) lines.push(field("last error", escapeControl(job.last_error)));
  if (job.last_attempt_no === 0) {
    lines.push("── output: none (it never ran)");
    return lines.map((l) => fitColumns(l, width)).join("\n");
  }
  for (const s of ["stderr", "stdout"] as const) {
    const view = f.streams[s];
    if (view.missing) {
      lines.push(`── ${s}: no output file`);
      continue;
    }
    if (view.size_bytes === 0) {
      lines.push(`── ${s}: empty`);
      continue;
    }
    // From a line's start: the first line of a tail cut by bytes is left out, not shown half.
    if (view.binary) {
      lines.push(`── ${s}: binary, ${view.size_bytes} bytes (spoolctl output ${job.id} --raw --stream ${s})`);
      continue;
    }
    const shown = tailLines(tailAtLineStart(view.tail, view.partial_first_line).text, CARD_TAIL_LINES, width);
    const more =
      view.truncated ||
      (view.tail.endsWith("\n") ? view.tail.slice(0, -1) : view.tail).split("\n").length > shown.length;
    lines.push(
      `── ${s}${more ? ` (last ${shown.length} lines of ${view.size_bytes} bytes; v shows all)` : ""}`,
      ...shown,
    );
  }
  return lines.map((l) => fitColumns(l, width)).join("\n");
}

/** The card's title: which job, its state, and where it is in the list. */
export function cardTitle(card: TriageCard, index: number, total: number): string {
  return `Job ${card.job.id} · ${card.job.state} · ${index + 1} of ${total}`;
}

/** A job's full output for the "view" action, control characters escaped. */
export function outputText(out: AttemptOutput | null, jobId: number): string {
  if (!out) return `job ${jobId} has not run yet: no output`;
  const parts: string[] = [];
  for (const s of ["stdout", "stderr"] as const) {
    const view = out[s];
    if (!view) continue;
    parts.push(`=== job ${out.job_id} attempt ${out.attempt_no} ${s} ===`);
    if (view.truncated)
      parts.push(
        `[… ${view.omitted_bytes} earlier bytes not shown; spoolctl output ${jobId} --stream ${s} --raw has all]`,
      );
    if (view.missing) parts.push("[no output file]");
    else if (view.text) parts.push(...tailLines(view.text, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
    else parts.push("[empty]");
  }
  return parts.join("\n");
}

/** What a retry changed, e.g. "timeout 300s → 90s, env FOO set". */
export function describeChanges(changed: RetriedWithOverrides["changed"]): string {
  const parts: string[] = [];
  if (changed.timeout_seconds)
    parts.push(`timeout ${timeoutText(changed.timeout_seconds.from)} → ${timeoutText(changed.timeout_seconds.to)}`);
  if (changed.max_retries) parts.push(`retry budget ${changed.max_retries.from} → ${changed.max_retries.to}`);
  if (changed.env_set?.length) parts.push(`env ${changed.env_set.join(", ")} set`);
  return parts.join(", ");
}

/** Bytes as a person reads them: 512 B, 3.1 KiB, 2.0 MiB. */
export function byteText(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

/** One line of the summary for a group action. */
export function groupActionText(g: GroupAction): string {
  const jobs = `${g.job_ids.length} job${g.job_ids.length === 1 ? "" : "s"}`;
  if (g.action === "skipped") return `Skipped the group "${g.signature}" (${jobs}).`;
  if (g.action === "deleted") {
    const r = g.removed!;
    return `Deleted the ${jobs} of "${g.signature}" (${idList(g.job_ids)}) with ${counted(r.attempts, "attempt")}, ${counted(r.events, "event")} and ${byteText(r.bytes)} of output.`;
  }
  const how = g.changed ? describeChanges(g.changed) : "";
  return `Retried the ${jobs} of "${g.signature}"${how ? ` (${how})` : ""}: ${idList(g.job_ids)}; now queued.`;
}

/** The closing summary: what changed, one line per step in the order it happened (runs of single deletes or skips share a line). */
export function summaryText(s: TriageSummary): string {
  const lines = [`Looked at ${s.looked_at} of ${counted(s.listed, "job")} one by one.`];
  if (!s.steps.some((st) => st.action !== "skipped")) lines.push("Nothing changed.");
  for (let i = 0; i < s.steps.length; ) {
    const st = s.steps[i]!;
    if (st.kind === "group") {
      lines.push(groupActionText(st));
      i++;
      continue;
    }
    if (st.action === "retried") {
      const how = st.changed ? describeChanges(st.changed) : "";
      lines.push(`Retried job ${st.job_id}${how ? ` (${how})` : ""}; now queued.`);
      i++;
      continue;
    }
    // A run of single deletes (or skips) in a row: one line.
    const ids: number[] = [];
    for (; i < s.steps.length; i++) {
      const next = s.steps[i]!;
      if (next.kind !== "job" || next.action !== st.action) break;
      ids.push(next.job_id);
    }
    const jobs = `job${ids.length > 1 ? "s" : ""} ${ids.join(", ")}`;
    lines.push(
      st.action === "deleted"
        ? `Deleted ${jobs} with ${ids.length > 1 ? "their" : "its"} history and output.`
        : `Skipped ${jobs}.`,
    );
  }
  return lines.join("\n");
}

/**
 * The last line: what to run next. Retried jobs run where a worker serves
 * their lane: one `work --drain` per lane retried, the default lane's without
 * `--queue` (docs/architecture.md "Triage").
 */
export function nextStep(s: TriageSummary): string {
  if (s.lanes.length === 0) return "Done.";
  const lanes = [...s.lanes].sort((a, b) => (a === "default" ? -1 : b === "default" ? 1 : a.localeCompare(b)));
  const commands = lanes.map((l) =>
    l === "default" ? "spoolctl work --drain" : `spoolctl work --queue ${formatArgv([l])} --drain`,
  );
  return commands.length === 1
    ? `Next: ${commands[0]}  (runs the retried jobs)`
    : `Next: ${commands.join("; ")}  (run the retried jobs of ${lanes.length} lanes)`;
}
