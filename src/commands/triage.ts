/**
 * `spoolctl triage`: an interactive walk through dead jobs (then
 * canceled ones) for a person at a terminal. Off a terminal, or under --json,
 * it refuses at once: CI must never hang on a prompt, and the same work is
 * `list --state dead` plus `retry ID`.
 */
import type { VerbResult } from "../contract/envelope.ts";
import { SpoolError } from "../contract/errors.ts";
import type { TriageSummary } from "../ui/triage-card.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";

const NON_INTERACTIVE = "spoolctl list --state dead  (to see them), then spoolctl retry ID  (or spoolctl retry --all --state dead)";

export default defineVerb({
  name: "triage",
  description:
    "Walk through dead jobs, newest first (then canceled ones), at a terminal: each job's command, failure, exit code, attempts, last error and output tails, then one key: retry, retry with a new timeout, retry budget or env, delete, view the full output, skip or quit. Ends with a summary of what changed. Ctrl-C or Esc stops at once, leaves the job on screen as it was, and exits 0. Needs a terminal; never runs under --json.",
  examples: ["spoolctl triage", "spoolctl triage --queue builds --tag ci=1"],
  mutates: true,
  flags: {
    ...COMMON_FLAGS,
    queue: { type: "string", description: "only jobs of this lane", valueHint: "NAME", format: "lane" },
    tag: { type: "string", repeatable: true, description: "only jobs with this tag; all given must match", valueHint: "K=V", valueType: "pair" },
  },
  async run(ctx): Promise<VerbResult<TriageSummary>> {
    if (ctx.json) {
      throw new SpoolError("INVALID_INPUT", "triage is interactive and has no --json form", { remediation: `${NON_INTERACTIVE}, each with --json` });
    }
    if (!ctx.interactive) {
      throw new SpoolError("MISSING_REQUIRED", "triage needs a terminal (stdin and stdout), and this is not one", { remediation: NON_INTERACTIVE });
    }
    const scope = { queue: ctx.args.queue, tags: ctx.args.tag };
    const scopeText = [scope.queue === undefined ? "" : ` in lane ${scope.queue}`, ...Object.entries(scope.tags).map(([k, v]) => ` tagged ${k}=${v}`)].join("");
    // The prompt library loads only here: other verbs never pay for it at start-up.
    const { runTriage } = await import("../ui/triage.ts");
    const summary = await runTriage(await ctx.open({ create: false }), scope, scopeText, ctx.suggest);
    // The flow already drew everything, ending with its summary.
    return { data: summary, streamed: true };
  },
  render: () => "",
});
