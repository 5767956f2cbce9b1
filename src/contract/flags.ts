/**
 * Flag definitions and the strict argv parser. citty renders `--help` from the
 * same definitions, but it accepts unknown flags and abbreviations, so parsing is
 * ours (SPEC §6: unknown flags are rejected with a suggestion; no abbreviation).
 */
import { SpoolError } from "./errors.ts";

/** One flag or positional of a verb. Keys of {@link FlagsDef} are the long names, kebab-case. */
export interface FlagDef {
  type: "string" | "boolean" | "positional";
  description: string;
  /** Shown in help after the flag, e.g. `SECONDS`. */
  valueHint?: string;
  /** A one-letter short form, e.g. `c` for `-c`. */
  alias?: string;
  /** The flag may be given several times; its values are collected in order. */
  repeatable?: boolean;
  /** Default shown in help and capabilities (the verb applies it). */
  default?: string | boolean;
  /** Positional: consumes every remaining positional argument. */
  variadic?: boolean;
  /**
   * What the value means, for `capabilities` (the parser sees strings): e.g.
   * `integer`, `number`, `duration`, `timestamp`, `enum`, `pair`, `path`, `json`.
   * When absent, `capabilities` infers it from `valueHint`.
   */
  valueType?: string;
  /** Smallest accepted value (seconds for durations). */
  min?: number;
  /** Largest accepted value (seconds for durations). */
  max?: number;
  /** The accepted values of an enumerated flag or positional. */
  choices?: readonly string[];
  /** The verb fails with `MISSING_REQUIRED` without it. */
  required?: boolean;
  /**
   * String flag whose value may be left out (`--markdown` or `--markdown FILE`):
   * given alone, or followed by another flag or nothing, its value is "".
   */
  optionalValue?: boolean;
}

/** A verb's flags and positionals, in help order. */
export type FlagsDef = Record<string, FlagDef>;

/** The result of {@link parseFlags}. */
export interface ParsedFlags {
  /** Flag values by long name: string, boolean, or string[] for repeatable flags. */
  values: Record<string, string | boolean | string[]>;
  /** Positional arguments in order (before any `--`). */
  positionals: string[];
  /** Arguments after a bare `--`, verbatim; null when there was no `--`. */
  rest: string[] | null;
}

/** Levenshtein distance, for `did_you_mean`. */
function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

/** The closest candidate within a small edit distance, or null. */
export function closest(input: string, candidates: string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = c.startsWith(input) || input.startsWith(c) ? Math.min(1, editDistance(input, c)) : editDistance(input, c);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  // A guess must keep something of the input ("--日本" is not a typo of "--db").
  return bestDistance <= Math.max(2, Math.floor(input.length / 3)) && bestDistance < input.length ? best : null;
}

/**
 * Parses argv strictly against `defs`.
 * Accepts `--name value`, `--name=value`, `-x value`, boolean `--name`; a bare `--`
 * ends flag parsing. Rejects unknown flags (`UNKNOWN_FLAG` with `did_you_mean`),
 * a missing value, a boolean given a value other than true/false, and a
 * non-repeatable flag given twice (`INVALID_INPUT`).
 */
export function parseFlags(argv: string[], defs: FlagsDef): ParsedFlags {
  const values: ParsedFlags["values"] = {};
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
      shown = "--" + raw;
      const def = Object.hasOwn(defs, raw) ? defs[raw] : undefined; // "--constructor" is no flag
      if (!def || def.type === "positional") {
        const guess = closest(raw, flagNames);
        throw new SpoolError("UNKNOWN_FLAG", `unknown flag ${shown}` + (guess ? ` (did you mean --${guess}?)` : ""), {
          did_you_mean: guess ? `--${guess}` : null,
          detail: { flag: shown },
        });
      }
      name = raw;
    } else if (arg.length >= 2 && arg[0] === "-" && !/^-\d/.test(arg)) {
      const short = arg.slice(1, 2);
      name = byAlias.get(short);
      shown = "-" + short;
      if (!name) {
        throw new SpoolError("UNKNOWN_FLAG", `unknown flag ${shown}`, { did_you_mean: null, detail: { flag: shown } });
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
      else throw new SpoolError("INVALID_INPUT", `${shown} is a switch and takes no value (got ${JSON.stringify(inline)})`, { detail: { flag: shown, value: inline } });
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
