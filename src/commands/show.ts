/** `spoolctl show ID`: one job with its attempts and events; env values only here. */
import type { VerbResult } from "../contract/envelope.ts";
import type { JobDetail } from "../ops/jobs.ts";
import { leftRunningOf, leftRunningText } from "../ops/leftovers.ts";
import { describeExit } from "../ops/outcome.ts";
import { lostToDisk } from "../ops/record.ts";
import { blockedNext, type RetryBlock } from "../ops/retry-needs.ts";
import { timeoutText } from "../ops/values.ts";
import { jobDetail } from "../store/verbs/jobs.ts";
import { stdoutPaint } from "../ui/color.ts";
import { originText } from "../ui/origin.ts";
import { attemptRowsText, escapeControl, formatArgv, humanDuration, iso, table } from "../ui/text.ts";
import { COMMON_FLAGS, defineVerb, jobIdPositional } from "./verb.ts";
import { healthContext } from "./workers.ts";

export default defineVerb({
  name: "show",
  description: "Show one job: its fields, attempts and events.",
  examples: ["spoolctl show 1", "spoolctl show nightly-1 --json   # by idempotency key"],
  flags: { ...COMMON_FLAGS, id: jobIdPositional("show") },
  async run(ctx): Promise<VerbResult<JobDetail>> {
    const store = await ctx.open({ create: false });
    return { data: await jobDetail(store, ctx.args.id, healthContext(store)) };
  },
  render({ data }, ctx) {
    const j = data.job;
    const now = Date.now() / 1000;
    const color = stdoutPaint();
    const ago = (t: number | null) =>
      t === null ? "-" : `${iso(t)} (${t > now ? `in ${humanDuration(t - now)}` : `${humanDuration(now - t)} ago`})`;
    const field = (name: string, value: string) => `${name.padEnd(13)} ${value}`;
    const lines = [
      field("job", String(j.id)),
      ...(j.name ? [field("name", escapeControl(j.name))] : []),
      field(
        "state",
        j.held
          ? `${color.state("held")} (queued, kept from starting: spoolctl release ${j.id} lets it run${j.scheduled ? `, due ${ago(j.next_run_at)}` : ""})`
          : j.scheduled
            ? `${color.state("scheduled", j.state)} (scheduled for ${ago(j.next_run_at)})`
            : color.state(j.state),
      ),
      field("command", formatArgv(j.argv)),
      field("queue", j.queue),
      field("priority", String(j.priority)),
      // Counted as the attempts table below lists them (the budget only since its last renewal).
      field("attempts", attemptRowsText(j, data.attempts, data.attempts.filter((a) => lostToDisk(a.error)).length)),
      field("timeout", timeoutText(j.timeout_seconds)),
      field("created", ago(j.created_at)),
      // Only a queued job has a next run; a finished one keeps its last due time, which says nothing.
      ...(j.state === "queued" && !j.scheduled ? [field("next run", ago(j.next_run_at))] : []),
    ];
    if (j.waiting_on.length > 0)
      lines.push(field("waits on", `job${j.waiting_on.length > 1 ? "s" : ""} ${j.waiting_on.join(", ")} (--needs)`));
    if (j.last_error) lines.push(field("last error", escapeControl(j.last_error)));
    const block = data.retry_blocked;
    if (block) {
      // Its own retry would be refused (a need is dead, canceled or deleted): the command that works.
      const why =
        block.retry === null
          ? "a job it needs was deleted: add its command again"
          : `retry job ${block.retry}${block.retry === block.need_id ? ", which it needs" : ", where its chain of needs failed"}: that revives this job with it`;
      lines.push(field("next", `${ctx.suggest(blockedNext(j.id, block as RetryBlock))}  (${why})`));
    }
    for (const left of leftRunningOf(data.events)) lines.push(field("left running", leftRunningText(left)));
    lines.push(field("runs in", j.cwd ? escapeControl(j.cwd) : "the worker's folder (no --cwd)"));
    for (const [k, v] of Object.entries(j.env)) lines.push(field("env", escapeControl(`${k}=${v}`)));
    for (const [k, v] of Object.entries(j.tags)) lines.push(field("tag", escapeControl(`${k}=${v}`)));
    if (j.idempotency_key) lines.push(field("key", escapeControl(j.idempotency_key)));
    const origin = originText(j.idempotency_key);
    if (origin) lines.push(field("made by", escapeControl(origin)));
    if (j.note) lines.push(field("note", escapeControl(j.note)));
    if (j.locked_by) lines.push(field("worker", `${j.locked_by} (pid ${j.locked_pid})`));
    const health = data.worker_health;
    if (health && health.worker_state !== "live")
      lines.push(field("worker state", color.red(`${health.worker_state}: ${health.fate}`)));
    if (data.attempts.length) {
      lines.push("", "attempts:");
      lines.push(
        table(
          ["#", "STATE", "STARTED", "FINISHED", "TOOK", "RESULT", "WORKER", "HOST"],
          data.attempts.map((a) => [
            String(a.attempt_no),
            color.state(a.state),
            iso(a.started_at),
            iso(a.finished_at),
            // An abandoned attempt ends when it was reaped, which is later than its process died.
            humanDuration(Math.max(0, (a.finished_at ?? now) - a.started_at)) +
              (a.finished_at === null ? " so far" : a.state === "abandoned" ? " until reaped" : ""),
            a.state === "running"
              ? "-"
              : a.failure_reason === "spawn_failed" || a.failure_reason === "worker_crash"
                ? (a.error ?? "-")
                : lostToDisk(a.error)
                  ? // The disk failed, not the command: its exit status is the consequence, not the result.
                    `disk full: output not written (${describeExit(a.exit_code, a.signal)})`
                  : describeExit(a.exit_code, a.signal),
            a.worker_id,
            escapeControl(a.host ?? "-"),
          ]),
        ),
      );
    }
    lines.push("", "events:");
    lines.push(
      table(
        ["ID", "AT", "EVENT", "WORKER", "DETAIL"],
        data.events.map((e) => [String(e.id), iso(e.at), e.event, e.worker_id ?? "-", escapeControl(e.detail ?? "")]),
      ),
    );
    return lines.join("\n");
  },
});
