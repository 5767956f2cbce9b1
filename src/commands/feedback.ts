/** `spoolctl feedback ID`: one verdict — terminal, succeeded, exit, reason, output tails, next command. */
import type { VerbResult } from "../contract/envelope.ts";
import { type FeedbackData, TAIL_BYTES } from "../ops/feedback.ts";
import { leftRunningText } from "../ops/leftovers.ts";
import { parseStream } from "../ops/output.ts";
import { counted } from "../ops/values.ts";
import { jobFeedback } from "../store/verbs/feedback.ts";
import { escapeControl, humanDuration, tailAtLineStart } from "../ui/text.ts";
import { COMMON_FLAGS, defineVerb, jobIdPositional } from "./verb.ts";

function verdict(d: FeedbackData): string {
  if (!d.terminal)
    return `job ${d.job_id} is ${d.state}${d.latest_attempt_no === null ? " (not run yet)" : ` (attempt ${d.latest_attempt_no})`}`;
  const took = d.duration_seconds === null ? "" : ` in ${humanDuration(d.duration_seconds)}`;
  if (d.succeeded) return `job ${d.job_id} succeeded${took} (attempt ${d.latest_attempt_no})`;
  const why = [d.failure_reason, d.last_error ? escapeControl(d.last_error) : null].filter(Boolean).join(": ");
  return `job ${d.job_id} ${d.state}${why ? ` — ${why}` : ""} (${counted(d.attempts_total, "attempt")})`;
}

export default defineVerb({
  name: "feedback",
  description:
    "One verdict about a job: is it over, did it succeed, how did its latest attempt end, its output tails, and the next command to run.",
  examples: [
    "spoolctl feedback 1",
    "spoolctl feedback 1 --json --tail-bytes 8192",
    "spoolctl feedback nightly-1 --stream stderr",
  ],
  flags: {
    ...COMMON_FLAGS,
    "tail-bytes": {
      type: "string",
      description: "bytes of each stream's tail",
      valueHint: "N",
      valueType: "integer",
      default: String(TAIL_BYTES.default),
      min: TAIL_BYTES.min,
      max: TAIL_BYTES.max,
    },
    stream: {
      type: "string",
      description: "text output only: stdout, stderr or both (JSON always has both)",
      valueHint: "STREAM",
      default: "both",
      choices: ["stdout", "stderr", "both"],
    },
    id: jobIdPositional("feedback"),
  },
  async run(ctx): Promise<VerbResult<FeedbackData>> {
    const verdict = await jobFeedback(await ctx.open({ create: false }), ctx.args.id, ctx.args["tail-bytes"]);
    const next = verdict.data.remediation;
    return { ...verdict, data: { ...verdict.data, remediation: next === null ? null : ctx.suggest(next) } };
  },
  render({ data }, ctx) {
    const lines = [verdict(data)];
    if (data.exit_code !== null && data.terminal) lines.push(`exit code ${data.exit_code}`);
    for (const s of parseStream(ctx.args.stream)) {
      const view = data.streams[s];
      if (view.missing || view.size_bytes === 0) continue;
      if (view.binary) {
        lines.push(
          `--- ${s} (binary, ${view.size_bytes} bytes: use ${ctx.suggest(`spoolctl output ${data.job_id} --raw --stream ${s}`)}) ---`,
        );
        continue;
      }
      // The tail starts at a line's beginning: a line cut by --tail-bytes is left out, not shown half.
      const tail = tailAtLineStart(view.tail, view.partial_first_line);
      lines.push(
        `--- ${s}${view.truncated ? ` (last ${counted(tail.lines, "line")} of ${view.size_bytes} bytes)` : ""} ---`,
      );
      lines.push(tail.text.endsWith("\n") ? tail.text.slice(0, -1) : tail.text);
    }
    if (data.left_running) lines.push(leftRunningText(data.left_running));
    if (data.remediation) lines.push(`next: ${data.remediation}`);
    return lines.join("\n");
  },
});
