/**
 * The lane verbs (docs/architecture.md "Lanes and slots"): `pause LANE`,
 * `resume LANE` (also `lane pause`, `lane resume`), `lane list` and
 * `lane set LANE --slots N|none`.
 */
import type { VerbResult } from "../contract/envelope.ts";
import type { Warning } from "../contract/errors.ts";
import type { LaneListData } from "../describe/schemas-lanes.ts";
import { LIMITS } from "../model/limits.ts";
import { type LaneSetData, type PauseData, parseLaneSlots, type ResumeData } from "../ops/lanes.ts";
import { durationText } from "../ops/values.ts";
import { staleAfter } from "../ops/workers.ts";
import { laneList } from "../store/verbs/lane-reads.ts";
import { pauseLane, resumeLane, setLaneSlots } from "../store/verbs/lanes.ts";
import { iso, table } from "../ui/text.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";
import { healthContext, judgeRecord } from "./workers.ts";

/** The LANE positional of the lane verbs. */
function lanePositional(verb: string) {
  return {
    type: "positional",
    description: "the lane's name (the --queue jobs were added with)",
    valueHint: "LANE",
    format: "lane",
    required: true,
    noun: "a lane",
    hint: `spoolctl ${verb} LANE  (spoolctl lane list shows lanes)`,
  } as const;
}

/** `pause LANE [--for DURATION] [--reason TEXT]`. */
export const pause = defineVerb({
  name: "pause",
  aliases: ["lane pause"],
  description:
    "Pause a lane, fleet-wide and durably: once the pause commits no job of the lane starts on any worker or host; running jobs finish. --for ends it by itself (on the queue's clock); otherwise spoolctl resume LANE. A restart never undoes it.",
  examples: [
    "spoolctl pause deploy --reason 'release freeze'",
    "spoolctl pause builds --for 30m",
    "spoolctl lane pause builds --json",
  ],
  mutates: true,
  flags: {
    ...COMMON_FLAGS,
    lane: lanePositional("pause"),
    for: {
      type: "string",
      description: "end the pause by itself after this long (30, 90s, 5m, 2h, 1d)",
      valueHint: "DURATION",
      valueType: "duration",
      min: 1,
      max: LIMITS.timeout_seconds.max,
    },
    reason: { type: "string", description: "why, shown wherever the pause is said", valueHint: "TEXT" },
  },
  async run(ctx): Promise<VerbResult<PauseData>> {
    const store = await ctx.open({ create: true });
    const data = await pauseLane(store, ctx.args.lane, ctx.args.for ?? null, ctx.args.reason ?? null);
    const warnings: Warning[] = [];
    if (data.replaced) {
      const r = data.replaced;
      const was = `${r.reason ? ` (${r.reason})` : ""}${r.paused_until === null ? " until resumed" : ` until ${iso(r.paused_until, false)}`}`;
      warnings.push({
        code: "PAUSE_REPLACED",
        message: `lane ${data.queue} was already paused${was}: this pause replaces it`,
      });
    }
    if (data.unknown_lane) warnings.push(unknownLane(data.queue, data.unknown_lane.lanes_in_use, "paused"));
    return { data, warnings };
  },
  render({ data }, ctx) {
    const until =
      data.paused_until === null
        ? `until spoolctl resume ${data.queue}`
        : `for ${durationText(Math.round(data.paused_until - data.paused_at))} (until ${iso(data.paused_until, false)})`;
    const left = `${data.running} running job(s) finish; ${data.queued} queued job(s) wait`;
    return ctx.suggest(
      `Paused lane ${data.queue}${data.reason ? ` (${data.reason})` : ""} ${until}: no job of it starts on any worker; ${left}`,
    );
  },
});

/** `resume LANE`. */
export const resume = defineVerb({
  name: "resume",
  aliases: ["lane resume"],
  description: "End a lane's pause: its queued jobs may start again at once on the workers that serve it.",
  examples: ["spoolctl resume deploy", "spoolctl lane resume builds --json"],
  mutates: true,
  flags: { ...COMMON_FLAGS, lane: lanePositional("resume") },
  async run(ctx): Promise<VerbResult<ResumeData>> {
    return { data: await resumeLane(await ctx.open({ create: false }), ctx.args.lane) };
  },
  render({ data }) {
    return data.was_paused
      ? `Resumed lane ${data.queue}: ${data.queued} queued job(s) may start`
      : `Lane ${data.queue} was not paused; nothing changed`;
  },
});

/** `lane list`. */
export const list = defineVerb({
  name: "lane-list",
  aliases: ["lane list"],
  description:
    "List lanes: queued and running jobs, the lane's slot ceiling, whether it is paused (why, until when), and how many live workers serve it.",
  examples: ["spoolctl lane list", "spoolctl lane list --json"],
  flags: { ...COMMON_FLAGS },
  async run(ctx): Promise<VerbResult<LaneListData>> {
    const store = await ctx.open({ create: false });
    const health = healthContext(store);
    const lanes = await laneList(store, judgeRecord, staleAfter(health));
    return { data: { count: lanes.length, lanes } };
  },
  render({ data }, ctx) {
    if (data.lanes.length === 0) return "No lanes yet: spoolctl add --queue LANE -- CMD makes one";
    const now = Date.now() / 1000;
    const rows = data.lanes.map((l) => [
      l.queue,
      String(l.queued),
      String(l.running),
      l.slots === null ? "-" : String(l.slots),
      l.paused
        ? `PAUSED${l.pause_reason ? ` (${l.pause_reason})` : ""}${l.paused_until === null ? "" : ` ${durationText(Math.max(1, Math.ceil(l.paused_until - now)))} left`}`
        : "no",
      String(l.workers),
    ]);
    const lines = [table(["LANE", "QUEUED", "RUNNING", "SLOTS", "PAUSED", "WORKERS"], rows)];
    const unserved = data.lanes.filter((l) => l.workers === 0 && l.queued > 0 && !l.paused);
    for (const l of unserved)
      lines.push(
        ctx.suggest(
          `lane ${l.queue} has ${l.queued} queued job(s) and no live worker: spoolctl work${l.queue === "default" ? "" : ` --queue ${l.queue}`}`,
        ),
      );
    return lines.join("\n");
  },
});

/** `LANE_UNKNOWN`: a setting for a lane nothing names yet, with the lanes in use (a typo is the likely cause). */
function unknownLane(lane: string, inUse: string[], what: "paused" | "set"): Warning {
  const known = inUse.length === 0 ? "no lane is in use yet" : `lanes in use: ${inUse.join(", ")}`;
  const undo = what === "paused" ? `spoolctl resume ${lane}` : `spoolctl lane set ${lane} --slots none`;
  return {
    code: "LANE_UNKNOWN",
    message: `no job, setting or worker names lane ${lane} (${known}): ${what} anyway, for its first jobs; if it is a typo, ${undo} undoes it`,
  };
}

/** `lane set LANE --slots N|none`. */
export const set = defineVerb({
  name: "lane-set",
  aliases: ["lane set"],
  description:
    "Set a lane's fleet-wide ceiling of running jobs, read by every claim: running workers follow it at once, and it wins over their --slots. --slots none clears it.",
  examples: ["spoolctl lane set builds --slots 4", "spoolctl lane set builds --slots none"],
  mutates: true,
  flags: {
    ...COMMON_FLAGS,
    lane: lanePositional("lane set"),
    slots: {
      type: "string",
      description: `fleet-wide ceiling of the lane's running jobs (${LIMITS.slots.min}-${LIMITS.slots.max}), or none to clear it`,
      valueHint: "N|none",
      required: true,
      noun: "a ceiling",
      hint: "spoolctl lane set LANE --slots N   (none clears it)",
    },
  },
  async run(ctx): Promise<VerbResult<LaneSetData>> {
    const slots = parseLaneSlots(ctx.args.slots);
    const data = await setLaneSlots(await ctx.open({ create: true }), ctx.args.lane, slots);
    return {
      data,
      warnings: data.unknown_lane ? [unknownLane(data.queue, data.unknown_lane.lanes_in_use, "set")] : [],
    };
  },
  render({ data }) {
    return data.slots === null
      ? `Lane ${data.queue} has no ceiling of its own now (workers' --slots apply); ${data.running} running`
      : `Lane ${data.queue}: at most ${data.slots} running job(s) fleet-wide, whatever the workers' --slots; ${data.running} running now`;
  },
});
