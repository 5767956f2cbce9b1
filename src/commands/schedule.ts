/**
 * `spoolctl schedule add|list|rm|pause|resume|run-now|tick`, reached as `schedule <action>`
 * (rewritten to `schedule-<action>` by the registry): recurring jobs kept in the queue
 * database and fired by whichever live worker comes first (docs/architecture.md "Recurring jobs").
 */
import type { VerbResult } from "../contract/envelope.ts";
import type { FlagDef } from "../contract/flags.ts";
import type { PausedData, Removed, RunNowData, ScheduleListData, TickData } from "../describe/schemas-recurring.ts";
import { slotText } from "../ops/schedule-time.ts";
import { planSchedule, type ScheduleData, scheduleData } from "../ops/schedules.ts";
import type { SlotRow } from "../store/recurring.ts";
import {
  addSchedule,
  listSchedules,
  pauseSchedule,
  removeSchedule,
  runScheduleNow,
  scheduleDetail,
  tickSchedules,
} from "../store/verbs/schedules.ts";
import { clip, escapeControl, formatArgv, table } from "../ui/text.ts";
import addVerb, { inputFromFlags } from "./add.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";

/** The schedule-name positional of `schedule <action>`. */
function namePositional(action: string, usage = "NAME") {
  return {
    type: "positional",
    description: "the schedule's name",
    valueHint: "NAME",
    required: true,
    noun: "a schedule name",
    hint: `spoolctl schedule ${action} ${usage}  (spoolctl schedule list shows the names)`,
  } as const satisfies FlagDef;
}

// A slot's job has its own key and time; batches and needs belong to one add, not to every slot.
const {
  key: _key,
  after: _after,
  at: _at,
  from: _from,
  cmd: _cmd,
  batch: _batch,
  seal: _seal,
  "fail-fast": _failFast,
  needs: _needs,
  "needs-policy": _needsPolicy,
  name: _jobName,
  ...JOB_FLAGS
} = addVerb.flags;

/** `schedule add`. */
export const add = defineVerb({
  name: "schedule-add",
  aliases: ["schedule add"],
  description:
    "Add a recurring job: at each slot of --cron (in --tz, default UTC) or --every, one live worker adds the job with the key sched:NAME:<slot>, exactly once per slot. Job flags are add's.",
  examples: [
    "spoolctl schedule add nightly --cron '0 3 * * *' --tz Europe/Berlin -- ./backup.sh",
    "spoolctl schedule add poll --every 10m --queue io -- ./poll.sh",
    "spoolctl schedule add report --cron '*/15 * * * *' --catch-up all:4 --overlap queue -c 'make report'",
  ],
  mutates: true,
  flags: {
    ...COMMON_FLAGS,
    name: namePositional("add", "NAME --cron EXPR|--every DURATION -- CMD"),
    cron: {
      type: "string",
      description: "cron expression: minute hour day-of-month month day-of-week (an optional leading seconds field)",
      valueHint: "EXPR",
    },
    every: {
      type: "string",
      description: "a fixed interval: 30s, 10m, 1h, 1d",
      valueHint: "DURATION",
      valueType: "duration",
      min: 1,
      max: 365 * 86400,
    },
    tz: {
      type: "string",
      description: "IANA time zone the cron expression is read in (default UTC)",
      valueHint: "ZONE",
    },
    "catch-up": {
      type: "string",
      description: "slots missed while no worker ran: none, last (one run), or all:N (up to N runs)",
      valueHint: "POLICY",
      default: "last",
    },
    overlap: {
      type: "string",
      description: "a slot while the previous job is active: skip (recorded), queue (runs after it), allow",
      valueHint: "POLICY",
      choices: ["skip", "queue", "allow"],
      default: "skip",
    },
    ...JOB_FLAGS,
    cmd: {
      type: "positional",
      required: false,
      variadic: true,
      afterDashDash: true,
      description: "the command and its arguments (after --)",
      valueHint: "CMD ARGS…",
      hint: "spoolctl schedule add NAME --every 10m -- CMD ARGS…  (or -c 'SHELL STRING')",
    },
  },
  async run(ctx): Promise<VerbResult<ScheduleData>> {
    const text = (k: string) => (typeof ctx.raw.values[k] === "string" ? (ctx.raw.values[k] as string) : undefined);
    const input = {
      name: ctx.args.name,
      cron: text("cron"),
      every: text("every"),
      tz: text("tz"),
      catchUp: text("catch-up"),
      overlap: text("overlap"),
      // The positional NAME is the schedule's, not a job name.
      job: { ...inputFromFlags(ctx.raw, ctx.args.cmd), name: undefined },
    };
    const draft = planSchedule(input, process.cwd());
    return { data: scheduleData(await addSchedule(await ctx.open({ create: true }), draft), null) };
  },
  render({ data }, ctx) {
    return `Added schedule ${data.name} (${data.rule}); next slot ${data.next_fire}. Fired by any live worker: ${ctx.suggest("spoolctl work")}`;
  },
});

/** One row of the `schedule list` table. */
function scheduleRow(s: ScheduleData): string[] {
  const last = s.last_job_id === null ? "-" : `${s.last_job_id} ${s.last_job_state ?? "deleted"}`;
  return [
    s.name,
    // The whole rule is in `schedule list NAME` and --json: a 10 KB cron keeps the table a table.
    clip(escapeControl(s.rule), 60),
    s.paused ? "paused" : (s.next_fire ?? "-"),
    last,
    s.queue,
    `${s.catch_up}/${s.overlap}`,
    clip(formatArgv(s.argv), 60),
  ];
}

/**
 * A slot row's detail in words (the stored detail is JSON: `{"overlap":"skip","active_job":3}`,
 * `{"count":2,"last":…,"catch_up":"all:3"}`); anything else is shown as stored.
 */
export function slotDetailText(r: SlotRow, tz: string | null): string {
  if (r.detail === null) return "";
  let d: Record<string, unknown>;
  try {
    d = JSON.parse(r.detail) as Record<string, unknown>;
  } catch {
    return r.detail;
  }
  if (typeof d.active_job === "number") return `job ${d.active_job} was still queued or running (overlap ${d.overlap})`;
  if (typeof d.count === "number") {
    const through = typeof d.last === "number" && d.count > 1 ? ` through ${slotText(d.last, tz)}` : "";
    return `${d.count} slot${d.count === 1 ? "" : "s"}${through} not fired (catch-up ${d.catch_up})`;
  }
  return r.detail;
}

/** `schedule list [NAME]`. */
export const list = defineVerb({
  name: "schedule-list",
  aliases: ["schedule list"],
  description:
    "The schedules: rule, next slot, last job and its state, policies. With NAME: also its newest slots (fired, skipped, missed, run-now).",
  examples: ["spoolctl schedule list", "spoolctl schedule list nightly --json"],
  flags: {
    ...COMMON_FLAGS,
    name: { ...namePositional("list"), required: false },
  },
  async run(ctx): Promise<VerbResult<ScheduleListData>> {
    const store = await ctx.open({ create: false });
    if (ctx.args.name !== undefined) {
      const { schedule: s, slots } = await scheduleDetail(store, ctx.args.name, 20);
      return { data: { schedules: [scheduleData(s, s.last_job_state)], slots } };
    }
    return { data: { schedules: (await listSchedules(store)).map((s) => scheduleData(s, s.last_job_state)) } };
  },
  render({ data }) {
    if (data.schedules.length === 0) return "No schedules. Add one: spoolctl schedule add NAME --every 10m -- CMD";
    const header = ["NAME", "RULE", "NEXT SLOT", "LAST JOB", "LANE", "CATCH-UP/OVERLAP", "COMMAND"];
    const text = table(header, data.schedules.map(scheduleRow));
    if (!data.slots?.length) return text;
    const tz = data.schedules[0]!.tz;
    const slotRows = data.slots.map((r) => [
      slotText(r.slot, tz),
      r.outcome === "manual" ? "run-now" : r.outcome,
      r.job_id === null ? "-" : String(r.job_id),
      slotDetailText(r, tz),
    ]);
    return `${text}\n\n${table(["SLOT", "OUTCOME", "JOB", "DETAIL"], slotRows)}`;
  },
});

/** `schedule rm NAME`. */
export const rm = defineVerb({
  name: "schedule-rm",
  aliases: ["schedule rm"],
  description: "Delete a schedule; the jobs it made stay.",
  examples: ["spoolctl schedule rm nightly"],
  mutates: true,
  flags: { ...COMMON_FLAGS, name: namePositional("rm") },
  async run(ctx): Promise<VerbResult<Removed>> {
    await removeSchedule(await ctx.open({ create: false }), ctx.args.name);
    return { data: { name: ctx.args.name, removed: true } };
  },
  render({ data }) {
    return `Removed schedule ${data.name}; its jobs stay`;
  },
});

/** `schedule pause|resume NAME`. */
function pauseVerb(action: "pause" | "resume") {
  return defineVerb({
    name: `schedule-${action}`,
    aliases: [`schedule ${action}`],
    description:
      action === "pause"
        ? "Pause a schedule: no slot fires until it is resumed."
        : "Resume a paused schedule from its next slot after now (slots passed while paused are not caught up).",
    examples: [`spoolctl schedule ${action} nightly`],
    mutates: true,
    flags: { ...COMMON_FLAGS, name: namePositional(action) },
    async run(ctx): Promise<VerbResult<PausedData>> {
      const { schedule: s, changed } = await pauseSchedule(
        await ctx.open({ create: false }),
        ctx.args.name,
        action === "pause",
      );
      return { data: { schedule: scheduleData(s, s.last_job_state), changed } };
    },
    render({ data }) {
      const s = data.schedule;
      if (!data.changed) return `Schedule ${s.name} was already ${action === "pause" ? "paused" : "running"}`;
      return action === "pause" ? `Paused schedule ${s.name}` : `Resumed schedule ${s.name}; next slot ${s.next_fire}`;
    },
  });
}

/** `schedule pause NAME`. */
export const pause = pauseVerb("pause");
/** `schedule resume NAME`. */
export const resume = pauseVerb("resume");

/** `schedule run-now NAME`. */
export const runNow = defineVerb({
  name: "schedule-run-now",
  aliases: ["schedule run-now"],
  description: "Add the schedule's job now, outside its slots (key sched:NAME:manual:<time>); its slots are unchanged.",
  examples: ["spoolctl schedule run-now nightly"],
  mutates: true,
  flags: { ...COMMON_FLAGS, name: namePositional("run-now") },
  async run(ctx): Promise<VerbResult<RunNowData>> {
    const { name } = ctx.args;
    const job = await runScheduleNow(await ctx.open({ create: false }), name);
    return { data: { name, job_id: job.id, key: job.idempotency_key!, queue: job.queue } };
  },
  render({ data }, ctx) {
    return `Added job ${data.job_id} for schedule ${data.name} (key ${data.key}); ${ctx.suggest(`spoolctl wait ${data.job_id}`)}`;
  },
});

/** `schedule tick`. */
export const tick = defineVerb({
  name: "schedule-tick",
  aliases: ["schedule tick"],
  description:
    "Run one due-slot pass and exit: fire every schedule whose slot is due, as a worker would. For hosts where no worker runs (a crontab line, a CI schedule); safe beside workers.",
  examples: ["spoolctl schedule tick", "* * * * * spoolctl schedule tick --db /srv/q.db   # a crontab line"],
  mutates: true,
  flags: { ...COMMON_FLAGS },
  async run(ctx): Promise<VerbResult<TickData>> {
    const { outcomes } = await tickSchedules(await ctx.open({ create: false }));
    return { data: { outcomes } };
  },
  render({ data }) {
    if (data.outcomes.length === 0) return "No slot was due";
    return data.outcomes
      .map((o) => {
        const slot = slotText(o.slot, null);
        if (o.outcome === "fired") return `${o.schedule} ${slot}: added job ${o.job_id}`;
        if (o.outcome === "missed") return `${o.schedule} ${slot}: ${o.count} slot(s) missed (catch-up policy)`;
        return `${o.schedule} ${slot}: ${o.outcome}`;
      })
      .join("\n");
  },
});
