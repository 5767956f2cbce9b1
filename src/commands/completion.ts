/**
 * `spoolctl completion bash|zsh|fish`: prints a completion script listing every
 * verb and each verb's flags, built from the verbs' own flag definitions.
 */
import type { FlagDef, VerbSpec } from "../contract/flags.ts";
import type { CompletionData } from "../describe/schemas-reports.ts";
import { type CompletionFlag, type CompletionVerb, renderCompletion, SHELLS } from "../ui/completion.ts";
import { type Catalog, defineVerb } from "./verb.ts";

const PATH_HINTS = /^(\[?(PATH|FILE|DIR)\]?)$/;

function toFlag(name: string, def: FlagDef): CompletionFlag {
  const hint = def.valueHint ?? "";
  return {
    name,
    alias: def.alias,
    description: def.description,
    takesValue: def.type === "string",
    repeatable: Boolean(def.repeatable),
    choices: def.choices,
    path: def.valueType === "path" || PATH_HINTS.test(hint),
  };
}

function describe(name: string, summary: string, verb: VerbSpec): CompletionVerb {
  const flags = Object.entries(verb.flags).filter(([, d]) => d.type !== "positional");
  const positionals = Object.values(verb.flags).filter((d) => d.type === "positional");
  return {
    name,
    summary,
    flags: flags.map(([n, d]) => toFlag(n, d)),
    positionalChoices: positionals.find((p) => p.choices?.length)?.choices,
    positionalFiles: positionals.some((p) => !p.choices?.length),
  };
}

/** Every verb and two-word group of the catalog, described for completion. */
function completionVerbs(catalog: Catalog): CompletionVerb[] {
  const out = catalog.verbs.map(({ spec, summary }) => describe(spec.name, summary, spec));
  // "dlq list" → "list --state dead": the group dlq, whose word list runs the verb list.
  const groups = new Map<string, Record<string, string>>();
  for (const [form, runs] of Object.entries(catalog.compound)) {
    const [group, sub] = form.split(" ") as [string, string];
    groups.set(group, { ...groups.get(group), [sub]: runs.split(" ")[0]! });
  }
  for (const [group, subcommands] of groups) {
    if (out.some((v) => v.name === group)) continue;
    const subs = Object.keys(subcommands);
    out.push({
      name: group,
      summary: subs.map((s) => `${group} ${s}`).join(", "),
      flags: [],
      positionalChoices: subs,
      positionalFiles: false,
      subcommands,
    });
  }
  return out;
}

export default defineVerb({
  name: "completion",
  description: "Print a shell completion script (verbs and each verb's flags) for bash, zsh or fish.",
  examples: [
    "spoolctl completion bash > ~/.local/share/bash-completion/completions/spoolctl",
    "echo 'eval \"$(spoolctl completion bash)\"' >> ~/.bashrc",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: zsh's own ${fpath[1]}, for the user's shell to expand
    'spoolctl completion zsh > "${fpath[1]}/_spoolctl"',
    "spoolctl completion fish > ~/.config/fish/completions/spoolctl.fish",
  ],
  flags: {
    json: { type: "boolean", description: "print one JSON envelope on stdout (the script in data.script)" },
    shell: {
      type: "positional",
      description: "bash, zsh or fish",
      valueHint: "SHELL",
      choices: SHELLS,
      valueType: "enum",
      required: true,
      noun: "a shell",
      hint: "spoolctl completion bash  (or zsh, fish)",
    },
  },
  async run(ctx) {
    const { shell } = ctx.args;
    return {
      data: { shell, script: renderCompletion(shell, completionVerbs(await ctx.catalog())) } satisfies CompletionData,
    };
  },
  render({ data }) {
    return data.script;
  },
});
