/**
 * `spoolctl events`: the job ledger. One page after a cursor, a long-poll
 * (`--wait`, docs/contract.md "Long-poll: meta.wait"), or a stream
 * (`--follow`: NDJSON data frames plus one `end` or `error` control frame under
 * `--json`, docs/contract.md "Stream: the NDJSON frames of `events --follow --json`").
 */
import type { VerbResult } from "../contract/envelope.ts";
import { SpoolError } from "../contract/errors.ts";
import type { FlagsDef } from "../contract/flags.ts";
import type { EventsData, EventsFollowFrame } from "../describe/schemas-operator.ts";
import type { JobEvent } from "../model/job.ts";
import { LIMITS } from "../model/limits.ts";
import { parseBatchName } from "../ops/batch.ts";
import type { Store } from "../store/store.ts";
import { eventsPage } from "../store/verbs/events.ts";
import { escapeControl, iso, rerunCommand, table } from "../ui/text.ts";
import { EVENTS_LIMIT, type FollowEnd, followEvents, resolveEventsJob, waitForEvents } from "./events-follow.ts";
import { batchMustExist } from "./job-filters.ts";
import { COMMON_FLAGS, defineVerb, type VerbContext } from "./verb.ts";

const DEFAULT_POLL = 0.1;
const DEFAULT_WAIT = 30;
const MAX_WAIT = 3600;

function line(e: JobEvent): string {
  return `${e.id}  ${iso(e.at)}  job ${e.job_id}  ${e.event}${e.worker_id ? `  ${e.worker_id}` : ""}${e.detail ? `  ${escapeControl(e.detail)}` : ""}`;
}

const FLAGS = {
  ...COMMON_FLAGS,
  "since-id": {
    type: "string",
    description: "only events after this id (meta.pagination.cursor of the previous page)",
    valueHint: "N",
    valueType: "integer",
    default: "0",
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
  },
  job: {
    type: "string",
    description: "only this job's events (id, idempotency key, or last: the newest job)",
    valueHint: "ID",
  },
  batch: {
    type: "string",
    description: "only the events of this batch's jobs (its job log)",
    valueHint: "NAME",
  },
  limit: {
    type: "string",
    description: "at most N events per page",
    valueHint: "N",
    valueType: "integer",
    default: String(EVENTS_LIMIT.default),
    min: EVENTS_LIMIT.min,
    max: EVENTS_LIMIT.max,
  },
  wait: { type: "boolean", description: "block until at least one event exists after the cursor, or --wait-timeout" },
  "wait-timeout": {
    type: "string",
    description: "with --wait: return an empty page after this long",
    valueHint: "DURATION",
    valueType: "duration",
    default: `${DEFAULT_WAIT}s`,
    min: 0,
    max: MAX_WAIT,
  },
  follow: { type: "boolean", description: "stream events as they are appended (NDJSON under --json)" },
  "max-events": {
    type: "string",
    description: "with --follow: end after N events",
    valueHint: "N",
    valueType: "integer",
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
  },
  "idle-timeout": {
    type: "string",
    description: "with --follow: end after this long without an event",
    valueHint: "DURATION",
    valueType: "duration",
    min: 0,
    max: MAX_WAIT * 24,
  },
  "poll-interval": {
    type: "string",
    description: "seconds between two looks at the ledger",
    valueHint: "SECONDS",
    valueType: "number",
    default: String(DEFAULT_POLL),
    min: LIMITS.poll_interval.min,
    max: 60,
  },
} as const satisfies FlagsDef;

type Context = VerbContext<typeof FLAGS>;

/** Flags that only make sense in one mode. */
const MODE_FLAGS = { "wait-timeout": "wait", "max-events": "follow", "idle-timeout": "follow", limit: "page" } as const;

function checkModes(ctx: Context): "page" | "wait" | "follow" {
  const { wait, follow } = ctx.args;
  if (wait && follow)
    throw new SpoolError("INVALID_INPUT", "give --wait or --follow, not both", {
      remediation: "--wait returns one page when records exist; --follow streams",
    });
  const mode = follow ? "follow" : wait ? "wait" : "page";
  for (const [flag, needs] of Object.entries(MODE_FLAGS)) {
    if (!ctx.given(flag as keyof typeof MODE_FLAGS)) continue;
    if (needs === "page" ? mode === "follow" : needs !== mode) {
      throw new SpoolError(
        "INVALID_INPUT",
        `--${flag} ${needs === "page" ? "does not apply with --follow (use --max-events)" : `only applies with --${needs}`}`,
      );
    }
  }
  return mode;
}

async function follow(
  ctx: Context,
  store: Pick<Store, "read" | "watch">,
  jobId: number | undefined,
  batch: string | undefined,
): Promise<number> {
  const { "since-id": sinceId, "poll-interval": pollSeconds } = ctx.args;
  const maxEvents = ctx.args["max-events"] ?? null;
  const idleSeconds = ctx.args["idle-timeout"] ?? null;
  let stop = false;
  const onSignal = () => void (stop = true);
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  let cursor = sinceId;
  let count = 0;
  const write = (frame: EventsFollowFrame) => process.stdout.write(`${JSON.stringify(frame)}\n`);
  try {
    const end: FollowEnd = await followEvents(
      store,
      { sinceId, jobId, ...(batch !== undefined ? { batch } : {}) },
      { maxEvents, idleSeconds, pollSeconds, shouldStop: () => stop },
      (e) => {
        cursor = e.id;
        count++;
        if (ctx.json) write(e);
        else process.stdout.write(`${line(e)}\n`);
      },
    );
    if (ctx.json) write({ control: { type: "end", reason: end, events: count, cursor } });
    return 0;
  } catch (error) {
    if (!ctx.json) throw error;
    const e = error instanceof SpoolError ? error : new SpoolError("INTERNAL", (error as Error).message);
    write({
      control: {
        type: "error",
        reason: "storage_error",
        code: e.code,
        message: e.message,
        exit_code: e.exitCode,
        events: count,
        cursor,
      },
    });
    return e.exitCode;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

export default defineVerb({
  name: "events",
  description:
    "Read the job ledger after a cursor (--since-id). --wait long-polls until records exist; --follow streams them (NDJSON frames with --json).",
  examples: [
    "spoolctl events --limit 100",
    "spoolctl events --json --since-id 120 --wait --wait-timeout 30s",
    "spoolctl events --follow --json --since-id 0 --max-events 10",
    "spoolctl events --follow --job 4 --idle-timeout 5s",
  ],
  flags: FLAGS,
  noArgsHint: "use --job ID for one job's events",
  async run(ctx): Promise<VerbResult<EventsData>> {
    const mode = checkModes(ctx);
    const { "since-id": sinceId, limit, "poll-interval": pollSeconds } = ctx.args;
    const store = await ctx.openAppearing();
    const jobId = await resolveEventsJob(store, ctx.args.job);
    const batch = ctx.args.batch === undefined ? undefined : parseBatchName("--batch", ctx.args.batch);
    if (mode === "follow")
      return { data: { count: 0, events: [] }, streamed: true, exitCode: await follow(ctx, store, jobId, batch) };
    const query = { sinceId, jobId, limit, ...(batch !== undefined ? { batch } : {}) };
    if (mode === "wait") {
      const { page, wait } = await waitForEvents(store, query, ctx.args["wait-timeout"], pollSeconds);
      const { pagination, ...data } = page;
      return { data, pagination, wait: { ...wait } };
    }
    const { pagination, ...data } = await eventsPage(store, query);
    if (data.count === 0 && !ctx.given("since-id")) await batchMustExist(store, batch);
    return { data, pagination };
  },
  render({ data, pagination }, ctx) {
    if (data.count === 0) return "no events";
    const rows = data.events.map((e) => [
      String(e.id),
      iso(e.at),
      String(e.job_id),
      e.event,
      e.worker_id ?? "-",
      escapeControl(e.detail ?? ""),
    ]);
    const full = data.count >= ctx.args.limit;
    const more = full
      ? `\n(more may follow: ${ctx.suggest(rerunCommand("events", ctx.raw.values, { "since-id": String(pagination?.cursor) }))})`
      : "";
    return table(["ID", "AT", "JOB", "EVENT", "WORKER", "DETAIL"], rows) + more;
  },
});
