/** `spoolctl schema` (SPEC §5–§6): JSON Schemas (2020-12) of the envelope, each verb's data and stream frames. */
import { SpoolError, invalidValue } from "../contract/errors.ts";
import { schemaExport, type SchemaExport } from "../contract/schemas.ts";
import { VERBS } from "./registry.ts";
import { COMMON_FLAGS, defineVerb, str } from "./verb.ts";

export default defineVerb<SchemaExport>({
  name: "schema",
  description: "Print JSON Schemas (draft 2020-12): the envelope, the data of each verb, and the frames of events --follow.",
  examples: ["spoolctl schema --json", "spoolctl schema --verb wait --json", "spoolctl schema --json | jq '.data.envelope_schema'"],
  flags: {
    json: COMMON_FLAGS.json,
    verb: { type: "string", description: "only this verb's data schema", valueHint: "VERB", choices: Object.keys(VERBS) },
  },
  run(ctx) {
    const extra = [...ctx.flags.positionals, ...(ctx.flags.rest ?? [])];
    if (extra.length) throw new SpoolError("INVALID_INPUT", `schema takes no arguments (got ${JSON.stringify(extra.join(" "))})`, { remediation: "use --verb NAME for one verb" });
    const only = str(ctx.flags, "verb");
    // Own keys only: `in` would accept "__proto__" or "constructor" and export every schema.
    if (only !== undefined && !Object.hasOwn(VERBS, only)) throw invalidValue("--verb", only, `one of ${Object.keys(VERBS).join(", ")}`);
    return { data: schemaExport(only === undefined ? Object.keys(VERBS) : [only]) };
  },
  render({ data }) {
    return JSON.stringify(data, null, 2);
  },
});
