/**
 * `spoolctl hook add|list|rm`, reached as `hook <action>`: outcome hooks, jobs the store adds
 * in the transaction that ends a matching job (docs/architecture.md "Hooks").
 */
import type { VerbResult } from "../contract/envelope.ts";
import type { Warning } from "../contract/errors.ts";
import type { FlagDef } from "../contract/flags.ts";
import type { HookListData, Removed } from "../describe/schemas-recurring.ts";
import { HOOK_LANE, type HookData, hookData, planHook } from "../ops/hooks.ts";
import { workerLanes } from "../ops/lanes.ts";
import { staleAfter } from "../ops/workers.ts";
import { addHook, listHooks, removeHook } from "../store/verbs/hooks.ts";
import { workerList } from "../store/verbs/workers.ts";
import { clip, formatArgv } from "../ui/text.ts";
import addVerb, { inputFromFlags } from "./add.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";
import { healthContext, judgeRecord } from "./workers.ts";

/** The hook-name positional. */
function namePositional(action: string, usage = "NAME") {
  return {
    type: "positional",
    description: "the hook's name",
    valueHint: "NAME",
    required: true,
    noun: "a hook name",
    hint: `spoolctl hook ${action} ${usage}  (spoolctl hook list shows the names)`,
  } as const satisfies FlagDef;
}

const f = addVerb.flags;

/** `hook add`. */
export const add = defineVerb({
  name: "hook-add",
  aliases: ["hook add"],
  description: `Add an outcome hook: when a job matching --queue/--tag ends in the --on outcome, the same transaction adds the hook's job (lane ${HOOK_LANE}), retried and triaged like any job. The ended job is described in SPOOLCTL_HOOK_* environment variables only, never in the command line. --on batch-done fires once when a sealed batch has no job queued or running (SPOOLCTL_HOOK_BATCH, SPOOLCTL_HOOK_STATE done|failed, SPOOLCTL_HOOK_BATCH_DONE/_DEAD/_CANCELED/_TOTAL); it takes no --queue/--tag.`,
  examples: [
    "spoolctl hook add page --on dead -c 'notify-send \"job $SPOOLCTL_HOOK_JOB_ID died: exit $SPOOLCTL_HOOK_EXIT_CODE\"'",
    "spoolctl hook add publish --on done --queue builds --tag release=1 -- ./publish.sh",
    "spoolctl hook add report --on batch-done -c 'echo \"$SPOOLCTL_HOOK_BATCH: $SPOOLCTL_HOOK_STATE, $SPOOLCTL_HOOK_BATCH_DEAD dead\"'",
  ],
  mutates: true,
  flags: {
    ...COMMON_FLAGS,
    name: namePositional("add", "NAME --on dead|done|canceled|batch-done -- CMD"),
    on: {
      type: "string",
      description: "the outcome: a job's done, dead or canceled, or batch-done (a sealed batch's last job ended)",
      valueHint: "OUTCOME",
      choices: ["done", "dead", "canceled", "batch-done"],
      required: true,
    },
    queue: {
      type: "string",
      description: "only jobs of this lane (default: any; not with --on batch-done)",
      valueHint: "NAME",
      format: "lane",
    },
    tag: {
      type: "string",
      description: "only jobs with this tag (not with --on batch-done)",
      valueHint: "K=V",
      valueType: "pair",
    },
    "run-queue": {
      type: "string",
      description: "the lane the hook's job runs in",
      valueHint: "NAME",
      format: "lane",
      default: HOOK_LANE,
    },
    command: f.command,
    timeout: f.timeout,
    "max-retries": f["max-retries"],
    "max-crashes": f["max-crashes"],
    priority: f.priority,
    cwd: f.cwd,
    env: f.env,
    note: f.note,
    cmd: {
      type: "positional",
      required: false,
      variadic: true,
      afterDashDash: true,
      description: "the hook's command and its arguments (after --)",
      valueHint: "CMD ARGS…",
      hint: "spoolctl hook add NAME --on dead -- CMD ARGS…  (or -c 'SHELL STRING')",
    },
  },
  async run(ctx): Promise<VerbResult<HookData>> {
    const text = (k: string) => (typeof ctx.raw.values[k] === "string" ? (ctx.raw.values[k] as string) : undefined);
    // NAME is the hook's, not a job name.
    const { queue: _q, tag: _t, name: _n, ...job } = inputFromFlags(ctx.raw, ctx.args.cmd);
    const input = {
      name: ctx.args.name,
      on: ctx.args.on,
      queue: text("queue"),
      tag: text("tag"),
      runQueue: text("run-queue"),
      job,
    };
    const draft = planHook(input, process.cwd());
    const store = await ctx.open({ create: true });
    const data = hookData(await addHook(store, draft));
    // Plain `spoolctl work` serves lane default only: a hook nobody runs is said loudly, not found out later.
    const health = healthContext(store);
    const workers = await workerList(store, judgeRecord, 100, staleAfter(health));
    const served = workers.some((w) => {
      if (w.status !== "live") return false;
      const lanes = workerLanes(w.queue);
      return lanes === "all" || lanes.includes(data.run_queue);
    });
    const start = ctx.suggest(`spoolctl work --queue ${data.run_queue}`);
    const warnings: Warning[] = served
      ? []
      : [
          {
            code: "HOOK_UNSERVED",
            message: `no live worker serves lane ${data.run_queue}: nothing will run this hook's jobs, which wait queued there, until one does (start one: ${start}, or spoolctl work --all-lanes)`,
          },
        ];
    return { data, warnings };
  },
  render({ data }, ctx) {
    if (data.on === "batch-done")
      return `Added hook ${data.name}: a job in lane ${data.run_queue} once each batch finishes (sealed, no job queued or running). Run it with a worker of that lane: ${ctx.suggest(`spoolctl work --queue ${data.run_queue}`)}`;
    return `Added hook ${data.name}: a job in lane ${data.run_queue} when a job${data.queue ? ` of lane ${data.queue}` : ""}${data.tag ? ` tagged ${data.tag}` : ""} ends ${data.on}. Run it with a worker of that lane: ${ctx.suggest(`spoolctl work --queue ${data.run_queue}`)}`;
  },
});

/** `hook list`. */
export const list = defineVerb({
  name: "hook-list",
  aliases: ["hook list"],
  description: "The outcome hooks: the outcome, the filters, the lane and command of the hook's job.",
  examples: ["spoolctl hook list", "spoolctl hook list --json"],
  flags: { ...COMMON_FLAGS },
  async run(ctx): Promise<VerbResult<HookListData>> {
    return { data: { hooks: (await listHooks(await ctx.open({ create: false }))).map(hookData) } };
  },
  render({ data }) {
    if (data.hooks.length === 0) return "No hooks. Add one: spoolctl hook add NAME --on dead -- CMD";
    return data.hooks
      .map(
        (h) =>
          `${h.name}  on ${h.on}${h.queue ? `  lane ${h.queue}` : ""}${h.tag ? `  tag ${h.tag}` : ""}  runs in ${h.run_queue}: ${clip(formatArgv(h.argv), 60)}`,
      )
      .join("\n");
  },
});

/** `hook rm NAME`. */
export const rm = defineVerb({
  name: "hook-rm",
  aliases: ["hook rm"],
  description: "Delete an outcome hook; jobs it added stay.",
  examples: ["spoolctl hook rm page"],
  mutates: true,
  flags: { ...COMMON_FLAGS, name: namePositional("rm") },
  async run(ctx): Promise<VerbResult<Removed>> {
    await removeHook(await ctx.open({ create: false }), ctx.args.name);
    return { data: { name: ctx.args.name, removed: true } };
  },
  render({ data }) {
    return `Removed hook ${data.name}`;
  },
});
