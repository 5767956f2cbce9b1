/**
 * `spoolctl completion bash|zsh|fish`: prints a completion script listing every
 * verb and each verb's flags, built from the verbs' own flag definitions.
 */
import { SpoolError, invalidValue } from "../contract/errors.ts";
import type { FlagDef } from "../contract/flags.ts";
import { renderCompletion, SHELLS, type CompletionFlag, type CompletionVerb, type Shell } from "../ui/completion.ts";
import { ALIASES, COMPOUND, VERBS } from "./registry.ts";
import { defineVerb, type Verb } from "./verb.ts";

/** `completion --json` data. */
export interface CompletionData {
  shell: Shell;
  script: string;
}

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

function describe(name: string, summary: string, verb: Verb<any>): CompletionVerb {
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

/** Every verb, alias and two-word group, described for completion (loads every verb module). */
export async function completionVerbs(): Promise<CompletionVerb[]> {
  const out: CompletionVerb[] = [];
  for (const [name, entry] of Object.entries(VERBS)) out.push(describe(name, entry.summary, await entry.load()));
  for (const [alias, target] of Object.entries(ALIASES)) {
    const entry = VERBS[target];
    if (entry && !VERBS[alias]) out.push(describe(alias, `alias of ${target}: ${entry.summary}`, await entry.load()));
  }
  for (const [group, subs] of Object.entries(COMPOUND)) {
    if (VERBS[group] || ALIASES[group]) continue;
    const subcommands = Object.fromEntries(Object.entries(subs).map(([sub, rewrite]) => [sub, rewrite([])[0] ?? sub]));
    out.push({ name: group, summary: Object.keys(subs).map((s) => `${group} ${s}`).join(", "), flags: [], positionalChoices: Object.keys(subs), positionalFiles: false, subcommands });
  }
  return out;
}

export default defineVerb<CompletionData>({
  name: "completion",
  description: "Print a shell completion script (verbs and each verb's flags) for bash, zsh or fish.",
  examples: [
    "spoolctl completion bash > ~/.local/share/bash-completion/completions/spoolctl",
    'echo \'eval "$(spoolctl completion bash)"\' >> ~/.bashrc',
    'spoolctl completion zsh > "${fpath[1]}/_spoolctl"',
    "spoolctl completion fish > ~/.config/fish/completions/spoolctl.fish",
  ],
  flags: {
    json: { type: "boolean", description: "print one JSON envelope on stdout (the script in data.script)" },
    shell: { type: "positional", description: "bash, zsh or fish", valueHint: "SHELL", choices: SHELLS, valueType: "enum", required: true },
  },
  async run(ctx) {
    const args = [...ctx.flags.positionals, ...(ctx.flags.rest ?? [])];
    if (args.length === 0) throw new SpoolError("MISSING_REQUIRED", "completion needs a shell: bash, zsh or fish", { remediation: "spoolctl completion bash  (or zsh, fish)" });
    if (args.length > 1) throw new SpoolError("INVALID_INPUT", `completion takes one shell (got ${args.length}: ${args.join(" ")})`);
    const shell = args[0]!;
    if (!(SHELLS as readonly string[]).includes(shell)) throw invalidValue("SHELL", shell, SHELLS.join(", "));
    return { data: { shell: shell as Shell, script: renderCompletion(shell as Shell, await completionVerbs()) } };
  },
  render({ data }) {
    return data.script;
  },
});
