/** `spoolctl prune`: delete old terminal jobs — their rows, then (once committed) their output files. */
import type { VerbResult } from "../contract/envelope.ts";
import { SpoolError } from "../contract/errors.ts";
import { TERMINAL_STATES } from "../model/job.ts";
import { LIMITS } from "../model/limits.ts";
import { type PruneData, parsePruneStates } from "../ops/prune.ts";
import { counted } from "../ops/values.ts";
import { pruneJobs } from "../store/verbs/prune.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";

const EXAMPLE = "spoolctl prune --older-than 7d --dry-run";

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export default defineVerb({
  name: "prune",
  description:
    "Delete terminal jobs (done, dead, canceled) that finished longer ago than --older-than, with their attempts, events and output files. Never queued or running jobs. Needs --yes, or --dry-run to preview.",
  examples: [
    "spoolctl prune --older-than 7d --dry-run",
    "spoolctl prune --older-than 7d --yes",
    "spoolctl prune --older-than 1h --state done --yes --json",
  ],
  mutates: true,
  flags: {
    ...COMMON_FLAGS,
    "older-than": {
      type: "string",
      description: "only jobs that finished at least this long ago: 30m, 12h, 7d",
      valueHint: "DURATION",
      valueType: "duration",
      min: 0,
      max: LIMITS.delay_seconds.max,
      required: true,
      hint: EXAMPLE,
    },
    state: {
      type: "string",
      repeatable: true,
      separator: ",",
      looseChoices: true,
      description: "only these terminal states (default: done, dead, canceled; QueueCTL completed)",
      valueHint: "STATE",
      choices: [...TERMINAL_STATES, "completed"],
      noun: "a terminal state",
      hint: "prune deletes only terminal jobs (done, dead, canceled), never queued or running ones",
    },
    "dry-run": { type: "boolean", description: "report what would be deleted; change nothing" },
    yes: { type: "boolean", description: "confirm the deletion" },
  },
  noArgsHint: EXAMPLE,
  async run(ctx): Promise<VerbResult<PruneData>> {
    const { "older-than": olderThan, "dry-run": dryRun, yes } = ctx.args;
    const states = parsePruneStates(ctx.args.state);
    if (dryRun && yes)
      throw new SpoolError("INVALID_INPUT", "give --dry-run or --yes, not both", {
        remediation: "preview with --dry-run, then delete with --yes",
      });
    if (!dryRun && !yes) {
      const raw = ctx.raw.values["older-than"];
      throw new SpoolError(
        "SAFETY_BLOCK",
        "prune deletes jobs and their output for good; confirm with --yes or preview with --dry-run",
        {
          remediation: `spoolctl prune --older-than ${raw} --dry-run   then   spoolctl prune --older-than ${raw} --yes`,
        },
      );
    }
    return await pruneJobs(await ctx.open({ create: false }), { olderThan, states, dryRun });
  },
  render({ data }) {
    if (data.deleted_jobs === 0) return "nothing to prune";
    const what = `${counted(data.deleted_jobs, "job")} (${counted(data.deleted_attempts, "attempt")}, ${counted(data.deleted_events, "event")}, ${bytes(data.freed_bytes)} of output)`;
    return data.dry_run ? `would delete ${what}; run again with --yes to delete` : `deleted ${what}`;
  },
});
