/**
 * The fuzz test's verdict on one run (issue 4, SPEC §6 "Totality"): stdout is
 * exactly one envelope that validates against the exported envelope schema
 * (and, on success, the verb's data schema); the exit code is documented and
 * agrees with the envelope; no stack trace or runtime error text on stderr.
 * Shared by the in-process driver and the subprocess runs.
 */
import { COMPOUND } from "../src/commands/names.ts";
import { VERBS } from "../src/commands/registry.ts";
import { ERROR_CODES } from "../src/contract/errors.ts";
import { schemaExport } from "../src/describe/schemas.ts";
import { type Contract, compileContract, verbOf } from "./support/contract.ts";

let contract: Contract | null = null;

/** The contract compiled from the in-process schema export (the same one `schema --json` prints). */
function compiled(): Contract {
  contract ??= compileContract(schemaExport(Object.keys(VERBS)));
  return contract;
}

/** Whether the argv asks for help (the same rule as src/cli.ts: -h/--help before any bare --). */
function asksHelp(argv: string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).some((a) => a === "--help" || a === "-h");
}

/** What a judged run looked like, for the test's summary. */
export interface Verdict {
  problems: string[];
  /** errors[0].code, or "ok". */
  outcome: string;
  /** errors[0].message (for the summary). */
  message?: string;
}

/** The words that answer without a verb (src/cli.ts). */
const ROOT_WORDS = new Set(["help", "version"]);

/**
 * Judges one run of `argv` (which includes --json). `flags` (each verb's flag
 * definitions) enables two more rules: a word that names no verb is
 * `UNKNOWN_COMMAND`, and a run with a `--name` its verb does not define never
 * succeeds.
 */
export function judge(
  argv: string[],
  code: number | null,
  stdout: string,
  stderr: string,
  flags?: Record<string, Record<string, { type: string }>>,
): Verdict {
  const problems: string[] = [];
  let env: any = null;
  if (!stdout.endsWith("\n") || stdout.indexOf("\n") !== stdout.length - 1)
    problems.push("stdout is not exactly one line");
  try {
    env = JSON.parse(stdout);
  } catch {
    problems.push("stdout is not JSON");
  }
  if (/^\s+at /m.test(stderr)) problems.push("a stack trace on stderr");
  if (/^(error|TypeError|RangeError|ReferenceError|SyntaxError|panic)\b.*:/m.test(stderr))
    problems.push("a runtime error on stderr");
  if (code === null || !Number.isInteger(code) || code < 0 || code > 6) problems.push(`undocumented exit code ${code}`);
  if (!env || typeof env !== "object" || Array.isArray(env)) {
    if (env !== null) problems.push("stdout is not an object");
    return { problems, outcome: "?" };
  }
  const c = compiled();
  for (const p of c.envelope(env)) problems.push(`envelope schema: ${p}`);
  const errors: any[] = Array.isArray(env.errors) ? env.errors : [];
  if (env.ok !== (errors.length === 0)) problems.push("ok does not match errors");
  const outcome = errors[0]?.code ?? (env.ok ? "ok" : "?");
  const message = typeof errors[0]?.message === "string" ? errors[0].message.slice(0, 200) : undefined;
  if (env.ok === false) {
    const first = errors[0];
    if (env.data !== null) problems.push("data is not null on failure");
    if (first && first.exit_code !== code)
      problems.push(`exit code ${code} but errors[0].exit_code ${first.exit_code}`);
    const info = first && (ERROR_CODES as Record<string, { exit_code: number }>)[first.code];
    if (info && info.exit_code !== first.exit_code)
      problems.push(`${first.code} has exit_code ${first.exit_code}, registry says ${info.exit_code}`);
    // The top-level guard's INTERNAL means something threw that nobody expected: a bug.
    if (first?.code === "INTERNAL" && /^unexpected failure/.test(first.message))
      problems.push(`the top-level guard caught: ${first.message}`);
  } else if (env.ok === true) {
    const verb = verbOf(argv.filter((a) => a !== "--json"));
    const allowed = verb === "wait" ? [0, 6] : verb === "doctor" ? [0, 3] : [0];
    if (!allowed.includes(code ?? -1)) problems.push(`ok:true with exit code ${code}`);
    if (verb && !asksHelp(argv)) for (const p of c.data(verb, env.data)) problems.push(`${verb} data schema: ${p}`);
    if (verb && flags?.[verb] && !asksHelp(argv)) {
      const defs = flags[verb]!;
      const end = argv.indexOf("--");
      const unknown = (end === -1 ? argv : argv.slice(0, end)).filter((a) => {
        if (!a.startsWith("--") || a.length <= 2) return false;
        const name = a.slice(2).split("=")[0]!;
        return !Object.hasOwn(defs, name) || defs[name]!.type === "positional";
      });
      // (`worker start --count` is rewritten to --concurrency before parsing.)
      const rewritten = argv[0] === "worker" ? unknown.filter((a) => !/^--count(=|$)/.test(a)) : unknown;
      if (rewritten.length) problems.push(`succeeded despite unknown flag(s) ${rewritten.join(" ")}`);
    }
  }
  const first = argv[0];
  if (
    first !== undefined &&
    !first.startsWith("-") &&
    !ROOT_WORDS.has(first) &&
    !Object.hasOwn(VERBS, first) &&
    !Object.hasOwn(COMPOUND, first) &&
    outcome !== "UNKNOWN_COMMAND"
  ) {
    problems.push(`${JSON.stringify(first)} names no verb, but the outcome is ${outcome}`);
  }
  return { problems, outcome, message };
}
