/**
 * `spoolctl hold ID…` / `release ID…` (pueue's stash/enqueue; docs/architecture.md
 * "Holding a job"): keep queued jobs from starting without canceling them, and
 * let them run again; `--all` with filters, `--dry-run` to preview.
 */
import type { VerbResult } from "../contract/envelope.ts";
import type { HoldData } from "../describe/schemas-edits.ts";
import { counted } from "../ops/values.ts";
import { holdJobs } from "../store/verbs/hold.ts";
import { batchMustExist, jobFilterFlags, refsOrSelection, targetOf } from "./job-filters.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";

/** The `hold` verb when `held`, else `release`. */
function holdVerbOf(held: boolean) {
  const verb = held ? "hold" : "release";
  const past = held ? "Held" : "Released";
  return defineVerb({
    name: verb,
    description: held
      ? "Hold queued jobs: they stay queued (their needs, batch and key as before) but no worker starts them until spoolctl release. Dependents wait; a drain does not."
      : "Release held jobs: they are queued again as before and run when due.",
    examples: held
      ? [
          "spoolctl hold 3",
          "spoolctl hold 3 4 nightly-1",
          "spoolctl hold --all --queue builds --dry-run   # which jobs would be held",
        ]
      : ["spoolctl release 3", "spoolctl release --all --batch nightly"],
    mutates: true,
    flags: {
      ...COMMON_FLAGS,
      all: {
        type: "boolean",
        description: `${verb} every ${held ? "queued" : "held"} job matching --queue, --tag, --since, --failure-reason, --match, --batch, --search, in one transaction`,
      },
      "dry-run": {
        type: "boolean",
        description: `say which jobs would be ${held ? "held" : "released"}, change nothing`,
      },
      ...jobFilterFlags("with --all: "),
      ids: {
        type: "positional",
        variadic: true,
        description: "job ids, idempotency keys or last (the newest job)",
        valueHint: "ID…",
        required: false,
        noun: "job ids",
        hint: `spoolctl ${verb} ID…  (spoolctl list --state ${held ? "queued" : "held"} shows ids)`,
      },
    },
    async run(ctx): Promise<VerbResult<HoldData>> {
      const { args } = ctx;
      const named = refsOrSelection(ctx, verb, args.ids, `spoolctl ${verb} --all --queue Q [--tag K=V]`);
      const store = await ctx.open({ create: false });
      const target = targetOf(named, store.now(), { states: ["queued"], held: !held });
      const jobs = await holdJobs(store, target, held, undefined, args["dry-run"]);
      if ("selection" in named && jobs.length === 0) await batchMustExist(store, named.selection.batch);
      const count = jobs.filter((j) => j.changed).length;
      return { data: { count, jobs, ...(args["dry-run"] ? { dry_run: true } : {}) } };
    },
    render({ data }) {
      const changed = data.jobs.filter((j) => j.changed).map((j) => j.job_id);
      const already = data.jobs.filter((j) => !j.changed).map((j) => j.job_id);
      const lines: string[] = [];
      if (data.dry_run)
        lines.push(
          changed.length
            ? `Would ${verb} ${counted(changed.length, "job")}: ${changed.join(", ")} (dry run: nothing changed)`
            : `no jobs to ${verb} (dry run)`,
        );
      else if (changed.length) lines.push(`${past} ${counted(changed.length, "job")}: ${changed.join(", ")}`);
      else if (already.length === 0) lines.push(`no jobs ${held ? "held" : "released"}`);
      if (already.length)
        lines.push(
          `${held ? "already held" : "not held"}: ${already.join(", ")} (${counted(already.length, "job")}, left as is)`,
        );
      if (held && changed.length && !data.dry_run) lines.push(`spoolctl release ${changed.join(" ")} lets them run`);
      return lines.join("\n");
    },
  });
}

/** `spoolctl hold`. */
export const hold = holdVerbOf(true);
/** `spoolctl release`. */
export const release = holdVerbOf(false);
