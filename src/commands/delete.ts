/**
 * `spoolctl delete ID…`: remove jobs that are not running (queued, done, dead,
 * canceled) with their attempts, events and output, for good. A confirm that
 * counts them at a terminal; `--yes` otherwise (like `prune`).
 */
import type { VerbResult } from "../contract/envelope.ts";
import { SpoolError } from "../contract/errors.ts";
import type { FlagsDef } from "../contract/flags.ts";
import type { DeleteData } from "../describe/schemas-jobs.ts";
import type { JobState } from "../model/job.ts";
import { parseStates } from "../ops/jobs.ts";
import { counted } from "../ops/values.ts";
import { checkDeletion, deleteJobs } from "../store/verbs/delete.ts";
import type { JobTarget } from "../store/verbs/job-targets.ts";
import { closedLine, closesText, formatArgv, idList } from "../ui/text.ts";
import { batchMustExist, jobFilterFlags, refsOrSelection, selectionWords, targetOf } from "./job-filters.ts";
import { COMMON_FLAGS, defineVerb, type VerbContext } from "./verb.ts";

/** The states `delete --all` may select; without `--state`, the ended ones (a queued job only when asked). */
const DELETABLE_STATES = ["done", "dead", "canceled", "queued"] as const;

const FLAGS = {
  ...COMMON_FLAGS,
  yes: { type: "boolean", description: "confirm the deletion (needed off a terminal and with --json)" },
  all: {
    type: "boolean",
    description:
      "delete every job matching --state (default done, dead, canceled), --queue, --tag, --since, --failure-reason, --match, --batch, --search, in one transaction",
  },
  "dry-run": {
    type: "boolean",
    description: "say what would be deleted and which dependents it would close, change nothing (no --yes needed)",
  },
  state: {
    type: "string",
    repeatable: true,
    separator: ",",
    looseChoices: true,
    description: "with --all: done, dead, canceled or queued (default the first three)",
    valueHint: "STATE",
    choices: DELETABLE_STATES,
    noun: "a state delete --all can select",
    hint: "a running job is never deleted: cancel it first (spoolctl cancel ID --running --yes)",
  },
  ...jobFilterFlags("with --all: "),
  ids: {
    type: "positional",
    variadic: true,
    required: false,
    description: "job ids, idempotency keys or last (the newest job)",
    valueHint: "ID…",
    noun: "a job id",
    hint: "spoolctl delete ID…  (spoolctl list shows ids)",
  },
} as const satisfies FlagsDef;

export default defineVerb({
  name: "delete",
  description:
    "Delete jobs that are not running (queued, done, dead, canceled) with their attempts, events and output, for good. At a terminal a confirm counts what goes; elsewhere (or with --json) it needs --yes. A running job must be canceled first (cancel ID --running --yes).",
  examples: [
    "spoolctl delete 4",
    "spoolctl delete 4 5 nightly-1 --yes",
    "spoolctl delete last --yes --json",
    "spoolctl delete --all --state dead --queue builds --dry-run   # what would go",
  ],
  mutates: true,
  flags: FLAGS,
  async run(ctx): Promise<VerbResult<DeleteData>> {
    const refs = ctx.args.ids;
    const named = refsOrSelection(ctx, "delete", refs, "spoolctl delete --all --state dead --queue Q --yes", ["state"]);
    const store = await ctx.open({ create: false });
    const target = targetOf(named, store.now());
    if (!Array.isArray(target)) target.filter.states = deletableStates(ctx.args.state);
    // Check first (unknown or running jobs are refused before any question), counting what would go.
    const { jobs, preview } = await checkDeletion(store, target, { queued: true });
    if (jobs.length === 0 && "selection" in named) await batchMustExist(store, named.selection.batch);
    const ids = jobs.map((j) => j.id);
    // The jobs checked and counted, by id: what was confirmed is what goes (named ones in the order named).
    const checked: JobTarget = "refs" in named ? ids.map(String) : { filter: { ids } };
    if (ctx.args["dry-run"]) {
      const would = await deleteJobs(store, checked, { queued: true, dryRun: true });
      return {
        data: {
          count: ids.length,
          job_ids: ids,
          deleted_attempts: preview.attempts,
          deleted_events: preview.events,
          freed_bytes: preview.bytes,
          irreversible: false,
          ...(would.closed.length > 0 ? { closed: would.closed } : {}),
          dry_run: true,
        },
      };
    }
    if (ids.length === 0) return { data: nothingDeleted() };
    if (!ctx.args.yes) {
      // The confirmation counts the dependents it will close: the same deletion, rolled back.
      const would = await deleteJobs(store, checked, { queued: true, dryRun: true });
      if (would.closed.length > 0) preview.closes = would.closed;
      if (!ctx.interactive || ctx.json)
        throw new SpoolError(
          "SAFETY_BLOCK",
          `delete removes ${counted(ids.length, "job")} with ${counted(preview.attempts, "attempt")}, ${counted(preview.events, "event")} and their output for good${closesText(preview.closes, ids.length)}; confirm with --yes`,
          {
            remediation: `spoolctl delete ${formatArgv(again(ctx, named))} --yes`,
            detail: { job_ids: ids, ...(preview.closes?.length ? { closes: preview.closes } : {}) },
          },
        );
      const { confirmDelete } = await import("../ui/pickers.ts");
      if (!(await confirmDelete(preview, ids))) return { data: nothingDeleted() };
    }
    const gone = await deleteJobs(store, checked, { queued: true });
    return {
      data: {
        count: gone.job_ids.length,
        job_ids: gone.job_ids,
        deleted_attempts: gone.deleted_attempts,
        deleted_events: gone.deleted_events,
        freed_bytes: gone.freed_bytes,
        irreversible: true,
        ...(gone.closed.length > 0 ? { closed: gone.closed } : {}),
      },
      warnings: gone.warnings,
    };
  },
  render({ data }) {
    if (data.dry_run) {
      const closes = data.closed?.length
        ? `; it would close ${counted(data.closed.length, "dependent")} (${idList(data.closed)})`
        : "";
      return `Would delete ${counted(data.count, "job")}${data.count ? ` (${idList(data.job_ids)})` : ""} with ${counted(data.deleted_attempts, "attempt")} and ${counted(data.deleted_events, "event")}${closes} (dry run: nothing changed)`;
    }
    if (data.count === 0) return "nothing deleted";
    const deleted = `Deleted ${data.count === 1 ? `job ${data.job_ids[0]}` : `${data.count} jobs (${idList(data.job_ids)})`} with ${counted(data.deleted_attempts, "attempt")} and ${counted(data.deleted_events, "event")}`;
    return deleted + closedLine(data.closed, data.count === 1 ? "it" : "them");
  },
});

/** What `delete` answers when nothing went (a declined confirm, an empty selection). */
function nothingDeleted(): DeleteData {
  return { count: 0, job_ids: [], deleted_attempts: 0, deleted_events: 0, freed_bytes: 0, irreversible: false };
}

/** `--state` of `delete --all`, or the ended states when it is not given. */
function deletableStates(given: string[]): JobState[] {
  const { states } = parseStates(given);
  return states.length ? states : ["done", "dead", "canceled"];
}

/** The words that repeat what was named: the ids, or `--all` and its filters. */
function again(ctx: VerbContext<typeof FLAGS>, named: { refs: string[] } | object): string[] {
  return "refs" in named ? (named.refs as string[]) : selectionWords(ctx, ["state"]);
}
