/** `spoolctl retry [ID…]`: requeue dead or canceled jobs with a fresh budget; `--all` with filters. */
import type { VerbResult } from "../contract/envelope.ts";
import { SpoolError } from "../contract/errors.ts";
import type { FlagsDef } from "../contract/flags.ts";
import type { RetryData } from "../describe/schemas-operator.ts";
import { LIMITS } from "../model/limits.ts";
import { parseRetryOverrides, type RetryOverrides } from "../ops/job-spec.ts";
import { parseStates } from "../ops/jobs.ts";
import { RETRYABLE_STATES, type RetriedJob, type RetryTarget, retryWarnings } from "../ops/retry.ts";
import { selectionFilter } from "../ops/triage-groups.ts";
import { counted } from "../ops/values.ts";
import { retryJobs } from "../store/verbs/retry.ts";
import { idList, revivedLine } from "../ui/text.ts";
import { describeChanges } from "../ui/triage-card.ts";
import { forcedRetryHoldoffSeconds } from "../worker/timing.ts";
import { batchMustExist, JOB_FILTER_NAMES, jobFilterFlags, refsOrSelection } from "./job-filters.ts";
import { RETRIES_VALUE, TIMEOUT_VALUE } from "./setting-flags.ts";
import { COMMON_FLAGS, defineVerb, type VerbContext } from "./verb.ts";

const FLAGS = {
  ...COMMON_FLAGS,
  force: {
    type: "boolean",
    description:
      "also requeue a running job: its attempt is abandoned, its worker kills its process within a heartbeat and any late result is ignored; the job is due again after that heartbeat and the kill grace",
  },
  all: {
    type: "boolean",
    description:
      "requeue every dead or canceled job matching --state, --queue, --tag, --since, --failure-reason, --match, --batch, --search",
  },
  "dry-run": { type: "boolean", description: "say which jobs would be requeued (the same checks), change nothing" },
  "no-cascade": {
    type: "boolean",
    description: "do not revive the jobs that waited for it and were canceled when it failed (need_failed)",
  },
  state: {
    type: "string",
    repeatable: true,
    separator: ",",
    looseChoices: true,
    description: "with --all: dead or canceled (default both)",
    valueHint: "STATE",
    choices: RETRYABLE_STATES,
    noun: "a state retry --all can select",
    hint: "retry --all selects dead or canceled jobs only; a running one is retried by id with --force",
  },
  timeout: {
    ...TIMEOUT_VALUE,
    description: `first set the jobs' timeout to this (${LIMITS.timeout_seconds.min}s-30d, or none: no time limit), e.g. after a timeout`,
  },
  "max-retries": {
    ...RETRIES_VALUE,
    description: "first set the jobs' retry budget to this",
  },
  env: {
    type: "string",
    repeatable: true,
    description: "first set this variable in the jobs' env (added or replaced; the others stay)",
    valueHint: "K=V",
    valueType: "pair",
  },
  ...jobFilterFlags("with --all: "),
  ids: {
    type: "positional",
    required: false,
    variadic: true,
    description: "job ids, idempotency keys or last (the newest job) (at a terminal, leave out to pick from a list)",
    valueHint: "ID…",
  },
} as const satisfies FlagsDef;

function target(ctx: VerbContext<typeof FLAGS>, refs: string[], now: number): RetryTarget {
  const named = refsOrSelection(ctx, "retry", refs, "spoolctl retry --all --state dead [--queue Q] [--tag K=V]", [
    "state",
  ]);
  if ("refs" in named) return named;
  if (ctx.args.force)
    throw new SpoolError(
      "INVALID_INPUT",
      "--force applies to named running jobs; --all only selects dead or canceled jobs",
      { remediation: "spoolctl retry ID --force" },
    );
  const { states } = parseStates(ctx.args.state);
  return {
    filter: { ...selectionFilter(named.selection, now), states: states.length ? states : [...RETRYABLE_STATES] },
  };
}

/**
 * The settings `--timeout`, `--max-retries` and `--env` change, from the text
 * as typed through the rules triage's prompts use (src/ops/retry.ts), so the
 * two ways to retry with new settings accept the same values.
 */
function overridesOf(ctx: VerbContext<typeof FLAGS>): RetryOverrides {
  const text = (name: string) => {
    const v = ctx.raw.values[name];
    return typeof v === "string" ? v : undefined;
  };
  const env = ctx.raw.values.env;
  return parseRetryOverrides({
    timeout: text("timeout"),
    maxRetries: text("max-retries"),
    env: Array.isArray(env) && env.length ? env : undefined,
  });
}

/** Whether a missing ID opens the picker: a terminal, no --json, and no --all or filters (those select without one). */
function wantsPicker(ctx: VerbContext<typeof FLAGS>): boolean {
  return (
    ctx.interactive &&
    !ctx.json &&
    !ctx.args.all &&
    ["state", ...JOB_FILTER_NAMES].every((k) => !ctx.given(k as "state"))
  );
}

export default defineVerb({
  name: "retry",
  description:
    "Requeue dead or canceled jobs with a fresh retry budget (history is kept), optionally with a new timeout, retry budget or env. A running job only with --force. --all requeues every match in one transaction.",
  examples: [
    "spoolctl retry 4",
    "spoolctl retry 4 5 nightly-1",
    "spoolctl retry --all --state dead --queue builds --tag ci=1",
    "spoolctl retry --all --failure-reason timeout --since 1h --dry-run   # what would be requeued",
    "spoolctl retry --all --state dead --match 'curl *'",
    "spoolctl retry 25 --timeout 30m          # it timed out: requeue with a longer timeout",
    "spoolctl retry --all --failure-reason timeout --timeout 1h --dry-run",
    "spoolctl retry 9 --max-retries 5 --env API_URL=https://staging.example",
    "spoolctl retry 7 --force      # abandon its running attempt and requeue",
    "spoolctl retry                # at a terminal: pick dead or canceled jobs from a list",
  ],
  mutates: true,
  flags: FLAGS,
  async run(ctx): Promise<VerbResult<RetryData>> {
    let refs = ctx.args.ids;
    if (refs.length === 0 && wantsPicker(ctx)) {
      // A person at a terminal picks the jobs; CI (no TTY, or --json) gets MISSING_REQUIRED below instead.
      const { pickToRetry } = await import("../ui/pickers.ts");
      const picked = await pickToRetry(await ctx.open({ create: false }));
      if (!picked?.length) return { data: { count: 0, jobs: [] } };
      refs = picked.map(String);
    }
    // A missing queue has no jobs to retry: open it without creating it.
    const store = await ctx.open({ create: false });
    const t = target(ctx, refs, store.now());
    const dryRun = ctx.args["dry-run"];
    const outcome = await retryJobs(store, t, {
      force: ctx.args.force,
      forcedHoldoffSeconds: forcedRetryHoldoffSeconds(),
      dryRun,
      overrides: overridesOf(ctx),
      cascade: !ctx.args["no-cascade"],
    });
    const { jobs } = outcome;
    if (jobs.length === 0 && "filter" in t) await batchMustExist(store, t.filter.batch);
    const revived = outcome.revived ? { revived: outcome.revived } : {};
    if (dryRun)
      return { data: { count: jobs.length, jobs, dry_run: true, ...revived }, warnings: retryWarnings(outcome) };
    return {
      data:
        "refs" in t && refs.length === 1 && jobs.length === 1
          ? jobs[0]!
          : {
              count: jobs.length,
              jobs,
              ...revived,
              ...(outcome.left_closed ? { left_closed: outcome.left_closed } : {}),
            },
      warnings: retryWarnings(outcome),
    };
  },
  render({ data }, ctx) {
    const jobs = "jobs" in data ? data.jobs : [data];
    // After the picker (Ctrl-C, or nothing to pick) it has said what happened: one message, not two.
    if (jobs.length === 0) return ctx.args.ids.length === 0 && wantsPicker(ctx) ? "" : "no jobs to retry";
    const changes = (j: RetriedJob) =>
      j.changed && Object.keys(j.changed).length ? ` (${describeChanges(j.changed)})` : "";
    if ("dry_run" in data && data.dry_run)
      return `Would retry ${counted(jobs.length, "job")}: ${jobs.map((j) => `${j.job_id}${changes(j)}`).join(", ")} (dry run: nothing changed)`;
    const left = (ids: number[] | undefined) =>
      ids?.length
        ? `\nLeft ${counted(ids.length, "job")} closed that waited for it (--no-cascade): ${idList(ids)} (spoolctl retry ID revives one and the jobs that wait for it)`
        : "";
    return (
      jobs
        .map((j) => `Retried job ${j.job_id}${changes(j)}; now queued${revivedLine(j.revived)}${left(j.left_closed)}`)
        .join("\n") +
      // One job's revived jobs are on its own line; a batch retry's are summed up once.
      revivedLine("jobs" in data && "revived" in data ? (data.revived as number[] | undefined) : undefined) +
      left("jobs" in data && "left_closed" in data ? (data.left_closed as number[] | undefined) : undefined)
    );
  },
});
