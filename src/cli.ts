#!/usr/bin/env bun
import { checkArgs } from "./commands/args.ts";
import { leadingGlobals, refuseInvalidUtf8, splitArgv } from "./commands/argv.ts";
import { loadCatalog } from "./commands/catalog.ts";
import { COMPOUND, VERB_SUMMARIES } from "./commands/names.ts";
import { resolveVerb } from "./commands/registry.ts";
import { asSpoolError } from "./commands/run-verb.ts";
import { carryIntoError, carryIntoResult, dbWritten, suggesterFor } from "./commands/selection.ts";
import { COMMON_FLAGS, makeContext, terminalAttached } from "./commands/verb.ts";
/**
 * Entry point: finds the verb, parses its argv against the verb's definitions
 * (split, then checked and typed), runs it, renders text or the JSON envelope,
 * and maps every failure to an exit code (docs/contract.md "Exit codes and
 * codes"). No input ever produces a stack trace.
 */
import { buildEnvelope, type VerbResult } from "./contract/envelope.ts";
import { SpoolError, toErrorObject, type Warning } from "./contract/errors.ts";
import { closest } from "./contract/flags.ts";
import { TOOL_VERSION } from "./contract/version.ts";
import type { Store } from "./store/store.ts";
import { guardStdio, writeOut } from "./ui/stdio.ts";
import { isWatchdogCall } from "./worker/watchdog.ts";

/**
 * Verbs that print only through {@link writeOut} (and `log` for warnings,
 * which guards itself): they never build Node's stdio streams, so that they
 * start at Bun's speed (docs/benchmarks.md "CLI start-up"). Every other verb gets
 * the stream error handlers before it runs.
 */
const PLAIN_OUTPUT = new Set(["add", "status", "list", "show"]);

function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).some((a) => a === "--json" || a === "--json=true");
}

function wantsHelp(argv: string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).some((a) => a === "--help" || a === "-h");
}

async function printError(
  error: SpoolError,
  json: boolean,
  startedAt: number,
  warnings: Warning[] = [],
): Promise<void> {
  if (json) {
    writeOut(`${JSON.stringify(buildEnvelope(startedAt, { data: null, warnings }, [toErrorObject(error)]))}\n`);
    return;
  }
  const { log } = await import("./ui/log.ts");
  for (const w of warnings) log.warn(`${w.code}: ${w.message}`);
  log.error(`${error.code}: ${error.message} — ${error.remediation}`);
}

/**
 * Rewrites a two-word QueueCTL command (`worker start`) to its verb, with the
 * words the user wrote (`spoken`, for messages); other argv is returned as is.
 */
function rewriteCompound(argv: string[]): { argv: string[]; spoken?: string; groupHelp?: string } {
  const [first, ...afterGroup] = argv;
  const group = first === undefined || !Object.hasOwn(COMPOUND, first) ? undefined : COMPOUND[first];
  if (!group) return { argv };
  // `spoolctl config --json set …`: global flags between the two words are the verb's own too.
  const between = leadingGlobals(afterGroup, COMMON_FLAGS);
  const [second, ...tail] = between.rest;
  const rest = [...between.globals, ...tail];
  const actions = Object.keys(group);
  const remediation = `use one of: ${actions.map((k) => `spoolctl ${first} ${k}`).join(", ")}`;
  if (second === undefined || second.startsWith("-")) {
    if (second === "--help" || second === "-h") return { argv, groupHelp: first };
    throw new SpoolError("MISSING_REQUIRED", `${first} needs an action (${actions.join(", ")})`, { remediation });
  }
  const rewrite = Object.hasOwn(group, second) ? group[second] : undefined;
  if (!rewrite) {
    const guess = closest(second, actions);
    throw new SpoolError(
      "UNKNOWN_COMMAND",
      `unknown command ${JSON.stringify(`${first} ${second}`)}${guess ? ` (did you mean ${first} ${guess}?)` : ""}`,
      {
        did_you_mean: guess ? `${first} ${guess}` : null,
        remediation,
      },
    );
  }
  return { argv: rewrite(rest), spoken: `${first} ${second}` };
}

/** Runs the CLI on `argv` (without the program name); returns the exit code. */
export async function main(rawArgv: string[]): Promise<number> {
  const startedAt = performance.now();
  const json = wantsJson(rawArgv);
  const stores: Store[] = [];
  const notices: Warning[] = [];
  // Hints keep the queue selection; --db is known once argv is split.
  let suggest = suggesterFor(undefined);
  try {
    refuseInvalidUtf8(rawArgv);
    // `spoolctl --db X status`: global flags before the verb are the verb's own.
    const lead = leadingGlobals(rawArgv, COMMON_FLAGS);
    const { argv, spoken, groupHelp } = rewriteCompound(lead.rest);
    const [name, ...rest] = argv.length ? [argv[0]!, ...lead.globals, ...argv.slice(1)] : lead.globals;
    // Help and version are text, or an envelope of that text under --json.
    const say = (data: Record<string, string>, text: string) => {
      writeOut(`${json ? JSON.stringify(buildEnvelope(startedAt, { data })) : text}\n`);
      return 0;
    };
    if (groupHelp !== undefined) {
      const { groupUsage } = await import("./ui/help.ts");
      const usage = groupUsage(groupHelp, COMPOUND[groupHelp]!, VERB_SUMMARIES);
      return say({ verb: groupHelp, usage }, usage);
    }
    if (name === "help" && rest[0] !== undefined && !rest[0].startsWith("-"))
      return main([rest[0], "--help", ...rest.slice(1)]);
    if (
      name === undefined ||
      name === "--help" ||
      name === "-h" ||
      name === "help" ||
      (name === "--json" && rest.length === 0)
    ) {
      const { rootUsage } = await import("./ui/help.ts");
      const usage = rootUsage(VERB_SUMMARIES);
      return say({ usage }, usage);
    }
    if (name === "--version" || name === "-v" || name === "version")
      return say({ version: TOOL_VERSION }, TOOL_VERSION);
    if (name.startsWith("-")) {
      throw new SpoolError("UNKNOWN_COMMAND", `expected a command before ${name}`, {
        remediation: "write the command first, e.g. spoolctl status --json",
      });
    }
    const verb = await resolveVerb(name);
    if (wantsHelp(rest)) {
      const { verbUsage } = await import("./ui/help.ts");
      const usage = await verbUsage(verb);
      return say({ verb: verb.name, usage }, usage);
    }
    if (!PLAIN_OUTPUT.has(verb.name)) guardStdio();
    suggest = suggesterFor(dbWritten(rest));
    const raw = splitArgv(rest, verb.flags, spoken ?? verb.name);
    suggest = suggesterFor(typeof raw.values.db === "string" ? raw.values.db : undefined);
    // A picker may stand in for a missing argument only for a person: at a terminal, and not under --json.
    // (Only a verb with a picker asks about the terminal: the question costs an fstat, or more.)
    const canAsk = raw.values.json !== true && Object.values(verb.flags).some((d) => d.prompt) && terminalAttached();
    const args = checkArgs(verb, raw, { spoken: spoken ?? verb.name, canAsk });
    const ctx = makeContext(raw, args, {
      stores,
      warnings: notices,
      mutates: Boolean(verb.mutates),
      catalog: loadCatalog,
      loadVerb: resolveVerb,
    });
    const ran = await verb.run(ctx);
    const result: VerbResult = carryIntoResult(
      notices.length ? { ...ran, warnings: [...notices, ...(ran.warnings ?? [])] } : ran,
      suggest,
    );
    if (result.streamed) return result.exitCode ?? 0;
    if (json) writeOut(`${JSON.stringify(buildEnvelope(startedAt, result))}\n`);
    else {
      if (result.warnings?.length) {
        const { log } = await import("./ui/log.ts");
        for (const w of result.warnings) log.warn(`${w.code}: ${w.message}`);
      }
      const text = verb.render(result, ctx);
      if (text) writeOut(text.endsWith("\n") ? text : `${text}\n`);
    }
    return result.exitCode ?? 0;
  } catch (error) {
    const spoolError = carryIntoError(asSpoolError(error), suggest);
    await printError(spoolError, json, startedAt, carryIntoResult({ data: null, warnings: notices }, suggest).warnings);
    return spoolError.exitCode;
  } finally {
    for (const store of stores) {
      try {
        await store.close();
      } catch {
        // closing is best effort
      }
    }
  }
}

if (import.meta.main && isWatchdogCall(process.argv.slice(2))) {
  // A worker's watchdog (src/worker/watchdog-main.ts), started by `work` on a shared queue.
  void import("./worker/watchdog-main.ts").then((m) => m.runWatchdog(process.argv[3]));
} else if (import.meta.main) {
  const guard = (error: unknown) => {
    const spoolError = asSpoolError(error);
    void printError(spoolError, wantsJson(process.argv.slice(2)), performance.now()).finally(() =>
      process.exit(spoolError.exitCode),
    );
  };
  process.on("uncaughtException", guard);
  process.on("unhandledRejection", guard);
  // Stream error handlers (EPIPE on stdout → exit 0; stderr errors dropped, so a worker outlives
  // the reader of its log) are installed by guardStdio(), per verb: building the streams costs.
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
