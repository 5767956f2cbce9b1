/** `spoolctl cancel [ID…]` (SPEC §4–§5): cancel queued jobs at once; running ones with `--running --yes`. */
import { SpoolError } from "../contract/errors.ts";
import { cancelJobs, type CanceledJob } from "../ops/cancel.ts";
import { COMMON_FLAGS, bool, defineVerb } from "./verb.ts";

/** `cancel --json` data: one job, or `{count, jobs}` for several. */
export type CancelData = CanceledJob | { count: number; jobs: CanceledJob[] };

export default defineVerb<CancelData>({
  name: "cancel",
  description: "Cancel queued jobs at once. A running job needs --running --yes: its worker kills the job's process group within a heartbeat and records the attempt canceled.",
  examples: ["spoolctl cancel 3", "spoolctl cancel 3 4 nightly-1", "spoolctl cancel 5 --running --yes"],
  mutates: true,
  flags: {
    ...COMMON_FLAGS,
    running: { type: "boolean", description: "also cancel running jobs (needs --yes): their process groups are killed" },
    yes: { type: "boolean", description: "confirm canceling running jobs" },
    ids: { type: "positional", variadic: true, description: "job ids or idempotency keys", valueHint: "ID…", required: true },
  },
  run(ctx) {
    const refs = [...ctx.flags.positionals, ...(ctx.flags.rest ?? [])];
    if (refs.length === 0) throw new SpoolError("MISSING_REQUIRED", "cancel needs job ids", { remediation: "spoolctl cancel ID…  (spoolctl list --state queued shows ids)" });
    const confirmed = bool(ctx.flags, "running") && bool(ctx.flags, "yes");
    const { jobs, warnings } = cancelJobs(ctx.open({ create: false }), refs, confirmed);
    return { data: refs.length === 1 && jobs.length === 1 ? jobs[0]! : { count: jobs.length, jobs }, warnings };
  },
  render({ data }) {
    const jobs = "jobs" in data ? data.jobs : [data];
    return jobs
      .map((j) => (j.was_running ? `Cancel requested for running job ${j.job_id}; its worker stops it within a heartbeat` : `Canceled job ${j.job_id}`))
      .join("\n");
  },
});
