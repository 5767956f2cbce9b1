/** `spoolctl cancel [ID…]`: cancel queued jobs at once; running ones with `--running --yes`; `--all` with filters. */
import type { VerbResult } from "../contract/envelope.ts";
import type { CancelData } from "../describe/schemas-jobs.ts";
import { cancelWarnings } from "../ops/cancel.ts";
import { counted } from "../ops/values.ts";
import { cancelJobs } from "../store/verbs/cancel.ts";
import { closedLine } from "../ui/text.ts";
import { HOST } from "../worker/liveness.ts";
import { batchMustExist, JOB_FILTER_NAMES, jobFilterFlags, refsOrSelection, targetOf } from "./job-filters.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";
import { healthContext } from "./workers.ts";

export default defineVerb({
  name: "cancel",
  description:
    "Cancel queued jobs at once. A running job needs --running --yes: its worker kills the job's process group within a heartbeat and records the attempt canceled.",
  examples: [
    "spoolctl cancel 3",
    "spoolctl cancel 3 4 nightly-1",
    "spoolctl cancel 5 --running --yes",
    "spoolctl cancel --all --queue builds --tag ci=1 --dry-run   # what would be canceled",
    "spoolctl cancel            # at a terminal: pick queued jobs from a list (--running lists running ones too)",
  ],
  mutates: true,
  flags: {
    ...COMMON_FLAGS,
    running: {
      type: "boolean",
      description: "also cancel running jobs (needs --yes): their process groups are killed",
    },
    yes: { type: "boolean", description: "confirm canceling running jobs" },
    all: {
      type: "boolean",
      description:
        "cancel every queued job matching --queue, --tag, --since, --failure-reason, --match, --batch, --search (running ones too with --running --yes), in one transaction",
    },
    "dry-run": { type: "boolean", description: "say which jobs would be canceled (the same checks), change nothing" },
    ...jobFilterFlags("with --all: "),
    ids: {
      type: "positional",
      variadic: true,
      description: "job ids, idempotency keys or last (the newest job) (at a terminal, leave out to pick from a list)",
      valueHint: "ID…",
      required: false,
      noun: "job ids",
      hint: "spoolctl cancel ID…  (spoolctl list --state queued shows ids)",
    },
  },
  async run(ctx): Promise<VerbResult<CancelData>> {
    const { args } = ctx;
    let refs = args.ids;
    let confirmed = args.running && args.yes;
    const picking = ctx.interactive && !ctx.json && !args.all && JOB_FILTER_NAMES.every((k) => !ctx.given(k));
    if (refs.length === 0 && picking) {
      // Only at a terminal (the parser asks for ids everywhere else): a person picks the jobs, and a prompt stands in for --yes.
      const { pickToCancel } = await import("../ui/pickers.ts");
      const picked = await pickToCancel(await ctx.open({ create: false }), { running: args.running, yes: args.yes });
      if (picked.ids.length === 0) return { data: { count: 0, jobs: [] } };
      refs = picked.ids.map(String);
      confirmed = picked.confirmedRunning;
    }
    const named = refsOrSelection(ctx, "cancel", refs, "spoolctl cancel --all --queue Q [--tag K=V]");
    const store = await ctx.open({ create: false });
    const target = targetOf(named, store.now(), { states: confirmed ? ["queued", "running"] : ["queued"] });
    const dryRun = args["dry-run"];
    const result = await cancelJobs(store, target, confirmed, undefined, healthContext(store), dryRun);
    if ("selection" in named && result.jobs.length === 0) await batchMustExist(store, named.selection.batch);
    if (dryRun) {
      const { jobs } = result;
      return { data: { count: jobs.length, jobs, dry_run: true }, warnings: cancelWarnings(jobs, result.health) };
    }
    for (const [jobId, health] of result.health) {
      // Its worker is dead here: nobody would kill the job, so we do (docs/architecture.md "Cancel").
      if (health.worker_state === "dead" && health.worker_host === HOST) {
        const { cancelOrphanedJob } = await import("../worker/reaper.ts");
        const job = result.jobs.find((j) => j.job_id === jobId);
        if (job && (await cancelOrphanedJob(store, jobId))) job.state = "canceled";
      }
    }
    const { jobs } = result;
    const warnings = cancelWarnings(jobs, result.health);
    const one = "refs" in named && refs.length === 1 && jobs.length === 1;
    return { data: one ? jobs[0]! : { count: jobs.length, jobs }, warnings };
  },
  render({ data }, ctx) {
    const jobs = "jobs" in data ? data.jobs : [data];
    // Without ids the picker ran and has said what happened (Ctrl-C, No, nothing to pick): one message, not two.
    if (jobs.length === 0) return ctx.args.ids.length === 0 && !ctx.args.all ? "" : "no jobs canceled";
    if ("dry_run" in data && data.dry_run)
      return `Would cancel ${counted(jobs.length, "job")}: ${jobs.map((j) => j.job_id).join(", ")} (dry run: nothing changed)`;
    return jobs
      .map((j) =>
        !j.was_running
          ? `Canceled job ${j.job_id}${closedLine(j.closed, "it")}`
          : j.state === "canceled"
            ? `Canceled running job ${j.job_id}: its worker was dead, so its processes were killed here`
            : `Cancel requested for running job ${j.job_id}; its worker stops it within a heartbeat`,
      )
      .join("\n");
  },
});
