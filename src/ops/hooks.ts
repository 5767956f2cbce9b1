/**
 * `hook add|list|rm` (docs/architecture.md "Hooks"): a hook is a job template the store adds,
 * in the very transaction that ends a matching job, so it is retried, dead-lettered and
 * triaged like any job and never lost to a crash between the outcome and its run.
 */
import { SpoolError } from "../contract/errors.ts";
import type { HookData } from "../describe/schemas-recurring.ts";
import { HOOK_OUTCOMES, type Hook, type HookOutcome } from "../model/recurring.ts";
import { type AddInput, type JobSpec, validateAddInput } from "./job-spec.ts";
import { checkName } from "./schedules.ts";
import { parseLane, parsePairs } from "./values.ts";

/** A checked `hook add`: the hook's name, outcome and filter, and the job it adds, as `add` validated it. */
export interface HookDraft extends Omit<Hook, "job" | "created_at"> {
  spec: JobSpec;
}

/** The lane hook jobs run in unless `--run-queue` says otherwise. */
export const HOOK_LANE = "hooks";

/**
 * The tag `spoolctl add` gives a job added from inside a hook's job (its
 * environment holds `SPOOLCTL_HOOK_STATE`): such a job is hook-born too, and
 * no hook fires for it, so a hook cannot loop (README "Hooks").
 */
export const HOOK_BORN_TAG = "spoolctl/hook-born";

/** `hook add` as typed. */
export interface HookInput {
  name: string;
  on: string;
  /** Only jobs of this lane. */
  queue?: string;
  /** Only jobs with this tag (`K=V`). */
  tag?: string;
  /** The hook job's lane (default {@link HOOK_LANE}). */
  runQueue?: string;
  job: AddInput;
}

// Defined once, as the JSON Schema `spoolctl schema` prints.
export type { HookData };

/** A stored hook as {@link HookData}. */
export function hookData(h: Hook): HookData {
  return {
    name: h.name,
    on: h.on_outcome,
    queue: h.match_queue,
    tag: h.match_tag_key === null ? null : `${h.match_tag_key}=${h.match_tag_value ?? ""}`,
    run_queue: h.job.queue,
    argv: h.job.argv,
  };
}

/**
 * Validates a `hook add` into the draft the `addHook` verb stores (the job as `add` would
 * check it, relative paths against `cwd`). Raises `INVALID_INPUT` for a bad name, outcome,
 * filter or job flag (or a `--queue`/`--tag` filter on a `batch-done` hook, which fires
 * once per finished batch).
 */
export function planHook(input: HookInput, cwd: string): HookDraft {
  const name = checkName("hook", input.name);
  if (!(HOOK_OUTCOMES as readonly string[]).includes(input.on))
    throw new SpoolError("INVALID_INPUT", `--on ${JSON.stringify(input.on)} is not an outcome a hook can wait for`, {
      remediation: `give --on ${HOOK_OUTCOMES.join(", --on ")}`,
      detail: { flag: "--on", value: input.on },
    });
  // A batch-done hook answers a batch's end, not a job's: a job filter would have nothing to match.
  if (input.on === "batch-done" && (input.queue !== undefined || input.tag !== undefined)) {
    const flag = input.queue !== undefined ? "--queue" : "--tag";
    throw new SpoolError(
      "INVALID_INPUT",
      `${flag} does not apply to --on batch-done: it fires once per batch, not per job`,
      {
        remediation: `spoolctl hook add ${name} --on batch-done -- CMD  (without --queue/--tag; the hook's job reads the batch in $SPOOLCTL_HOOK_BATCH)`,
        detail: { flag, on: "batch-done" },
      },
    );
  }
  const matchQueue = input.queue === undefined ? null : parseLane("--queue", input.queue);
  const tag = input.tag === undefined ? null : Object.entries(parsePairs("--tag", [input.tag], /^.+$/, "K=V"))[0]!;
  const spec = validateAddInput(
    { ...input.job, queue: input.runQueue ?? HOOK_LANE },
    (n) => (n === "queue" ? "--run-queue" : n.length === 1 ? `-${n}` : `--${n}`),
    cwd,
  );
  return {
    name,
    on_outcome: input.on as HookOutcome,
    match_queue: matchQueue,
    match_tag_key: tag?.[0] ?? null,
    match_tag_value: tag?.[1] ?? null,
    spec,
  };
}

/**
 * `specs` as added from this process: inside a hook's job (`env` holds
 * `SPOOLCTL_HOOK_STATE`) each gets {@link HOOK_BORN_TAG}, naming the job whose
 * outcome fired the hook (or the batch), so no hook fires for them.
 */
export function markHookBorn<T extends { tags: Record<string, string> }>(specs: T[], env: NodeJS.ProcessEnv): T[] {
  if (env.SPOOLCTL_HOOK_STATE === undefined) return specs;
  const from = env.SPOOLCTL_HOOK_JOB_ID || env.SPOOLCTL_HOOK_BATCH || "1";
  return specs.map((s) => ({ ...s, tags: { ...s.tags, [HOOK_BORN_TAG]: from.slice(0, 64) } }));
}
