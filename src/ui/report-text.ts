/** Human text of `spoolctl report` when no file format is asked for: totals and a job table. */
import { caseLabel, type ReportData } from "../ops/report.ts";
import { type Paint, paint } from "./color.ts";
import { clip, escapeControl, formatArgv, humanDuration, table } from "./text.ts";

/** Totals line, then one row per job (oldest first). */
export function renderReportText(report: ReportData, color: Paint = paint(false)): string {
  const t = report.totals;
  const head = `${t.jobs} job${t.jobs === 1 ? "" : "s"}: ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped, ${t.pending} not finished${t.flaky ? `, ${t.flaky} flaky` : ""} (${humanDuration(t.time_seconds)})`;
  if (report.cases.length === 0) return `${head}\nno jobs matched`;
  const named = report.cases.some((c) => caseLabel(c) !== null);
  const rows = report.cases.map((c) => [
    String(c.id),
    ...(named ? [escapeControl(caseLabel(c) ?? "")] : []),
    color.result(c.result),
    c.queue,
    String(c.attempts_total),
    humanDuration(c.time_seconds),
    escapeControl(c.message ?? ""),
    clip(formatArgv(c.argv)),
  ]);
  return `${head}\n${table(["ID", ...(named ? ["NAME"] : []), "RESULT", "QUEUE", "TRIES", "TIME", "REASON", "COMMAND"], rows)}`;
}
