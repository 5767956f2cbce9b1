/** `spoolctl cancel [ID…]` (SPEC §4–§5): cancel queued jobs at once; running ones with `--running --yes`. */
import { SpoolError } from "../contract/errors.ts";
import { cancelJobs, type CanceledJob } from "../ops/cancel.ts";
import { COMMON_FLAGS, bool, defineVerb } from "./verb.ts";

/** `cancel --json` data: one job, or `{count, jobs}` for several. */
export type CancelData = CanceledJob | { count: number; jobs: CanceledJob[] };

export default defineVerb<CancelData>({
  name: "cancel",
  description: "Cancel queued jobs at once. A running job needs --running --yes: its worker kills the job's process group within a heartbeat and records the attempt canceled.",
  examples: ["spoolctl cancel 3", "spoolctl cancel 3 4 nightly-1", "spoolctl cancel 5 --running --yes", "spoolctl cancel            # at a terminal: pick queued jobs from a list (--running lists running ones too)"],
  mutates: true,
  flags: {
    ...COMMON_FLAGS,
    running: { type: "boolean", description: "also cancel running jobs (needs --yes): their process groups are killed" },
    yes: { type: "boolean", description: "confirm canceling running jobs" },
    ids: { type: "positional", variadic: true, description: "job ids or idempotency keys (at a terminal, leave out to pick from a list)", valueHint: "ID…", required: true },
  },
  async run(ctx) {
    let refs = [...ctx.flags.positionals, ...(ctx.flags.rest ?? [])];
    let confirmed = bool(ctx.flags, "running") && bool(ctx.flags, "yes");
    if (refs.length === 0 && ctx.interactive && !ctx.json) {
      // A person at a terminal picks the jobs (a prompt stands in for --yes); CI gets MISSING_REQUIRED below.
      const { pickToCancel } = await import("../ui/pickers.ts");
      const picked = await pickToCancel(await ctx.open({ create: false }), { running: bool(ctx.flags, "running"), yes: bool(ctx.flags, "yes") });
      if (picked.ids.length === 0) return { data: { count: 0, jobs: [] } };
      refs = picked.ids.map(String);
      confirmed = picked.confirmedRunning;
    }
    if (refs.length === 0) throw new SpoolError("MISSING_REQUIRED", "cancel needs job ids", { remediation: "spoolctl cancel ID…  (spoolctl list --state queued shows ids)" });
    const { jobs, warnings } = await cancelJobs(await ctx.open({ create: false }), refs, confirmed);
    return { data: refs.length === 1 && jobs.length === 1 ? jobs[0]! : { count: jobs.length, jobs }, warnings };
  },
  render({ data }) {
    const jobs = "jobs" in data ? data.jobs : [data];
    if (jobs.length === 0) return "no jobs canceled";
    return jobs
      .map((j) => (j.was_running ? `Cancel requested for running job ${j.job_id}; its worker stops it within a heartbeat` : `Canceled job ${j.job_id}`))
      .join("\n");
  },
});
