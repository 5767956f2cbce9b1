/** `spoolctl schema`: JSON Schemas (2020-12) of the envelope, each verb's data and stream frames (docs/contract.md "JSON Schema export"). */
import { schemaExport } from "../describe/schemas.ts";
import { VERB_NAMES } from "./names.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";

export default defineVerb({
  name: "schema",
  description:
    "Print JSON Schemas (draft 2020-12): the envelope, the data of each verb, and the frames of events --follow.",
  examples: [
    "spoolctl schema --json",
    "spoolctl schema --verb wait --json",
    "spoolctl schema --json | jq '.data.envelope_schema'",
  ],
  flags: {
    json: COMMON_FLAGS.json,
    verb: { type: "string", description: "only this verb's data schema", valueHint: "VERB", choices: VERB_NAMES },
  },
  noArgsHint: "use --verb NAME for one verb",
  run(ctx) {
    const only = ctx.args.verb;
    return { data: schemaExport(only === undefined ? VERB_NAMES : [only]) };
  },
  render({ data }) {
    return JSON.stringify(data, null, 2);
  },
});
