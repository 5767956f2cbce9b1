/** `spoolctl capabilities`: the machine-readable contract, built from the verbs' own definitions. */
import { buildCapabilities } from "../describe/capabilities.ts";
import { SETTINGS } from "../ops/config.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";

export default defineVerb({
  name: "capabilities",
  description:
    "Print the machine-readable contract: verbs and their flags (types, defaults, ranges), exit codes, error and warning codes, states, failure reasons, events, limits, settings and environment variables.",
  examples: ["spoolctl capabilities --json", "spoolctl capabilities --json | jq '.data.verbs.add.flags'"],
  flags: { json: COMMON_FLAGS.json },
  async run(ctx) {
    return { data: buildCapabilities({ ...(await ctx.catalog()), settings: SETTINGS }) };
  },
  render({ data }) {
    const lines = [`spoolctl ${data.tool_version} (contract ${data.contract_version})`, "", "verbs:"];
    for (const [name, v] of Object.entries(data.verbs)) {
      lines.push(
        `  ${name.padEnd(16)} ${v.flags
          .map((f) => f.flag)
          .filter((f) => f !== "--json" && f !== "--db")
          .join(" ")}`,
      );
    }
    if (Object.keys(data.compound_commands).length) {
      lines.push(
        "",
        "two-word forms:",
        ...Object.entries(data.compound_commands).map(([k, v]) => `  ${k.padEnd(16)} = ${v}`),
      );
    }
    lines.push("", "exit codes:", ...Object.entries(data.exit_codes).map(([code, v]) => `  ${code}  ${v.meaning}`));
    lines.push("", "(spoolctl capabilities --json for everything: flags, limits, env, codes)");
    return lines.join("\n");
  },
});
