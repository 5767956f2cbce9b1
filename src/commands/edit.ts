/**
 * `spoolctl edit ID` and `spoolctl priority ID N` (docs/architecture.md
 * "Editing a job"): change a queued or held job before it starts — its
 * command (`edit ID -- CMD`), env, cwd, lane, priority, timeout, retries or
 * due time by flags, or its JSON in $EDITOR at a terminal; one guarded
 * transaction that refuses a job that started meanwhile.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { VerbResult } from "../contract/envelope.ts";
import { SpoolError } from "../contract/errors.ts";
import type { EditData } from "../describe/schemas-edits.ts";
import { LIMITS } from "../model/limits.ts";
import { editDocument, parseEditedDocument, parseJobEdit } from "../ops/edit.ts";
import { summarize } from "../ops/jobs.ts";
import { editJob } from "../store/verbs/edit.ts";
import { resolveJobs } from "../store/verbs/jobs.ts";
import { DELAY_VALUE, PRIORITY_VALUE, RETRIES_VALUE, TIME_VALUE, TIMEOUT_VALUE } from "./setting-flags.ts";
import { COMMON_FLAGS, defineVerb, jobIdPositional } from "./verb.ts";

/** The flags that change a field (any of them given: no $EDITOR). */
const CHANGE_FLAGS = ["command", "env", "cwd", "queue", "priority", "timeout", "max-retries", "after", "at"] as const;

/** How a result reads: what changed, or that nothing did. */
function renderEdit(data: EditData): string {
  if (data.changed.length === 0) return `job ${data.job.id}: nothing changed (every value already was so)`;
  return `Edited job ${data.job.id}: ${data.changed.join(", ")}`;
}

/** Opens `text` in $VISUAL / $EDITOR (else vi) at the terminal; returns the file as saved. Raises `INVALID_INPUT` when the editor fails. */
async function runEditor(text: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "spoolctl-edit-"));
  const file = join(dir, "job.json");
  try {
    writeFileSync(file, text, { mode: 0o600 });
    const editor = process.env.VISUAL || process.env.EDITOR || "vi";
    // Through sh: $EDITOR may carry arguments ("code --wait").
    const proc = Bun.spawn(["sh", "-c", `${editor} "$1"`, "sh", file], { stdio: ["inherit", "inherit", "inherit"] });
    const code = await proc.exited;
    if (code !== 0)
      throw new SpoolError("INVALID_INPUT", `the editor (${editor}) exited with ${code}; nothing changed`, {
        remediation: "save and quit the editor normally, or give the change as flags (spoolctl edit --help)",
      });
    return readFileSync(file, "utf8");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `spoolctl edit`. */
export const edit = defineVerb({
  name: "edit",
  description:
    "Change a queued or held job before it starts: its command (after --), env, cwd, lane, priority, timeout, retries or due time. At a terminal with no change given, opens its JSON in $EDITOR. Refused (CONFLICT, exit 5) once the job has started.",
  examples: [
    "spoolctl edit 3 -- ./build.sh --fast",
    "spoolctl edit 3 --priority 10 --queue gpu --timeout 1h",
    "spoolctl edit 3 --env DEBUG=1 --after 10m",
    "spoolctl edit 3            # at a terminal: edit its JSON in $EDITOR",
  ],
  mutates: true,
  flags: {
    ...COMMON_FLAGS,
    command: {
      type: "string",
      alias: "c",
      description: "a new shell string: stored as [sh, -c, STRING]",
      valueHint: "STRING",
    },
    env: {
      type: "string",
      repeatable: true,
      description: "set a variable (added or replaced; the job's others stay)",
      valueHint: "K=V",
      valueType: "pair",
    },
    cwd: {
      type: "string",
      description: "new working directory (made absolute now)",
      valueHint: "DIR",
      valueType: "path",
    },
    queue: { type: "string", description: "move it to this lane", valueHint: "NAME", format: "lane" },
    priority: {
      ...PRIORITY_VALUE,
      description: "new priority (higher runs first)",
    },
    timeout: {
      ...TIMEOUT_VALUE,
      description: "new time limit, or none",
    },
    "max-retries": {
      ...RETRIES_VALUE,
      description: "new retry budget",
    },
    after: {
      ...DELAY_VALUE,
      description: "due this long from now: 30, 90s, 5m, 2h, 1d (0: now)",
    },
    at: {
      ...TIME_VALUE,
      description: "due at this time: epoch seconds or ISO-8601",
    },
    id: jobIdPositional("edit"),
    cmd: {
      type: "positional",
      required: false,
      variadic: true,
      afterDashDash: true,
      description: "the new command and its arguments (after --)",
      valueHint: "CMD ARGS…",
      hint: "spoolctl edit ID -- CMD ARGS…",
    },
  },
  async run(ctx): Promise<VerbResult<EditData>> {
    const { args } = ctx;
    const store = await ctx.open({ create: false });
    const cwd = process.cwd();
    const text = (name: string) => {
      const v = ctx.raw.values[name];
      return typeof v === "string" ? v : undefined;
    };
    const flagged = args.cmd.length > 0 || CHANGE_FLAGS.some((k) => ctx.given(k));
    if (!flagged && ctx.interactive && !ctx.json) {
      const [job] = await resolveJobs(store, [args.id]);
      const saved = await runEditor(editDocument(job!));
      const change = parseEditedDocument(saved, cwd);
      // The attempt number shown guards the write: a job that ran meanwhile is refused.
      const out = await editJob(store, String(job!.id), change, job!.last_attempt_no);
      return { data: { job: summarize(out.job, store.now()), changed: out.changed } };
    }
    const input = {
      argv: args.cmd.length ? args.cmd : undefined,
      command: text("command"),
      env: ctx.given("env") ? (ctx.raw.values.env as string[]) : undefined,
      cwd: text("cwd"),
      queue: text("queue"),
      priority: text("priority"),
      timeout: text("timeout"),
      maxRetries: text("max-retries"),
      after: text("after"),
      at: text("at"),
    };
    const out = await editJob(store, args.id, (job) => parseJobEdit(input, job, cwd, store.now()));
    return { data: { job: summarize(out.job, store.now()), changed: out.changed } };
  },
  render({ data }) {
    return renderEdit(data);
  },
});

/** `spoolctl priority`. */
export const priority = defineVerb({
  name: "priority",
  description:
    "Set a queued or held job's priority (higher runs first; ties by due time, then id). Refused (CONFLICT, exit 5) once it has started.",
  examples: ["spoolctl priority 3 10", "spoolctl priority nightly-1 -5"],
  mutates: true,
  flags: {
    ...COMMON_FLAGS,
    id: jobIdPositional("priority"),
    value: {
      type: "positional",
      required: true,
      description: `the new priority, a 32-bit integer (${LIMITS.priority.min} to ${LIMITS.priority.max})`,
      valueHint: "N",
      valueType: "integer",
      min: LIMITS.priority.min,
      max: LIMITS.priority.max,
      noun: "a priority",
      hint: "spoolctl priority ID N",
    },
  },
  async run(ctx): Promise<VerbResult<EditData>> {
    const value = ctx.args.value;
    const store = await ctx.open({ create: false });
    const out = await editJob(store, ctx.args.id, { priority: value });
    return { data: { job: summarize(out.job, store.now()), changed: out.changed } };
  },
  render({ data }) {
    if (data.changed.length === 0) return `job ${data.job.id} already has priority ${data.job.priority}`;
    return `Job ${data.job.id} now has priority ${data.job.priority}`;
  },
});
