/** `spoolctl list`: jobs newest first, with filters and paging (docs/contract.md "Paging: meta.pagination"). */
import type { VerbResult } from "../contract/envelope.ts";
import { invalidValue } from "../contract/errors.ts";
import { LIST_LIMIT, listJobs, parseStates, type ListPage } from "../ops/jobs.ts";
import { LIMITS } from "../ops/limits.ts";
import { JOB_STATES } from "../store/model.ts";
import { stdoutPaint } from "../ui/color.ts";
import { clip, escapeControl, formatArgv, humanDuration, rerunCommand, table } from "../ui/text.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";
import { healthContext } from "./workers.ts";

export default defineVerb({
  name: "list",
  description: "List jobs, newest first.",
  examples: ["spoolctl list", "spoolctl list --state dead --queue builds", "spoolctl list --tag ci=1 --limit 10 --json", "spoolctl list --cursor 120   # the page after id 120"],
  flags: {
    ...COMMON_FLAGS,
    state: {
      type: "string", repeatable: true, separator: ",", looseChoices: true, valueHint: "STATE", choices: [...JOB_STATES, "scheduled", "failed", "pending", "processing", "completed"],
      description: "queued, running, done, dead, canceled, or scheduled (queued, not yet due); QueueCTL pending, processing, completed; failed is reserved and matches nothing; comma-separated or repeated",
    },
    queue: { type: "string", description: "only this lane", valueHint: "NAME", format: "lane" },
    tag: { type: "string", repeatable: true, description: "only jobs with this tag", valueHint: "K=V", valueType: "pair" },
    "priority-min": { type: "string", description: "only jobs with at least this priority", valueHint: "N", valueType: "integer", min: LIMITS.priority.min, max: LIMITS.priority.max },
    limit: { type: "string", description: `at most N jobs (${LIST_LIMIT.min}-${LIST_LIMIT.max})`, valueHint: "N", valueType: "integer", default: String(LIST_LIMIT.default), min: LIST_LIMIT.min, max: LIST_LIMIT.max },
    cursor: { type: "string", description: "show jobs older than this id (meta.pagination.cursor of the previous page)", valueHint: "ID", valueType: "integer", min: 1, max: Number.MAX_SAFE_INTEGER },
  },
  noArgsHint: "filter with --state, --queue, --tag",
  async run(ctx): Promise<VerbResult<Omit<ListPage, "pagination">>> {
    const { args } = ctx;
    // "scheduled" is derived (queued, not yet due), so it is a filter of its own.
    const scheduledOnly = args.state.includes("scheduled");
    const others = args.state.filter((s) => s !== "scheduled");
    if (scheduledOnly && others.length) throw invalidValue("--state", args.state.join(","), "scheduled alone, or a list of stored states");
    const { states, matchesNothing } = parseStates(others);
    const store = await ctx.open({ create: false });
    const health = healthContext(store);
    const page = await store.read(async (tx) =>
      await listJobs(tx, { states, matchesNothing, scheduledOnly, queue: args.queue, tags: args.tag, priorityMin: args["priority-min"], cursor: args.cursor, limit: args.limit }, undefined, health),
    );
    const { pagination, ...data } = page;
    return { data, pagination };
  },
  render({ data, pagination }, ctx) {
    if (data.count === 0) return "no jobs";
    const now = Date.now() / 1000;
    const color = stdoutPaint();
    const rows = data.jobs.map((j) => [
      String(j.id),
      // A running job whose worker is gone says so: "running (worker dead)".
      color.state(j.scheduled ? "scheduled" : j.state) + (j.worker_health && j.worker_health.worker_state !== "live" ? color.red(` (worker ${j.worker_health.worker_state.replace("_", " ")})`) : ""),
      j.queue,
      String(j.priority),
      String(j.attempts_total),
      humanDuration(Math.max(0, now - j.created_at)),
      clip(escapeControl(j.last_error ?? "")),
      clip(formatArgv(j.argv)),
    ]);
    const more = pagination?.truncated ? `\n(more: ${ctx.suggest(rerunCommand("list", ctx.raw.values, { cursor: String(pagination.cursor) }))})` : "";
    return table(["ID", "STATE", "QUEUE", "PRI", "TRIES", "AGE", "LAST ERROR", "COMMAND"], rows) + more;
  },
});
