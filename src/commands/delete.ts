/**
 * `spoolctl delete ID…`: remove jobs that are not running (queued, done, dead,
 * canceled) with their attempts, events and output, for good. A confirm that
 * counts them at a terminal; `--yes` otherwise (like `prune`).
 */
import type { VerbResult } from "../contract/envelope.ts";
import { SpoolError } from "../contract/errors.ts";
import type { FlagsDef } from "../contract/flags.ts";
import type { DeleteData } from "../describe/schemas-jobs.ts";
import { counted } from "../ops/values.ts";
import { checkDeletion, deleteJobs } from "../store/verbs/delete.ts";
import { closedLine, closesText, formatArgv, idList } from "../ui/text.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";

const FLAGS = {
  ...COMMON_FLAGS,
  yes: { type: "boolean", description: "confirm the deletion (needed off a terminal and with --json)" },
  ids: {
    type: "positional",
    variadic: true,
    required: true,
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
  examples: ["spoolctl delete 4", "spoolctl delete 4 5 nightly-1 --yes", "spoolctl delete last --yes --json"],
  mutates: true,
  flags: FLAGS,
  async run(ctx): Promise<VerbResult<DeleteData>> {
    const refs = ctx.args.ids;
    if (refs.length === 0)
      throw new SpoolError("MISSING_REQUIRED", "delete needs job ids", {
        remediation: "spoolctl delete ID…  (spoolctl list shows ids)",
      });
    const store = await ctx.open({ create: false });
    // Check first (unknown or running jobs are refused before any question), counting what would go.
    // The dependents it would close are counted only for a confirmation (a rolled-back run of the deletion).
    const { jobs, preview } = await checkDeletion(store, refs, { queued: true, countCloses: !ctx.args.yes });
    const ids = jobs.map((j) => j.id);
    if (!ctx.args.yes) {
      if (!ctx.interactive || ctx.json)
        throw new SpoolError(
          "SAFETY_BLOCK",
          `delete removes ${counted(ids.length, "job")} with ${counted(preview.attempts, "attempt")}, ${counted(preview.events, "event")} and their output for good${closesText(preview.closes, ids.length)}; confirm with --yes`,
          {
            remediation: `spoolctl delete ${formatArgv(refs)} --yes`,
            detail: { job_ids: ids, ...(preview.closes?.length ? { closes: preview.closes } : {}) },
          },
        );
      const { confirmDelete } = await import("../ui/pickers.ts");
      if (!(await confirmDelete(preview, ids)))
        return {
          data: { count: 0, job_ids: [], deleted_attempts: 0, deleted_events: 0, freed_bytes: 0, irreversible: false },
        };
    }
    const gone = await deleteJobs(store, refs, { queued: true });
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
    if (data.count === 0) return "nothing deleted";
    const deleted = `Deleted ${data.count === 1 ? `job ${data.job_ids[0]}` : `${data.count} jobs (${idList(data.job_ids)})`} with ${counted(data.deleted_attempts, "attempt")} and ${counted(data.deleted_events, "event")}`;
    return deleted + closedLine(data.closed, data.count === 1 ? "it" : "them");
  },
});
