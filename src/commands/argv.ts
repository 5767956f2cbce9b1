/**
 * The first half of the parser: splits argv into flags and positionals by a
 * verb's definitions, strictly. citty renders `--help` from the same
 * definitions but accepts unknown flags and abbreviations, so the splitting is
 * ours (docs/contract.md "Error objects and warnings": an unknown flag is
 * `UNKNOWN_FLAG` with `did_you_mean`; flags are never abbreviated). Values are
 * checked afterwards by src/commands/args.ts.
 */
import { SpoolError } from "../contract/errors.ts";
import { closest, type FlagDef, type FlagsDef, type RawArgs } from "../contract/flags.ts";

/**
 * Splits argv by `defs`. Accepts `--name value`, `--name=value`, `-x value`,
 * `-xvalue`, boolean `--name` and `--name=true|false`; a bare `--` ends flag
 * parsing. Raises `UNKNOWN_FLAG` (with `did_you_mean`) for a flag `defs` does
 * not define, and `INVALID_INPUT` for a missing value, a boolean given another
 * value than true/false, and a non-repeatable flag given twice.
 */
export function splitArgv(argv: string[], defs: FlagsDef): RawArgs {
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
