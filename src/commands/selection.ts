/**
 * Every suggested command keeps the queue it was given (README "Where the
 * queue lives"): a hint printed by a command that ran on `--db X` or
 * `SPOOLCTL_DB=X` says `spoolctl list --db X`, so following it never reaches
 * another queue (an empty one in the current folder, say). This is the one
 * place that writes the selection as flags and puts it into hints: error
 * remediations, warnings, the envelope's `commands`, and the hints verbs
 * print (`feedback`'s next command, `triage`'s `Next:` line, "more" lines).
 */

import type { VerbResult } from "../contract/envelope.ts";
import { SpoolError } from "../contract/errors.ts";
import { type QueueLocation, resolveLocation } from "../store/location.ts";
import { formatArgv } from "../ui/text.ts";
import { COMPOUND, VERB_NAMES } from "./names.ts";

/**
 * The queue selection as flags to repeat: `--db X` when `--db` or
 * `SPOOLCTL_DB` chose the queue (X absolute, or a PostgreSQL URL without its
 * password: PGPASSWORD and ~/.pgpass still supply it), "" when the folder
 * did (`.spoolctl/`, found again from the same folder).
 */
export function selectionFlags(location: Pick<QueueLocation, "dbPath" | "source">): string {
  return location.source === "flag" || location.source === "env" ? `--db ${formatArgv([location.dbPath])}` : "";
}

/** `spoolctl VERB` and `spoolctl GROUP ACTION`, longest first so `config set` wins over a verb named `config`. */
const COMMAND = new RegExp(
  `\\bspoolctl (${[
    ...Object.entries(COMPOUND).flatMap(([g, actions]) => Object.keys(actions).map((a) => `${g} ${a}`)),
    ...VERB_NAMES,
  ]
    .sort((a, b) => b.length - a.length)
    .join("|")})(?=$|[\\s)'"\`,;:.])(?! --db\\b)`,
  "g",
);

/** `text` with `flags` after every spoolctl command it names (`spoolctl retry 4` → `spoolctl retry --db X 4`). */
function carrySelection(text: string, flags: string): string {
  return flags === "" ? text : text.replace(COMMAND, (command) => `${command} ${flags}`);
}

/**
 * A function that puts the selection of `--db` (`flag`, or else
 * `SPOOLCTL_DB`) into hints; the location is resolved the first time a hint
 * needs it. A location that cannot be resolved leaves hints as they are (the
 * error about it is reported elsewhere).
 */
export function suggesterFor(flag: string | undefined, env = process.env): (text: string) => string {
  let flags: string | null = null;
  return (text) => {
    if (!text.includes("spoolctl ")) return text;
    if (flags === null) {
      try {
        flags = selectionFlags(resolveLocation(flag, env));
      } catch {
        flags = "";
      }
    }
    return carrySelection(text, flags);
  };
}

/**
 * The `--db` value written in `argv` (before a bare `--`), for the hints of an
 * error raised while argv is being split (`add --db X ls -la`): the split
 * values are not there yet. The last one wins, as the parser would refuse two.
 */
export function dbWritten(argv: string[]): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < argv.length && argv[i] !== "--"; i++) {
    if (argv[i] === "--db" && i + 1 < argv.length) value = argv[++i];
    else if (argv[i]!.startsWith("--db=")) value = argv[i]!.slice(5);
  }
  return value;
}

/** A verb's result with the selection in its warnings and `commands`. */
export function carryIntoResult<T>(result: VerbResult<T>, suggest: (text: string) => string): VerbResult<T> {
  return {
    ...result,
    ...(result.warnings && { warnings: result.warnings.map((w) => ({ ...w, message: suggest(w.message) })) }),
    ...(result.commands && { commands: result.commands.map(suggest) }),
  };
}

/** The error with the selection in its remediation. */
export function carryIntoError(error: SpoolError, suggest: (text: string) => string): SpoolError {
  const remediation = suggest(error.remediation);
  if (remediation === error.remediation) return error;
  return new SpoolError(error.code, error.message, {
    remediation,
    did_you_mean: error.did_you_mean,
    detail: error.detail,
  });
}
