/** `spoolctl list` (SPEC §5): jobs newest first, with filters and paging. */
import { SpoolError, invalidValue } from "../contract/errors.ts";
import { LIST_LIMIT, listJobs, parseStates, type ListPage } from "../ops/jobs.ts";
import { LIMITS } from "../ops/limits.ts";
import { JOB_STATES } from "../store/model.ts";
import { parseInteger, parseLane, parsePairs } from "../ops/values.ts";
import { stdoutPaint } from "../ui/color.ts";
import { escapeControl, formatArgv, humanDuration, rerunCommand, table } from "../ui/text.ts";
import { COMMON_FLAGS, defineVerb, list, str } from "./verb.ts";

export default defineVerb<Omit<ListPage, "pagination">>({
  name: "list",
  description: "List jobs, newest first.",
  examples: ["spoolctl list", "spoolctl list --state dead --queue builds", "spoolctl list --tag ci=1 --limit 10 --json", "spoolctl list --cursor 120   # the page after id 120"],
  flags: {
    ...COMMON_FLAGS,
    state: { type: "string", repeatable: true, description: "queued, running, done, dead, canceled, or scheduled (queued, not yet due); QueueCTL pending, processing, completed; failed is reserved and matches nothing; comma-separated or repeated", valueHint: "STATE", choices: [...JOB_STATES, "scheduled", "failed", "pending", "processing", "completed"] },
    queue: { type: "string", description: "only this lane", valueHint: "NAME" },
    tag: { type: "string", repeatable: true, description: "only jobs with this tag", valueHint: "K=V" },
    "priority-min": { type: "string", description: "only jobs with at least this priority", valueHint: "N", min: LIMITS.priority.min, max: LIMITS.priority.max },
    limit: { type: "string", description: `at most N jobs (${LIST_LIMIT.min}-${LIST_LIMIT.max})`, valueHint: "N", default: String(LIST_LIMIT.default), min: LIST_LIMIT.min, max: LIST_LIMIT.max },
    cursor: { type: "string", description: "show jobs older than this id (meta.pagination.cursor of the previous page)", valueHint: "ID", valueType: "integer", min: 1 },
  },
  async run(ctx) {
    const f = ctx.flags;
    const extra = [...f.positionals, ...(f.rest ?? [])];
    if (extra.length) throw new SpoolError("INVALID_INPUT", `list takes no arguments (got ${JSON.stringify(extra.join(" "))})`, { remediation: "filter with --state, --queue, --tag" });
    // "scheduled" is derived (queued, not yet due), so it is a filter of its own.
    const stateArgs = list(f, "state").flatMap((s) => s.split(","));
    const scheduledOnly = stateArgs.some((s) => s.trim().toLowerCase() === "scheduled");
    const others = stateArgs.filter((s) => s.trim().toLowerCase() !== "scheduled");
    if (scheduledOnly && others.length) throw invalidValue("--state", stateArgs.join(","), "scheduled alone, or a list of stored states");
    const { states, matchesNothing } = parseStates(others);
    const queue = str(f, "queue");
    const pmin = str(f, "priority-min");
    const cursor = str(f, "cursor");
    const page = await (await ctx.open({ create: false })).read(async (tx) =>
      await listJobs(tx, {
        states,
        matchesNothing,
        scheduledOnly,
        queue: queue === undefined ? undefined : parseLane("--queue", queue),
        tags: parsePairs("--tag", list(f, "tag"), /^.+$/, "non-empty"),
        priorityMin: pmin === undefined ? undefined : parseInteger("--priority-min", pmin, LIMITS.priority.min, LIMITS.priority.max),
        cursor: cursor === undefined ? undefined : parseInteger("--cursor", cursor, 1, Number.MAX_SAFE_INTEGER),
        limit: parseInteger("--limit", str(f, "limit") ?? String(LIST_LIMIT.default), LIST_LIMIT.min, LIST_LIMIT.max),
      }),
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
      color.state(j.scheduled ? "scheduled" : j.state),
      j.queue,
      String(j.priority),
      String(j.attempts_total),
      humanDuration(Math.max(0, now - j.created_at)),
      escapeControl(j.last_error ?? ""),
      formatArgv(j.argv),
    ]);
    const more = pagination?.truncated ? `\n(more: ${rerunCommand("list", ctx.flags.values, { cursor: String(pagination.cursor) })})` : "";
    return table(["ID", "STATE", "QUEUE", "PRI", "TRIES", "AGE", "LAST ERROR", "COMMAND"], rows) + more;
  },
});
