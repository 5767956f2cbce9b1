/**
 * The parser (src/commands/argv.ts + src/commands/args.ts) in-process: what a
 * flag definition says is what is enforced, and the verb receives typed
 * values. The last tests hold every registered verb's definitions to the same
 * rules, so a definition cannot promise what the parser does not check, and
 * `--help` (citty rendering the same definitions) cannot show what it does not take.
 */
import { expect, test } from "bun:test";
import { type CheckOptions, checkArgs } from "../src/commands/args.ts";
import { splitArgv } from "../src/commands/argv.ts";
import { VERBS } from "../src/commands/registry.ts";
import { SpoolError } from "../src/contract/errors.ts";
import type { FlagsDef, VerbSpec } from "../src/contract/flags.ts";
import { verbUsage } from "../src/ui/help.ts";

const DEFS = {
  json: { type: "boolean", description: "" },
  limit: { type: "string", description: "", valueHint: "N", valueType: "integer", default: "50", min: 1, max: 100 },
  wait: {
    type: "string",
    description: "",
    valueHint: "DURATION",
    valueType: "duration",
    min: 0,
    max: 3600,
    hint: "try --wait 30s",
  },
  ratio: { type: "string", description: "", valueHint: "SECONDS", valueType: "number", min: 0.5, max: 2 },
  state: {
    type: "string",
    description: "",
    repeatable: true,
    separator: ",",
    looseChoices: true,
    choices: ["queued", "dead", "max_retries"],
  },
  stream: { type: "string", description: "", choices: ["stdout", "stderr", "both"], default: "both" },
  tag: { type: "string", description: "", repeatable: true, valueType: "pair" },
  queue: { type: "string", description: "", format: "lane" },
  out: { type: "string", description: "", valueType: "path" },
  "older-than": { type: "string", description: "", valueHint: "DURATION", valueType: "duration", min: 0, max: 60 },
  id: { type: "positional", description: "", valueHint: "ID", required: true, noun: "a job id", hint: "spoolctl x ID" },
} as const satisfies FlagsDef;

const SPEC: VerbSpec<typeof DEFS> = { name: "x", description: "", examples: [], flags: DEFS };
const OPTS: CheckOptions = { spoken: "x", canAsk: false };

/** Splits and checks `argv` against `spec`; the values by name. */
function parse(argv: string[], spec: VerbSpec = SPEC, opts: CheckOptions = OPTS): Record<string, unknown> {
  return checkArgs(spec, splitArgv(argv, spec.flags), opts);
}

/** The SpoolError `run` throws. */
function failure(run: () => unknown): SpoolError {
  try {
    run();
  } catch (error) {
    if (error instanceof SpoolError) return error;
    throw error;
  }
  throw new Error("expected a SpoolError");
}

test("values arrive typed, defaults filled in and parsed like given values", () => {
  const args = parse([
    "7",
    "--wait",
    "2m",
    "--ratio=1.5",
    "--json",
    "--tag",
    "a=1",
    "--tag",
    "b=2=3",
    "--queue",
    "builds",
  ]);
  expect(args).toEqual({
    json: true,
    limit: 50,
    wait: 120,
    ratio: 1.5,
    state: [],
    stream: "both",
    tag: { a: "1", b: "2=3" },
    queue: "builds",
    out: undefined,
    "older-than": undefined,
    id: "7",
  });
  // After a bare --, words are positionals too.
  expect(parse(["--", "8"]).id).toBe("8");
});

test("numbers: the flag, the value and the range are named; the definition's hint is the remediation", () => {
  const e = failure(() => parse(["1", "--limit", "0"]));
  expect([e.code, e.message]).toEqual([
    "INVALID_INPUT",
    'invalid value for --limit: "0" (expected an integer from 1 to 100)',
  ]);
  expect(e.detail).toEqual({ flag: "--limit", value: "0", accepted: "an integer from 1 to 100" });
  const w = failure(() => parse(["1", "--wait", "2h"]));
  expect(w.message).toContain("from 0s to 1h");
  expect(w.remediation).toBe("try --wait 30s");
  expect(failure(() => parse(["1", "--ratio", "3"])).message).toContain("a number from 0.5 to 2");
});

test("choices: exact unless loose; comma lists; the closest choice is did_you_mean", () => {
  expect(parse(["1", "--state", " DEAD ,queued", "--state", "MAX-RETRIES"]).state).toEqual([
    "dead",
    "queued",
    "max_retries",
  ]);
  const e = failure(() => parse(["1", "--state", "daed"]));
  expect(e.message).toBe(
    'invalid value for --state: "daed" (expected one of queued, dead, max_retries); did you mean dead?',
  );
  expect(e.did_you_mean).toBe("dead");
  expect(failure(() => parse(["1", "--state", "queued,"])).message).toContain('""');
  // Not loose: the case matters; prototype names are values like any other.
  expect(failure(() => parse(["1", "--stream", "STDOUT"])).code).toBe("INVALID_INPUT");
  expect(failure(() => parse(["1", "--stream", "constructor"])).did_you_mean).toBeUndefined();
});

test("pairs, lanes and paths follow their grammar", () => {
  expect(failure(() => parse(["1", "--tag", "novalue"])).message).toContain("KEY=VALUE");
  expect(parse(["1", "--tag", "__proto__=x"]).tag).toEqual(Object.fromEntries([["__proto__", "x"]]));
  expect(failure(() => parse(["1", "--queue", "has space"])).message).toContain("lane name");
  expect(failure(() => parse(["1", "--out", " "])).message).toContain("a path");
});

test("positionals: arity and names from the definitions", () => {
  const missing = failure(() => parse([]));
  expect([missing.code, missing.message, missing.remediation]).toEqual([
    "MISSING_REQUIRED",
    "x needs a job id",
    "spoolctl x ID",
  ]);
  const many = failure(() => parse(["1", "2"]));
  expect([many.code, many.message]).toEqual(["INVALID_INPUT", "x takes one job id (got 2: 1 2)"]);
  const none: VerbSpec<{ json: (typeof DEFS)["json"] }> = {
    name: "y",
    description: "",
    examples: [],
    flags: { json: DEFS.json },
    noArgsHint: "use --job",
  };
  const extra = failure(() => parse(["a", "--", "b c"], none, { spoken: "dlq list", canAsk: false }));
  expect([extra.message, extra.remediation]).toEqual(['dlq list takes no arguments (got "a b c")', "use --job"]);
});

test("required flags, and a prompt positional that only a person at a terminal may leave out", () => {
  const flags = {
    "older-than": { ...DEFS["older-than"], required: true, hint: "spoolctl y --older-than 7d" },
    ids: { type: "positional", description: "", variadic: true, required: true, prompt: true, noun: "job ids" },
  } as const satisfies FlagsDef;
  const spec: VerbSpec<typeof flags> = { name: "y", description: "", examples: [], flags };
  const e = failure(() => parse(["1"], spec));
  expect([e.code, e.message, e.remediation]).toEqual([
    "MISSING_REQUIRED",
    "x needs --older-than DURATION",
    "spoolctl y --older-than 7d",
  ]);
  expect(failure(() => parse(["--older-than", "1"], spec)).message).toBe("x needs job ids");
  expect(parse(["--older-than", "1"], spec, { spoken: "y", canAsk: true })).toEqual({ "older-than": 1, ids: [] });
  expect(parse(["--older-than", "1", "4", "5"], spec).ids).toEqual(["4", "5"]);
});

// --- every registered verb's definitions --------------------------------------

const specs = await Promise.all(Object.values(VERBS).map(({ load }) => load()));

test("every value hint agrees with the value type the parser checks", () => {
  const expected: Record<string, string> = {
    N: "integer",
    DURATION: "duration",
    SECONDS: "number",
    TIME: "timestamp",
    "K=V": "pair",
    PATH: "path",
    FILE: "path",
    DIR: "path",
  };
  const problems: string[] = [];
  for (const spec of specs) {
    for (const [name, def] of Object.entries(spec.flags)) {
      const want = expected[def.valueHint ?? ""];
      if (want && def.valueType !== want)
        problems.push(`${spec.name} ${name}: ${def.valueHint} but valueType ${def.valueType}`);
      const numeric = def.valueType === "integer" || def.valueType === "number" || def.valueType === "duration";
      if (numeric && (def.min === undefined || def.max === undefined))
        problems.push(`${spec.name} ${name}: a ${def.valueType} without min and max`);
      if ((def.min !== undefined || def.max !== undefined) && !numeric)
        problems.push(`${spec.name} ${name}: a range on a ${def.valueType ?? "string"}`);
      if (def.type === "positional" && def.required && !def.noun)
        problems.push(`${spec.name} ${name}: a required positional without a noun`);
    }
  }
  expect(problems).toEqual([]);
});

test("every verb parses with nothing but its required arguments, and every default passes its own check", () => {
  for (const spec of specs) {
    const positionals = Object.values(spec.flags).filter((d) => d.type === "positional" && d.required);
    const words = positionals.map((d) => d.choices?.[0] ?? (d.valueType === "json" ? "{}" : "1"));
    const required = Object.entries(spec.flags).filter(([, d]) => d.type === "string" && d.required);
    const argv = [
      ...required.flatMap(([n, d]) => [`--${n}`, d.choices?.[0] ?? (d.valueType === "duration" ? "1d" : "1")]),
      ...words,
    ];
    const args = checkArgs(spec, splitArgv(argv, spec.flags), { spoken: spec.name, canAsk: false }) as Record<
      string,
      unknown
    >;
    for (const [name, def] of Object.entries(spec.flags)) {
      if (def.default !== undefined && def.type === "string")
        expect({ verb: spec.name, name, value: args[name] }).not.toEqual({ verb: spec.name, name, value: undefined });
    }
  }
});

// --help is citty's rendering of these same definitions (src/ui/help.ts): what it shows is what the parser takes.
test("every verb's help shows its flags, positionals and repeatable flags as the parser reads them", async () => {
  const problems: string[] = [];
  for (const verb of specs) {
    const usage = await verbUsage(verb);
    const usageLine = usage.split("\n").find((l) => l.startsWith("USAGE ")) ?? "";
    const repeatLine = usage.split("\n").find((l) => l.startsWith("Repeatable")) ?? "";
    const repeated = new Set(repeatLine.match(/--[a-z-]+/g) ?? []);
    for (const [name, def] of Object.entries(verb.flags)) {
      if (def.type === "positional") {
        const shown = def.required ? `<${name.toUpperCase()}>` : `[${name.toUpperCase()}]`;
        if (!usageLine.includes(shown)) problems.push(`${verb.name}: ${shown} not in ${usageLine}`);
        continue;
      }
      if (!new RegExp(`^ *(-\\w, )?--${name}\\b`, "m").test(usage)) problems.push(`${verb.name}: --${name} not listed`);
      if (Boolean(def.repeatable) !== repeated.has(`--${name}`))
        problems.push(`${verb.name}: --${name} repeatable=${Boolean(def.repeatable)} but the help says otherwise`);
      if (def.default !== undefined && !usage.includes(`(Default: ${def.default})`))
        problems.push(`${verb.name}: --${name}'s default ${def.default} not shown`);
    }
  }
  expect(problems).toEqual([]);
});

test("help names no negated --no-FLAG form, which the parser would refuse", async () => {
  for (const verb of specs) {
    const usage = await verbUsage(verb);
    for (const flag of usage.match(/--no-[a-z-]+/g) ?? [])
      expect({ verb: verb.name, flag, defined: Object.hasOwn(verb.flags, flag.slice(2)) }).toMatchObject({
        defined: true,
      });
  }
});
