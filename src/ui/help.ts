/**
 * `--help` text. A verb's usage is rendered by citty straight from the verb's
 * own flag definitions (the ones the strict parser reads: they are citty
 * argument definitions, src/contract/flags.ts), followed by what citty does not
 * know: which flags repeat, the verb's other names, and its examples.
 *
 * citty stops there on purpose (docs/contract.md "Error objects and
 * warnings", "Exit codes and codes"): `runMain` prints usage with
 * `console.log` and exits 1 on any error, with no envelope; `runCommand`
 * re-parses argv with citty's `parseArgs`, which takes unknown flags (and
 * binds their values to positionals), camelCase spellings and `--no-NAME`,
 * and throws its own errors for a missing positional (before a picker could
 * ask); `subCommands` cannot say `dlq list` = `list --state dead`. Dispatch
 * and parsing are therefore ours (src/cli.ts, src/commands/argv.ts).
 */
import { type CommandDef, defineCommand, renderUsage } from "citty";
import type { VerbSpec } from "../contract/flags.ts";
import { TOOL_VERSION } from "../contract/version.ts";
import { isTerminal } from "./stdio.ts";

/** The root of every verb's usage line (`spoolctl add …`, `spoolctl v0.1.0`). */
const ROOT = defineCommand({ meta: { name: "spoolctl", version: TOOL_VERSION } });

const ANSI = /\u001b\[[0-9;]*m/g;

/** citty colors unconditionally; keep color for a terminal only, and never with NO_COLOR. */
function maybeColor(text: string): string {
  const trimmed = text
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n"); // citty pads every row to the widest
  return isTerminal(1) && !process.env.NO_COLOR ? trimmed : trimmed.replace(ANSI, "");
}

/** The usage of one verb, with examples; colored only on a terminal. */
export async function verbUsage(verb: VerbSpec): Promise<string> {
  // Typed as citty's own CommandDef: a flag definition that citty could not read would not compile.
  const cmd: CommandDef = { meta: { name: verb.name, description: verb.description }, args: verb.flags };
  const usage = maybeColor(await renderUsage(cmd, ROOT));
  const repeatable = Object.entries(verb.flags).filter(([, d]) => d.repeatable);
  const repeats = repeatable.length
    ? `\nRepeatable (give once per value): ${repeatable.map(([name]) => `--${name}`).join(", ")}\n`
    : "";
  const aliases = verb.aliases?.length ? `\nAliases: ${verb.aliases.join(", ")}\n` : "";
  return `${usage}\n${repeats}${aliases}\nExamples:\n${verb.examples.map((e) => `  ${e}`).join("\n")}\n`;
}

/** The root usage: every verb (name → one-line summary, in the order given) with its summary. */
export function rootUsage(summaries: Readonly<Record<string, string>>): string {
  const width = Math.max(...Object.keys(summaries).map((n) => n.length));
  const lines = Object.entries(summaries).map(([name, summary]) => `  ${name.padEnd(width)}  ${summary}`);
  return [
    `spoolctl ${TOOL_VERSION}: a daemonless, crash-safe job queue for shell commands`,
    "",
    "Usage: spoolctl <command> [flags]   (spoolctl <command> --help for details)",
    "",
    "Commands:",
    ...lines,
    "",
    "Quick start:",
    "  spoolctl add -- echo hello      # queue a command",
    "  spoolctl work --drain           # run everything queued, then exit",
    "  spoolctl output 1               # read what it printed",
  ].join("\n");
}

/**
 * The usage of a two-word group (`config`, `worker`, `dlq`): its actions, each
 * with the summary of the verb it runs and, when it adds words, what it runs
 * (`dlq list` = `list --state dead`).
 */
export function groupUsage(
  group: string,
  actions: Record<string, (rest: string[]) => string[]>,
  summaries: Readonly<Record<string, string>>,
): string {
  const width = Math.max(...Object.keys(actions).map((a) => a.length));
  const lines = Object.entries(actions).map(([action, rewrite]) => {
    const target = rewrite([]);
    const summary = summaries[target[0]!] ?? "";
    const same = target.length > 1 || !target[0]!.startsWith(`${group}-`) ? `  (= spoolctl ${target.join(" ")})` : "";
    return `  ${action.padEnd(width)}  ${summary}${same}`;
  });
  return [
    `Usage: spoolctl ${group} <action> [flags]   (spoolctl ${group} <action> --help for its flags)`,
    "",
    "Actions:",
    ...lines,
  ].join("\n");
}
