/**
 * The first half of the parser: splits argv into flags and positionals by a
 * verb's definitions, strictly. citty renders `--help` from the same
 * definitions, but its parser takes unknown flags, camelCase spellings and
 * `--no-NAME` forms, so the splitting is ours (docs/contract.md "Error objects and warnings": an unknown flag is
 * `UNKNOWN_FLAG` with `did_you_mean`; flags are never abbreviated). Values are
 * checked afterwards by src/commands/args.ts.
 */
import { readFileSync } from "node:fs";
import { SpoolError } from "../contract/errors.ts";
import { closest, type FlagDef, type FlagsDef, type RawArgs } from "../contract/flags.ts";
import { formatArgv } from "../ui/text.ts";

/**
 * A stray word as errors may show it: an assignment `NAME=value` (a
 * forgotten `--env`) loses its value, which is often a secret (docs/contract.md
 * "Error objects and warnings"): `API_TOKEN=…`. Other words are shown as given.
 */
function shownWord(word: string): string {
  const m = /^([A-Za-z_][A-Za-z0-9_.-]*)=./s.exec(word);
  return m ? `${m[1]}=…` : word;
}

/** The remediation's hint when stray words include an assignment (see {@link shownWord}). */
export function strayHint(words: string[]): string {
  const names = words.filter((w) => shownWord(w) !== w).map((w) => w.slice(0, w.indexOf("=")));
  return names.length ? `; to give the job a variable: --env ${names[0]}=…` : "";
}

/** Stray words quoted for a message, assignments without their values. */
export function strayWords(words: string[], sep: string): string {
  return words.map((w) => JSON.stringify(shownWord(w))).join(sep);
}

/** The stray words for `detail.arguments`, assignments without their values. */
export function strayDetail(words: string[]): string[] {
  return words.map(shownWord);
}

/**
 * The error for a command written without a bare `--` before it (`add ls -la`,
 * `add echo hi`), for a positional that only `--` may fill
 * ({@link FlagDef.afterDashDash}): `INVALID_INPUT` showing the words after `--`.
 */
export function commandWithoutDashDash(words: string[], def: FlagDef): SpoolError {
  const fixed = `-- ${formatArgv(strayDetail(words))}`;
  return new SpoolError(
    "INVALID_INPUT",
    `${strayWords(words, " ")} is no flag's value: the command goes after a bare -- (or in one -c 'SHELL STRING'), so that its flags are not taken for spoolctl's: write ${fixed}`,
    {
      remediation: (def.hint ?? `write the flags first, then ${fixed}`) + strayHint(words),
      detail: { arguments: strayDetail(words) },
    },
  );
}

/**
 * Splits argv by `defs`. Accepts `--name value`, `--name=value`, `-x value`,
 * `-xvalue`, boolean `--name` and `--name=true|false`; a bare `--` ends flag
 * parsing. Raises `UNKNOWN_FLAG` (with `did_you_mean`) for a flag `defs` does
 * not define, and `INVALID_INPUT` for a missing value, a boolean given another
 * value than true/false, and a non-repeatable flag given twice. `verb` (the
 * words as typed, e.g. `config set`) makes the unknown flag's remediation the
 * command that lists the flags.
 */
export function splitArgv(argv: string[], defs: FlagsDef, verb?: string): RawArgs {
  const helpHint = verb ? { remediation: `spoolctl ${verb} --help lists its flags` } : {};
  const dashDashOnly = Object.values(defs).find((d) => d.afterDashDash);
  // Positionals defined before the command (`schedule add NAME … -- CMD`) come before the `--`.
  const leading = Object.values(defs).filter((d) => d.type === "positional" && !d.afterDashDash).length;
  const values: RawArgs["values"] = {};
  const positionals: string[] = [];
  let rest: string[] | null = null;
  const byAlias = new Map<string, string>();
  for (const [name, def] of Object.entries(defs)) if (def.alias) byAlias.set(def.alias, name);
  const flagNames = Object.entries(defs)
    .filter(([, d]) => d.type !== "positional")
    .map(([n]) => n);

  const assign = (name: string, def: FlagDef, value: string | boolean, shown: string) => {
    if (def.repeatable) {
      const list = (values[name] as string[] | undefined) ?? [];
      list.push(String(value));
      values[name] = list;
      return;
    }
    if (Object.hasOwn(values, name)) {
      throw new SpoolError("INVALID_INPUT", `${shown} was given more than once`, {
        remediation: `give ${shown} once`,
        detail: { flag: shown },
      });
    }
    values[name] = value;
  };

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      rest = argv.slice(i + 1);
      break;
    }
    let name: string | undefined;
    let inline: string | undefined;
    let shown = arg;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const raw = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq === -1 ? undefined : arg.slice(eq + 1);
      shown = `--${raw}`;
      const def = Object.hasOwn(defs, raw) ? defs[raw] : undefined; // "--constructor" is no flag
      if (dashDashOnly && positionals.length > leading)
        throw commandWithoutDashDash(argv.slice(argv.indexOf(positionals[leading]!)), dashDashOnly);
      if (!def || def.type === "positional") {
        const guess = closest(raw, flagNames);
        throw new SpoolError("UNKNOWN_FLAG", `unknown flag ${shown}${guess ? ` (did you mean --${guess}?)` : ""}`, {
          ...helpHint,
          did_you_mean: guess ? `--${guess}` : null,
          detail: { flag: shown },
        });
      }
      name = raw;
    } else if (arg.length >= 2 && arg[0] === "-" && !/^-\d/.test(arg)) {
      const short = arg.slice(1, 2);
      name = byAlias.get(short);
      shown = `-${short}`;
      if (dashDashOnly && positionals.length > leading)
        throw commandWithoutDashDash(argv.slice(argv.indexOf(positionals[leading]!)), dashDashOnly);
      if (!name) {
        throw new SpoolError("UNKNOWN_FLAG", `unknown flag ${shown}`, {
          ...helpHint,
          did_you_mean: null,
          detail: { flag: shown },
        });
      }
      if (arg.length > 2) inline = arg.slice(2).replace(/^=/, "");
    } else {
      positionals.push(arg);
      continue;
    }
    const def = defs[name]!;
    if (def.type === "boolean") {
      if (inline === undefined) assign(name, def, true, shown);
      else if (inline === "true" || inline === "false") assign(name, def, inline === "true", shown);
      else
        throw new SpoolError(
          "INVALID_INPUT",
          `${shown} is a switch and takes no value (got ${JSON.stringify(inline)})`,
          { detail: { flag: shown, value: inline } },
        );
      continue;
    }
    let value = inline;
    if (value === undefined) {
      const next = argv[i + 1];
      if (def.optionalValue && (next === undefined || next === "--" || (next.startsWith("-") && next.length > 1))) {
        assign(name, def, "", shown);
        continue;
      }
      if (next === undefined || next === "--" || (next.startsWith("--") && next.length > 2)) {
        throw new SpoolError("INVALID_INPUT", `${shown} needs a value${def.valueHint ? ` (${def.valueHint})` : ""}`, {
          remediation: `write ${shown} ${def.valueHint ?? "VALUE"}`,
          detail: { flag: shown },
        });
      }
      value = next;
      i++;
    }
    assign(name, def, value, shown);
  }
  return { values, positionals, rest };
}

/**
 * The flags of `globals` (the queue selection and `--json`: COMMON_FLAGS)
 * written before the verb, as in `spoolctl --db X status`: returns them and
 * the argv from the verb on, so the runner can hand them to the verb as if
 * written after it. Stops at the first word that is not such a flag; a
 * string flag takes the next word as its value (or `--db=X`).
 */
export function leadingGlobals(argv: string[], globals: FlagsDef): { globals: string[]; rest: string[] } {
  let i = 0;
  while (i < argv.length) {
    const arg = argv[i]!;
    if (!arg.startsWith("--") || arg === "--") break;
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const def = Object.hasOwn(globals, name) ? globals[name] : undefined;
    if (!def || def.type === "positional") break;
    i += def.type === "string" && eq === -1 && i + 1 < argv.length ? 2 : 1;
  }
  return { globals: argv.slice(0, i), rest: argv.slice(i) };
}

/** The bytes of `bytes` with what is not printable ASCII written `\xNN`. */
function escapedBytes(bytes: Uint8Array): string {
  return Array.from(bytes, (b) =>
    b >= 0x20 && b < 0x7f && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, "0")}`,
  ).join("");
}

/**
 * Refuses arguments that are not valid UTF-8 (README "Adding jobs"): the
 * runtime hands them over with U+FFFD in place of the bytes, so a job would
 * silently receive other bytes than were typed. Only when an argument holds
 * U+FFFD are the exact bytes read, from `/proc/self/cmdline` (its last
 * `argv.length` entries, when they are these arguments). Raises
 * `INVALID_INPUT` naming the argument with its bytes escaped.
 */
export function refuseInvalidUtf8(argv: string[], cmdline = "/proc/self/cmdline"): void {
  if (!argv.some((a) => a.includes("\uFFFD"))) return;
  let entries: Uint8Array[];
  try {
    const raw = readFileSync(cmdline);
    entries = [];
    let start = 0;
    for (let i = 0; i < raw.length; i++) {
      if (raw[i] !== 0) continue;
      entries.push(raw.subarray(start, i));
      start = i + 1;
    }
  } catch {
    return; // no /proc: nothing more to know
  }
  const ours = entries.slice(entries.length - argv.length);
  if (ours.length !== argv.length || ours.some((b, i) => new TextDecoder().decode(b) !== argv[i])) return;
  const strict = new TextDecoder("utf-8", { fatal: true });
  ours.forEach((bytes, i) => {
    try {
      strict.decode(bytes);
    } catch {
      throw new SpoolError(
        "INVALID_INPUT",
        `argument ${i + 1} is not valid UTF-8 ("${escapedBytes(bytes)}"): commands, flags and values are stored as UTF-8 text, and these bytes would reach the job changed; nothing was done`,
        {
          remediation: "pass text, or let the job's shell make the bytes: spoolctl add -c \"printf '\\377\\376'\"",
          detail: { argument: i + 1, bytes: escapedBytes(bytes) },
        },
      );
    }
  });
}
