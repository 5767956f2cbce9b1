/**
 * What a verb's flags and positionals are, as plain definitions and types,
 * and the spelling guess behind `did_you_mean`. One definition drives the
 * strict parser (src/commands/args.ts), `--help`, `capabilities` and shell
 * completion, so they cannot drift apart (docs/contract.md "Error objects and
 * warnings": unknown flags are rejected with a suggestion, never abbreviated).
 */
import type { BooleanArgDef, PositionalArgDef, StringArgDef } from "citty";

/**
 * What a value is. The parser checks it and hands the verb the parsed value:
 * `integer` and `number` (within `min`..`max`), `duration` (`30`, `90s`, `5m`,
 * `2h`, `1d`: seconds, within `min`..`max`) and `timestamp` (epoch seconds or
 * ISO-8601: epoch seconds) as numbers; `enum` (one of `choices`) as that
 * choice; `pair` (`KEY=VALUE`, a non-empty KEY) gathered into one object;
 * `path` (a non-blank path) and `string` and `json` as the text given.
 */
type ValueType = "string" | "integer" | "number" | "duration" | "timestamp" | "enum" | "pair" | "path" | "json";

/** A named grammar of a string value, checked by the parser: `lane` (a lane name), `worker-id` (a worker's name). */
export type StringFormat = "lane" | "worker-id";

/**
 * What every flag or positional may say beyond citty's own fields: read by the
 * strict parser (src/commands/args.ts), `capabilities` and completion. citty
 * ignores these fields when it renders `--help`.
 */
interface FlagFields {
  description: string;
  /** Shown in help after the flag, e.g. `SECONDS`; a positional's label in messages (`invalid value for SHELL`). */
  valueHint?: string;
  /** The flag may be given several times; its values are collected in order. */
  repeatable?: boolean;
  /** Positional: consumes every remaining positional argument (and everything after a bare `--`). */
  variadic?: boolean;
  /**
   * Positional: only the words after a bare `--` fill it (a job's command). A
   * word before `--` that is no flag's value is an error naming it, and so is a
   * command without `--` (`add ls -la`): the command is stored verbatim, so a
   * stray word must never become part of it.
   */
  afterDashDash?: boolean;
  /** What the value is (see {@link ValueType}); `string` when absent, `enum` implied by `choices`. Published by `capabilities`. */
  valueType?: ValueType;
  /** A named grammar the value must follow, beyond its type. */
  format?: StringFormat;
  /** A duration that also takes `none` (any case): no time limit (a job's timeout, parsed to 0). */
  allowsNone?: boolean;
  /** Smallest accepted value (seconds for durations). */
  min?: number;
  /** Largest accepted value (seconds for durations, epoch seconds for timestamps). */
  max?: number;
  /** The accepted values of an enumerated flag or positional. */
  choices?: readonly string[];
  /**
   * `choices` match whatever the case, blanks around, and `-` for `_`
   * (`MAX-RETRIES` is `max_retries`); the verb receives the listed spelling.
   */
  looseChoices?: boolean;
  /** One value may hold several, separated by this (`--state queued,running`); each is checked. */
  separator?: string;
  /** The verb fails with `MISSING_REQUIRED` without it. */
  required?: boolean;
  /**
   * A required positional that, at a terminal and without `--json`, the verb
   * asks for instead (a picker): only there may it be left out.
   */
  prompt?: boolean;
  /**
   * String flag whose value may be left out (`--markdown` or `--markdown FILE`):
   * given alone, or followed by another flag or nothing, its value is "".
   */
  optionalValue?: boolean;
  /**
   * How messages name one value, with its article: a positional's (`a job id`:
   * "show needs a job id", "show takes one job id"), and what a bad choice
   * should have been (`a terminal state`: "expected a terminal state: done, …").
   */
  noun?: string;
  /** The remediation of an error about this flag (a bad value, a missing one), when more precise than the code's default. */
  hint?: string;
}

/**
 * A switch: citty's `BooleanArgDef`. No default of `true`: citty would then
 * list a `--no-NAME` form, which the strict parser does not take.
 */
type BooleanFlagDef = Omit<BooleanArgDef, "alias" | "default"> &
  FlagFields & {
    type: "boolean";
    /** A one-letter short form, e.g. `c` for `-c`. */
    alias?: string;
    default?: false;
  };

/** A flag with a value: citty's `StringArgDef` (what the value is: `valueType`, `choices`). */
type StringFlagDef = Omit<StringArgDef, "alias"> &
  FlagFields & {
    type: "string";
    /** A one-letter short form, e.g. `c` for `-c`. */
    alias?: string;
    /** Shown in help and capabilities, and handed to the verb when the flag is left out (parsed like a given value). */
    default?: string;
  };

/**
 * A positional: citty's `PositionalArgDef`. `required` is always written out,
 * because citty reads a positional without it as required and the parser as
 * optional: spelled out, help and parser cannot disagree.
 */
type PositionalDef = PositionalArgDef &
  FlagFields & {
    type: "positional";
    required: boolean;
    alias?: undefined;
    default?: undefined;
  };

/**
 * One flag or positional of a verb: citty's argument definition (what
 * `renderUsage` reads, as is) with our fields alongside. Keys of
 * {@link FlagsDef} are the long names, kebab-case.
 */
export type FlagDef = BooleanFlagDef | StringFlagDef | PositionalDef;

/** A verb's flags and positionals, in help order. */
export type FlagsDef = Record<string, FlagDef>;

/** What describes a verb, without running it: what `--help`, `capabilities` and completion read. */
export interface VerbSpec<F extends FlagsDef = FlagsDef> {
  name: string;
  /** Other names that reach this verb (the QueueCTL two-word spellings, e.g. `config show`). */
  aliases?: string[];
  description: string;
  /** Usage lines shown under `--help`. */
  examples: string[];
  flags: F;
  /**
   * Whether the verb may change the queue (published by `capabilities`). A verb
   * without it opens the queue read-only, so a verb that writes must say so.
   */
  mutates?: boolean;
  /** The remediation when a verb without positionals is given arguments ("use --job ID for one job's events"). */
  noArgsHint?: string;
}

/** The argv as typed, split by the flag definitions before any value is checked. */
export interface RawArgs {
  /** Flag values by long name as given: string, boolean, or string[] for repeatable flags. */
  values: Record<string, string | boolean | string[]>;
  /** Positional arguments in order (before any `--`). */
  positionals: string[];
  /** Arguments after a bare `--`, verbatim; null when there was no `--`. */
  rest: string[] | null;
}

/** One checked value of a definition, before `repeatable` and defaults are taken into account. */
type ScalarOf<D extends FlagDef> = D extends { valueType: "integer" | "number" | "duration" | "timestamp" }
  ? number
  : D extends { choices: readonly (infer C extends string)[] }
    ? C
    : string;

/**
 * The value a verb receives for one definition: a boolean for a switch, an
 * object for `pair` flags, an array for repeatable flags and variadic
 * positionals, and otherwise the value, or undefined when it was left out and
 * has neither a default nor `required`.
 */
type ArgValue<D extends FlagDef> = D extends { type: "boolean" }
  ? boolean
  : D extends { valueType: "pair" }
    ? Record<string, string>
    : D extends { repeatable: true } | { variadic: true }
      ? ScalarOf<D>[]
      : D extends { prompt: true }
        ? ScalarOf<D> | undefined
        : D extends { default: string } | { required: true }
          ? ScalarOf<D>
          : ScalarOf<D> | undefined;

/** The checked, typed values of a verb's flags and positionals, by name. */
export type Args<F extends FlagsDef> = { -readonly [K in keyof F]: ArgValue<F[K]> };

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

/**
 * The candidate closest to `input` within a small edit distance, or null: the
 * `did_you_mean` of an unknown flag, verb, setting or choice. A guess keeps
 * something of the input ("--日本" is not a typo of "--db").
 */
export function closest(input: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = c.startsWith(input) || input.startsWith(c) ? Math.min(1, editDistance(input, c)) : editDistance(input, c);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(input.length / 3)) && bestDistance < input.length ? best : null;
}
