/** `spoolctl brief`: a compact usage text for an agent's context. */
import { buildBrief } from "../describe/brief.ts";
import { VERB_NAMES } from "./names.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";

export default defineVerb({
  name: "brief",
  description: "Print a compact usage text for agents: verbs, the submit/run/wait loop, JSON envelope, exit codes.",
  examples: ["spoolctl brief", "spoolctl brief --json | jq -r .data.text"],
  flags: { json: COMMON_FLAGS.json },
  run() {
    return { data: buildBrief(VERB_NAMES) };
  },
  render({ data }) {
    return data.text;
  },
});
