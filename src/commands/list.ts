/** `spoolctl list`: jobs newest first, with filters and paging (docs/contract.md "Paging: meta.pagination"). */
import type { VerbResult } from "../contract/envelope.ts";
import { invalidValue } from "../contract/errors.ts";
import type { ListData } from "../describe/schemas-core.ts";
import { JOB_STATES } from "../model/job.ts";
import { LIMITS } from "../model/limits.ts";
import { LIST_LIMIT, parseStates } from "../ops/jobs.ts";
import { selectionFilter } from "../ops/triage-groups.ts";
import { workerStateWord } from "../ops/worker-health.ts";
import { listJobs, SEARCH_WINDOW } from "../store/verbs/jobs.ts";
import { failureGroups } from "../store/verbs/triage.ts";
import { stdoutPaint } from "../ui/color.ts";
import { originTag } from "../ui/origin.ts";
import {
  clip,
  clipColumns,
  clipLine,
  escapeControl,
  formatArgv,
  humanDuration,
  lineRoom,
  rerunCommand,
  table,
} from "../ui/text.ts";
import { renderGroups } from "../ui/triage-groups-text.ts";
import { batchMustExist, jobFilterFlags, jobSelectionOf } from "./job-filters.ts";
import { pausedJobWarnings } from "./lane-notices.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";
import { healthContext } from "./workers.ts";

export default defineVerb({
  name: "list",
  description: "List jobs, newest first.",
  examples: [
    "spoolctl list",
    "spoolctl list --state dead --queue builds",
    "spoolctl list --tag ci=1 --limit 10 --json",
    "spoolctl list --cursor 120   # the page after id 120",
    "spoolctl list --state dead --group   # dead jobs grouped by failure, largest group first",
    "spoolctl list --state dead --failure-reason timeout --since 1h --match 'curl *'",
  ],
  flags: {
    ...COMMON_FLAGS,
    state: {
      type: "string",
      repeatable: true,
      separator: ",",
      looseChoices: true,
      valueHint: "STATE",
      choices: [...JOB_STATES, "scheduled", "held", "failed", "pending", "processing", "completed"],
      description:
        "queued, running, done, dead, canceled, scheduled (queued, not yet due) or held (queued, kept from starting by hold); QueueCTL pending, processing, completed; failed is reserved and matches nothing; comma-separated or repeated",
    },
    ...jobFilterFlags(),
    group: {
      type: "boolean",
      description:
        "group dead (and canceled) jobs by failure signature, largest first, with their job ids (--state dead or canceled; no paging)",
    },
    "priority-min": {
      type: "string",
      description: "only jobs with at least this priority",
      valueHint: "N",
      valueType: "integer",
      min: LIMITS.priority.min,
      max: LIMITS.priority.max,
    },
    limit: {
      type: "string",
      description: `at most N jobs (${LIST_LIMIT.min}-${LIST_LIMIT.max})`,
      valueHint: "N",
      valueType: "integer",
      default: String(LIST_LIMIT.default),
      min: LIST_LIMIT.min,
      max: LIST_LIMIT.max,
    },
    cursor: {
      type: "string",
      description: "show jobs older than this id (meta.pagination.cursor of the previous page)",
      valueHint: "ID",
      valueType: "integer",
      min: 1,
      max: Number.MAX_SAFE_INTEGER,
    },
  },
  noArgsHint: "filter with --state, --queue, --tag",
  async run(ctx): Promise<VerbResult<ListData>> {
    const { args } = ctx;
    // "scheduled" and "held" are derived (queued, not yet due; queued, held), so each is a filter of its own.
    const scheduledOnly = args.state.includes("scheduled");
    const heldOnly = args.state.includes("held");
    const others = args.state.filter((s) => s !== "scheduled" && s !== "held");
    if ((scheduledOnly || heldOnly) && (others.length || (scheduledOnly && heldOnly)))
      throw invalidValue("--state", args.state.join(","), "scheduled or held alone, or a list of stored states");
    const { states: parsed, matchesNothing } = parseStates(others);
    const states = heldOnly ? (["queued"] as typeof parsed) : parsed;
    if (args.group) {
      const wrong = states.filter((st) => st !== "dead" && st !== "canceled");
      if (scheduledOnly || heldOnly || wrong.length || matchesNothing)
        throw invalidValue(
          "--state",
          args.state.join(","),
          "dead and/or canceled with --group (failure groups are of failed jobs)",
        );
      const store = await ctx.open({ create: false });
      const groups = await failureGroups(store, jobSelectionOf(args), states.length ? states : ["dead", "canceled"]);
      if (groups.length === 0) await batchMustExist(store, jobSelectionOf(args).batch);
      return { data: { count: groups.length, job_count: groups.reduce((n, g) => n + g.count, 0), groups } };
    }
    const store = await ctx.open({ create: false });
    const health = healthContext(store);
    const selection = selectionFilter(jobSelectionOf(args), store.now());
    const page = await listJobs(
      store,
      {
        ...selection,
        tags: args.tag,
        states,
        matchesNothing,
        scheduledOnly,
        ...(heldOnly ? { held: true } : {}),
        priorityMin: args["priority-min"],
        cursor: args.cursor,
        limit: args.limit,
      },
      health,
    );
    const { pagination, ...data } = page;
    if (data.count === 0) await batchMustExist(store, selection.batch);
    // Queued jobs of a paused lane would otherwise look like jobs waiting for a worker.
    return { data, pagination, warnings: await pausedJobWarnings(store, data.jobs) };
  },
  render({ data, pagination }, ctx) {
    if ("groups" in data)
      return renderGroups(data.groups, process.stdout.isTTY ? process.stdout.columns || 100 : Infinity);
    const more = pagination?.truncated
      ? `\n(more: ${ctx.suggest(rerunCommand("list", ctx.raw.values, { cursor: String(pagination.cursor) }))})`
      : "";
    if (data.count === 0)
      return pagination?.searched_to !== undefined && pagination.truncated
        ? `no jobs among ids ${pagination.searched_to} and up (a search reads ${SEARCH_WINDOW.toLocaleString("en-US")} ids a page)${more}`
        : "no jobs";
    const now = Date.now() / 1000;
    const color = stdoutPaint();
    // At a terminal one job is one line: the error gets at most 40 columns, the command what is left.
    const room = lineRoom();
    const rows = data.jobs.map((j) => [
      String(j.id),
      // A running job whose worker is gone says so: "running (worker dead)".
      color.state(j.held ? "held" : j.scheduled ? "scheduled" : j.state) +
        (j.worker_health && j.worker_health.worker_state !== "live"
          ? color.red(` (worker ${workerStateWord(j.worker_health)})`)
          : ""),
      j.queue,
      String(j.priority),
      String(j.attempts_total),
      humanDuration(Math.max(0, now - j.created_at)),
      // A job waiting for others says on which, where a failed one says why.
      clipColumns(
        clip(j.waiting_on.length > 0 ? `waits on ${j.waiting_on.join(",")}` : escapeControl(j.last_error ?? "")),
        room === Infinity ? Infinity : 40,
      ),
      clip(originTag(j.idempotency_key) + formatArgv(j.argv)),
    ]);
    // A NAME column only when a job on the page has one (add --name): unnamed queues keep their width.
    const named = data.jobs.some((j) => j.name !== null);
    const headers = ["ID", "STATE", "QUEUE", "PRI", "TRIES", "AGE", "LAST ERROR", "COMMAND"];
    if (named) {
      headers.splice(2, 0, "NAME");
      rows.forEach((r, i) => {
        r.splice(2, 0, clipColumns(escapeControl(data.jobs[i]!.name ?? ""), room === Infinity ? Infinity : 32));
      });
    }
    const lines = table(headers, rows).split("\n");
    return lines.map((l) => clipLine(l, room)).join("\n") + more;
  },
});
