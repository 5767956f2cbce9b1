/** `spoolctl brief` (SPEC §8): a compact usage text for an agent's context. */
import { SpoolError } from "../contract/errors.ts";
import { buildBrief, type BriefData } from "../contract/brief.ts";
import { VERBS } from "./registry.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";

export default defineVerb<BriefData>({
  name: "brief",
  description: "Print a compact usage text for agents: verbs, the submit/run/wait loop, JSON envelope, exit codes.",
  examples: ["spoolctl brief", "spoolctl brief --json | jq -r .data.text"],
  flags: { json: COMMON_FLAGS.json },
  run(ctx) {
    const extra = [...ctx.flags.positionals, ...(ctx.flags.rest ?? [])];
    if (extra.length) throw new SpoolError("INVALID_INPUT", `brief takes no arguments (got ${JSON.stringify(extra.join(" "))})`);
    return { data: buildBrief(Object.keys(VERBS)) };
  },
  render({ data }) {
    return data.text;
  },
});
