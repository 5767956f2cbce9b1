/**
 * `spoolctl triage`: an interactive walk through dead jobs (then
 * canceled ones) for a person at a terminal. Off a terminal, or under --json,
 * it refuses at once: CI must never hang on a prompt, and the same work is
 * `list --state dead` plus `retry ID`.
 */
import type { VerbResult } from "../contract/envelope.ts";
import { SpoolError } from "../contract/errors.ts";
import { pauseText } from "../ops/lanes.ts";
import { selectionText } from "../ops/triage-groups.ts";
import { pausedLanes } from "../store/verbs/lane-reads.ts";
import type { TriageSummary } from "../ui/triage-card.ts";
import { jobFilterFlags, jobSelectionOf } from "./job-filters.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";

const NON_INTERACTIVE =
  "spoolctl list --state dead  (to see them), then spoolctl retry ID  (or spoolctl retry --all --state dead)";

export default defineVerb({
  name: "triage",
  description:
    "Triage dead jobs (then canceled ones) at a terminal: first the groups of jobs that failed alike (failure reason, exit code or signal, last stderr line with numbers, ids, paths, hosts and times masked), largest first; per group: retry all, retry all with a new timeout, retry budget or env, delete all, open it and walk its jobs one card at a time (retry, retry with changes, delete, view the full output in $PAGER, skip), or skip. Arrow keys and Enter, or the key shown. Ends with a summary of what changed. Esc goes back one level; Ctrl-C stops at once, leaves the job or group on screen as it was, and exits 0. Needs a terminal; never runs under --json (see list --state dead --group --json and retry --all).",
  examples: [
    "spoolctl triage",
    "spoolctl triage --queue builds --tag ci=1",
    "spoolctl triage --since 1h --failure-reason timeout",
    "spoolctl triage --match 'curl *'",
  ],
  mutates: true,
  flags: {
    ...COMMON_FLAGS,
    ...jobFilterFlags(),
  },
  async run(ctx): Promise<VerbResult<TriageSummary>> {
    if (ctx.json) {
      throw new SpoolError("INVALID_INPUT", "triage is interactive and has no --json form", {
        remediation: `${NON_INTERACTIVE}, each with --json`,
      });
    }
    if (!ctx.interactive) {
      throw new SpoolError("MISSING_REQUIRED", "triage needs a terminal (stdin and stdout), and this is not one", {
        remediation: NON_INTERACTIVE,
      });
    }
    const scope = jobSelectionOf(ctx.args);
    // The prompt library loads only here: other verbs never pay for it at start-up.
    const { runTriage } = await import("../ui/triage.ts");
    const store = await ctx.open({ create: false });
    // Jobs retried into a paused lane wait: said before the walk starts (docs/architecture.md "Lanes and slots").
    const paused = await pausedLanes(store);
    for (const lane of paused.lanes)
      process.stderr.write(
        `${ctx.suggest(`spoolctl: ${pauseText(lane, paused.now)}: jobs retried into it wait until then`)}\n`,
      );
    const summary = await runTriage(store, scope, selectionText(scope), ctx.suggest);
    // The flow already drew everything, ending with its summary.
    return { data: summary, streamed: true };
  },
  render: () => "",
});
