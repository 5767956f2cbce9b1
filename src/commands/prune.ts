/** `spoolctl prune` (SPEC §4–§5): delete old terminal jobs — output files first, then rows. */
import { SpoolError } from "../contract/errors.ts";
import { LIMITS } from "../ops/limits.ts";
import { parsePruneStates, pruneJobs, type PruneData } from "../ops/prune.ts";
import { parseDuration } from "../ops/values.ts";
import { TERMINAL_STATES } from "../store/model.ts";
import { COMMON_FLAGS, bool, defineVerb, list, str } from "./verb.ts";

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export default defineVerb<PruneData>({
  name: "prune",
  description: "Delete terminal jobs (done, dead, canceled) that finished longer ago than --older-than, with their attempts, events and output files. Never queued or running jobs. Needs --yes, or --dry-run to preview.",
  examples: ["spoolctl prune --older-than 7d --dry-run", "spoolctl prune --older-than 7d --yes", "spoolctl prune --older-than 1h --state done --yes --json"],
  mutates: true,
  flags: {
    ...COMMON_FLAGS,
    "older-than": { type: "string", description: "only jobs that finished at least this long ago: 30m, 12h, 7d", valueHint: "DURATION", min: 0, max: LIMITS.delay_seconds.max, required: true },
    state: { type: "string", repeatable: true, description: "only these terminal states (default: done, dead, canceled)", valueHint: "STATE", choices: [...TERMINAL_STATES] },
    "dry-run": { type: "boolean", description: "report what would be deleted; change nothing" },
    yes: { type: "boolean", description: "confirm the deletion" },
  },
  async run(ctx) {
    const f = ctx.flags;
    const extra = [...f.positionals, ...(f.rest ?? [])];
    if (extra.length) throw new SpoolError("INVALID_INPUT", `prune takes no arguments (got ${JSON.stringify(extra.join(" "))})`, { remediation: "spoolctl prune --older-than 7d --dry-run" });
    const raw = str(f, "older-than");
    if (raw === undefined) throw new SpoolError("MISSING_REQUIRED", "prune needs --older-than DURATION", { remediation: "spoolctl prune --older-than 7d --dry-run" });
    const olderThan = parseDuration("--older-than", raw, 0, LIMITS.delay_seconds.max);
    const states = parsePruneStates(list(f, "state"));
    const dryRun = bool(f, "dry-run");
    const yes = bool(f, "yes");
    if (dryRun && yes) throw new SpoolError("INVALID_INPUT", "give --dry-run or --yes, not both", { remediation: "preview with --dry-run, then delete with --yes" });
    if (!dryRun && !yes) {
      throw new SpoolError("SAFETY_BLOCK", "prune deletes jobs and their output for good; confirm with --yes or preview with --dry-run", {
        remediation: `spoolctl prune --older-than ${raw} --dry-run   then   spoolctl prune --older-than ${raw} --yes`,
      });
    }
    return { data: await pruneJobs(await ctx.open({ create: false }), { olderThan, states, dryRun }) };
  },
  render({ data }) {
    if (data.deleted_jobs === 0) return "nothing to prune";
    const what = `${data.deleted_jobs} job(s) (${data.deleted_attempts} attempts, ${data.deleted_events} events, ${bytes(data.freed_bytes)} of output)`;
    return data.dry_run ? `would delete ${what}; run again with --yes to delete` : `deleted ${what}`;
  },
});
