/** `spoolctl retry [ID…]`: requeue dead or canceled jobs with a fresh budget; `--all` with filters. */
import type { VerbResult } from "../contract/envelope.ts";
import { SpoolError } from "../contract/errors.ts";
import type { FlagsDef } from "../contract/flags.ts";
import { parseStates } from "../ops/jobs.ts";
import { RETRYABLE_STATES, retryJobs, retryWarnings, type RetriedJob, type RetryTarget } from "../ops/retry.ts";
import { COMMON_FLAGS, defineVerb, type VerbContext } from "./verb.ts";

/** `retry --json` data: one job, or `{count, jobs}` for several or `--all`. */
export type RetryData = RetriedJob | { count: number; jobs: RetriedJob[] };

const FLAGS = {
  ...COMMON_FLAGS,
  force: { type: "boolean", description: "also requeue a running job: its attempt is abandoned and its worker's late result ignored (its process is not killed)" },
  all: { type: "boolean", description: "requeue every dead or canceled job matching --state, --queue, --tag" },
  state: {
    type: "string", repeatable: true, separator: ",", looseChoices: true, description: "with --all: dead or canceled (default both)", valueHint: "STATE", choices: RETRYABLE_STATES, noun: "a state retry --all can select",
    hint: "retry --all selects dead or canceled jobs only; a running one is retried by id with --force",
  },
  queue: { type: "string", description: "with --all: only this lane", valueHint: "NAME", format: "lane" },
  tag: { type: "string", repeatable: true, description: "with --all: only jobs with this tag", valueHint: "K=V", valueType: "pair" },
  ids: { type: "positional", variadic: true, description: "job ids or idempotency keys (at a terminal, leave out to pick from a list)", valueHint: "ID…" },
} as const satisfies FlagsDef;

/** The flags that select jobs for --all. */
const FILTERS = ["state", "queue", "tag"] as const;

function target(ctx: VerbContext<typeof FLAGS>, refs: string[]): RetryTarget {
  const { args } = ctx;
  const filters = FILTERS.filter((k) => ctx.given(k));
  if (!args.all) {
    if (filters.length) throw new SpoolError("INVALID_INPUT", `--${filters[0]} selects jobs only with --all`, { remediation: "spoolctl retry --all --state dead [--queue Q] [--tag K=V]" });
    if (refs.length === 0) {
      throw new SpoolError("MISSING_REQUIRED", "retry needs job ids, or --all with filters", { remediation: "spoolctl retry ID…  or  spoolctl retry --all --state dead" });
    }
    return { refs };
  }
  if (refs.length) throw new SpoolError("INVALID_INPUT", "give job ids or --all, not both", { remediation: "spoolctl retry ID…  or  spoolctl retry --all --state dead" });
  if (args.force) throw new SpoolError("INVALID_INPUT", "--force applies to named running jobs; --all only selects dead or canceled jobs", { remediation: "spoolctl retry ID --force" });
  const { states } = parseStates(args.state);
  return { filter: { states: states.length ? states : [...RETRYABLE_STATES], queue: args.queue, tags: args.tag } };
}

/** Whether a missing ID opens the picker: a terminal, no --json, and no --all or filters (those select without one). */
function wantsPicker(ctx: VerbContext<typeof FLAGS>): boolean {
  return ctx.interactive && !ctx.json && !ctx.args.all && FILTERS.every((k) => !ctx.given(k));
}

export default defineVerb({
  name: "retry",
  description: "Requeue dead or canceled jobs with a fresh retry budget (history is kept). A running job only with --force. --all requeues every match in one transaction.",
  examples: [
    "spoolctl retry 4",
    "spoolctl retry 4 5 nightly-1",
    "spoolctl retry --all --state dead --queue builds --tag ci=1",
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
    const t = target(ctx, refs);
    // A missing queue has no jobs to retry: open it without creating it.
    const outcome = await retryJobs(await ctx.open({ create: false }), t, { force: ctx.args.force });
    const { jobs } = outcome;
    return { data: "refs" in t && refs.length === 1 && jobs.length === 1 ? jobs[0]! : { count: jobs.length, jobs }, warnings: retryWarnings(outcome) };
  },
  render({ data }) {
    const jobs = "jobs" in data ? data.jobs : [data];
    if (jobs.length === 0) return "no jobs to retry";
    return jobs.map((j) => `Retried job ${j.job_id}; now queued`).join("\n");
  },
});
