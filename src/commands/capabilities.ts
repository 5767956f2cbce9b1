/** `spoolctl capabilities` (SPEC §5): the machine-readable contract, built from the verbs' own definitions. */
import { SpoolError } from "../contract/errors.ts";
import { buildCapabilities } from "../contract/capabilities.ts";
import { aliasForms, compoundForms, loadCatalog } from "./catalog.ts";
import { defineVerb } from "./verb.ts";
import { COMMON_FLAGS } from "./verb.ts";

type Capabilities = ReturnType<typeof buildCapabilities>;

export default defineVerb<Capabilities>({
  name: "capabilities",
  description: "Print the machine-readable contract: verbs and their flags (types, defaults, ranges), exit codes, error and warning codes, states, failure reasons, events, limits, settings and environment variables.",
  examples: ["spoolctl capabilities --json", "spoolctl capabilities --json | jq '.data.verbs.add.flags'"],
  flags: { json: COMMON_FLAGS.json },
  async run(ctx) {
    const extra = [...ctx.flags.positionals, ...(ctx.flags.rest ?? [])];
    if (extra.length) throw new SpoolError("INVALID_INPUT", `capabilities takes no arguments (got ${JSON.stringify(extra.join(" "))})`);
    return { data: buildCapabilities({ verbs: await loadCatalog(), aliases: aliasForms(), compound: compoundForms() }) };
  },
  render({ data }) {
    const lines = [`spoolctl ${data.tool_version} (contract ${data.contract_version})`, "", "verbs:"];
    for (const [name, v] of Object.entries(data.verbs)) {
      lines.push(`  ${name.padEnd(16)} ${v.flags.map((f) => f.flag).filter((f) => f !== "--json" && f !== "--db").join(" ")}`);
    }
    if (Object.keys(data.compound_commands).length) {
      lines.push("", "two-word forms:", ...Object.entries(data.compound_commands).map(([k, v]) => `  ${k.padEnd(16)} = ${v}`));
    }
    lines.push("", "exit codes:", ...Object.entries(data.exit_codes).map(([code, v]) => `  ${code}  ${v.meaning}`));
    lines.push("", "(spoolctl capabilities --json for everything: flags, limits, env, codes)");
    return lines.join("\n");
  },
});
