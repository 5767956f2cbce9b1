/**
 * The second half of the parser: checks argv, as split by src/commands/argv.ts,
 * against the verb's own definitions, and hands the verb typed values. What a
 * definition says is what is enforced: the value's type and range, its
 * choices, its format, `required`, `repeatable`, and how many positionals the
 * verb takes and what each is called. A verb never checks these again.
 *
 * Errors follow docs/contract.md "Error objects and warnings": a bad value is
 * `INVALID_INPUT` naming the flag, the value and what is accepted; a missing
 * flag or argument is `MISSING_REQUIRED`; both carry the definition's `hint` as
 * remediation when it has one.
 */
import { invalidValue, SpoolError } from "../contract/errors.ts";
import {
  type Args,
  closest,
  type FlagDef,
  type FlagsDef,
  type RawArgs,
  type StringFormat,
  type VerbSpec,
} from "../contract/flags.ts";
import {
  parseDuration,
  parseInteger,
  parseLane,
  parseNumber,
  parsePairs,
  parseTimestamp,
  splitList,
} from "../ops/values.ts";
import { formatArgv } from "../ui/text.ts";
import { commandWithoutDashDash, strayDetail, strayHint, strayWords } from "./argv.ts";

/** How a verb was called, for {@link checkArgs}. */
export interface CheckOptions {
  /** The verb as the user wrote it (`config set`, `show`), for messages. */
  spoken: string;
  /** Whether a `prompt` positional may be left out: a terminal, and no `--json`. */
  canAsk: boolean;
}

/** What a worker may be called: the registry's key, shown in `workers` and matched by `stop --worker-id`. */
const WORKER_ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;

/** The named string grammars of {@link StringFormat}; each raises `INVALID_INPUT` naming `label`. */
const FORMATS: Record<StringFormat, (label: string, raw: string) => void> = {
  lane: (label, raw) => void parseLane(label, raw),
  "worker-id": (label, raw) => {
    if (!WORKER_ID.test(raw)) throw invalidValue(label, raw, "1-128 letters, digits, '.', '_', ':', '@' or '-'");
  },
};

const LARGEST = Number.MAX_SAFE_INTEGER;

/** Runs `check`, giving its `INVALID_INPUT` the definition's hint as remediation. */
function withHint<T>(def: FlagDef, check: () => T): T {
  if (def.hint === undefined) return check();
  try {
    return check();
  } catch (error) {
    if (!(error instanceof SpoolError)) throw error;
    throw new SpoolError(error.code, error.message, {
      remediation: def.hint,
      did_you_mean: error.did_you_mean,
      detail: error.detail,
    });
  }
}

/** The listed spelling `raw` names, or `INVALID_INPUT` with the closest choice as `did_you_mean`. */
function choice(def: FlagDef, label: string, raw: string): string {
  const choices = def.choices!;
  const spell = (s: string) => (def.looseChoices ? s.trim().toLowerCase().replaceAll("-", "_") : s);
  const wanted = spell(raw);
  const found = choices.find((c) => spell(c) === wanted);
  if (found !== undefined) return found;
  const error = invalidValue(label, raw, `${def.noun ? `${def.noun}:` : "one of"} ${choices.join(", ")}`);
  const guess = closest(wanted, choices);
  if (guess === null) throw error;
  throw new SpoolError("INVALID_INPUT", `${error.message}; did you mean ${guess}?`, {
    did_you_mean: guess,
    detail: error.detail,
  });
}

/** One value of `def`, checked and converted; `label` names it in messages (`--limit`, `SHELL`). */
function checkOne(def: FlagDef, label: string, raw: string): unknown {
  if (def.optionalValue && raw === "") return raw; // the value was left out
  if (def.choices) return choice(def, label, raw);
  let value: unknown = raw;
  switch (def.valueType) {
    case "integer":
      value = parseInteger(label, raw, def.min ?? -LARGEST, def.max ?? LARGEST);
      break;
    case "number":
      value = parseNumber(label, raw, def.min ?? -LARGEST, def.max ?? LARGEST);
      break;
    case "duration":
      // allowsNone: `none` (no time limit) is 0; the verb reads the text as typed (parseTimeout).
      value = parseDuration(label, raw, def.min ?? 0, def.max ?? LARGEST, def.allowsNone === true);
      break;
    case "timestamp":
      // Only the grammar unless the definition bounds it: a bound relative to now (add --at) is the operation's rule.
      value = parseTimestamp(label, raw, {
        at: def.max ?? Infinity,
        rule: `a time no later than ${def.max} (epoch seconds)`,
      });
      break;
    case "path":
      if (raw.trim() === "" || raw.includes("\0")) throw invalidValue(label, raw, "a path");
      break;
  }
  if (def.format) FORMATS[def.format](label, raw);
  return value;
}

/** A flag's value(s) as given: checked, and gathered as the definition says. */
function flagValue(def: FlagDef, label: string, given: string | boolean | string[]): unknown {
  if (def.type === "boolean") return given === true;
  const raws = (Array.isArray(given) ? given : [String(given)]).flatMap((r) =>
    def.separator ? splitList(r, def.separator) : [r],
  );
  return withHint(def, () => {
    if (def.valueType === "pair") return parsePairs(label, raws, /^.+$/, "non-empty");
    const values = raws.map((r) => checkOne(def, label, r));
    return def.repeatable ? values : values[0];
  });
}

/** What a verb receives for a flag or positional left out: its default, or nothing. */
function absent(def: FlagDef, label: string): unknown {
  if (def.type === "boolean") return false;
  if (def.valueType === "pair") return {};
  if (def.repeatable || def.variadic) return [];
  return def.default === undefined ? undefined : withHint(def, () => checkOne(def, label, String(def.default)));
}

/** How messages name a positional: "a job id". */
function noun(name: string, def: FlagDef): string {
  return def.noun ?? def.valueHint ?? name;
}

/**
 * Positionals: the words before and after a bare `--`, handed out in
 * definition order; a variadic positional takes every remaining word.
 */
function positionals(spec: VerbSpec, raw: RawArgs, opts: CheckOptions): Record<string, unknown> {
  const words = [...raw.positionals, ...(raw.rest ?? [])];
  const defs = Object.entries(spec.flags).filter(([, d]) => d.type === "positional");
  const dashDashOnly = defs.find(([, d]) => d.afterDashDash)?.[1];
  // Positionals defined before the command (`schedule add NAME … -- CMD`) are typed before the `--`.
  const leading = defs.filter(([, d]) => !d.afterDashDash).length;
  if (dashDashOnly && raw.positionals.length > leading) {
    const strays = raw.positionals.slice(leading);
    if (raw.rest === null) throw commandWithoutDashDash(strays, dashDashOnly);
    const stray = strayWords(strays, ", ");
    throw new SpoolError(
      "INVALID_INPUT",
      `${opts.spoken}: ${stray} before -- is no flag's value (a value is one word: --timeout 5m, --note "two words"); nothing was added`,
      {
        remediation:
          "quote a value that holds spaces, put the command after --, and nothing else between the flags" +
          strayHint(strays),
        detail: { arguments: strayDetail(strays) },
      },
    );
  }
  if (defs.length === 0 && words.length) {
    throw new SpoolError(
      "INVALID_INPUT",
      `${opts.spoken} takes no arguments (got ${JSON.stringify(strayDetail(words).join(" "))})`,
      { remediation: spec.noArgsHint },
    );
  }
  if (!defs.some(([, d]) => d.variadic) && words.length > defs.length) {
    const what =
      defs.length === 1 ? noun(...defs[0]!).replace(/^an? /, "one ") : defs.map(([n, d]) => noun(n, d)).join(" and ");
    throw new SpoolError(
      "INVALID_INPUT",
      `${opts.spoken} takes ${what} (got ${words.length}: ${strayDetail(words).join(" ")})`,
      { remediation: defs[0]![1].hint },
    );
  }
  const missing = defs.filter(([, d], i) => i >= words.length && d.required && !(d.prompt && opts.canAsk));
  if (missing.length) {
    throw new SpoolError(
      "MISSING_REQUIRED",
      `${opts.spoken} needs ${missing.map(([n, d]) => noun(n, d)).join(" and ")}`,
      { remediation: missing[0]![1].hint },
    );
  }
  const out: Record<string, unknown> = {};
  defs.forEach(([name, def], i) => {
    const label = def.valueHint ?? name;
    if (def.variadic) out[name] = withHint(def, () => words.slice(i).map((w) => checkOne(def, label, w)));
    else out[name] = i < words.length ? withHint(def, () => checkOne(def, label, words[i]!)) : absent(def, label);
  });
  return out;
}

/**
 * A flag's hint with the positionals the user already gave in place of their
 * placeholders (`lane set gpu` missing `--slots`: `spoolctl lane set gpu --slots N`,
 * not `… LANE …`), so the suggested command can be run as shown.
 */
function withGivenWords(spec: VerbSpec, raw: RawArgs, hint: string): string {
  const defs = Object.values(spec.flags).filter((d) => d.type === "positional");
  return defs.reduce((text, def, i) => {
    const word = raw.positionals[i];
    if (word === undefined || def.valueHint === undefined || def.variadic) return text;
    const placeholder = def.valueHint.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    return text.replace(new RegExp(`(?<![\\w-])${placeholder}(?![\\w-])`), () => formatArgv([word]));
  }, hint);
}

/**
 * Checks split argv against `spec`'s definitions and returns the typed values
 * by name: flags in the order they were typed (so the first mistake is the one
 * reported), then the flags left out (defaults, or `MISSING_REQUIRED` for a
 * required one), then the positionals. Raises `INVALID_INPUT` for a bad value,
 * too many arguments or arguments to a verb that takes none, and
 * `MISSING_REQUIRED` for a missing required flag or positional.
 */
export function checkArgs<F extends FlagsDef>(spec: VerbSpec<F>, raw: RawArgs, opts: CheckOptions): Args<F> {
  const out: Record<string, unknown> = {};
  for (const [name, given] of Object.entries(raw.values)) out[name] = flagValue(spec.flags[name]!, `--${name}`, given);
  for (const [name, def] of Object.entries(spec.flags)) {
    if (def.type === "positional" || Object.hasOwn(out, name)) continue;
    if (def.required) {
      throw new SpoolError(
        "MISSING_REQUIRED",
        `${opts.spoken} needs --${name}${def.valueHint ? ` ${def.valueHint}` : ""}`,
        { remediation: def.hint === undefined ? undefined : withGivenWords(spec, raw, def.hint) },
      );
    }
    out[name] = absent(def, `--${name}`);
  }
  Object.assign(out, positionals(spec, raw, opts));
  return out as Args<F>;
}
