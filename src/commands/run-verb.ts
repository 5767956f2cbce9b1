/**
 * Running one verb to its JSON envelope without a terminal: what `spoolctl
 * VERB … --json` prints, as a value. The CLI's entry point and the web view's
 * API (docs/contract.md "The web view's API") both resolve verbs here, so a
 * page's action passes the same parser, guards and messages as the command.
 */
import { buildEnvelope, type Envelope, type VerbResult } from "../contract/envelope.ts";
import { SpoolError, toErrorObject, type Warning } from "../contract/errors.ts";
import type { Store } from "../store/store.ts";
import { checkArgs } from "./args.ts";
import { splitArgv } from "./argv.ts";
import { carryIntoError, carryIntoResult, suggesterFor } from "./selection.ts";
import { type AnyVerb, type Catalog, makeContext } from "./verb.ts";

/** Turns anything thrown into a {@link SpoolError}; unknown failures become `INTERNAL`. */
export function asSpoolError(error: unknown): SpoolError {
  if (error instanceof SpoolError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new SpoolError("INTERNAL", `unexpected failure: ${message}`);
}

/** The outcome of {@link runVerbJson}: the envelope `--json` would print and the exit code. */
export interface VerbRun {
  envelope: Envelope;
  exitCode: number;
}

/**
 * Runs `verb` on `args` (its flags and positionals, without `--json`, which is
 * implied) against the already open `store`, never asking at a terminal.
 * `db` is the queue selection the caller serves (`--db` of `spoolctl ui`):
 * hints carry it as the CLI's do. A streaming result (`--follow`) is refused:
 * it writes to stdout, which an in-process caller does not read. Never throws.
 */
export async function runVerbJson(
  verb: AnyVerb,
  args: string[],
  opts: { store: Store; db: string | undefined; catalog(): Promise<Catalog>; loadVerb(name: string): Promise<AnyVerb> },
): Promise<VerbRun> {
  const startedAt = performance.now();
  const notices: Warning[] = [];
  const suggest = suggesterFor(opts.db);
  try {
    const raw = splitArgv(
      [...args, "--json", ...(opts.db === undefined ? [] : [`--db=${opts.db}`])],
      verb.flags,
      verb.name,
    );
    const parsed = checkArgs(verb, raw, { spoken: verb.name, canAsk: false });
    const ctx = makeContext(raw, parsed, {
      stores: [],
      warnings: notices,
      mutates: Boolean(verb.mutates),
      catalog: opts.catalog,
      loadVerb: opts.loadVerb,
      shared: opts.store,
    });
    const ran = await verb.run(ctx);
    if (ran.streamed)
      throw new SpoolError(
        "INVALID_INPUT",
        `${verb.name} with these flags streams its answer, which this API does not`,
        {
          remediation: "drop the streaming flag (follow, watch, wait) and poll instead",
        },
      );
    const result: VerbResult = carryIntoResult(
      notices.length ? { ...ran, warnings: [...notices, ...(ran.warnings ?? [])] } : ran,
      suggest,
    );
    return { envelope: buildEnvelope(startedAt, result), exitCode: result.exitCode ?? 0 };
  } catch (error) {
    const spoolError = carryIntoError(asSpoolError(error), suggest);
    const warnings = carryIntoResult({ data: null, warnings: notices }, suggest).warnings;
    return {
      envelope: buildEnvelope(startedAt, { data: null, warnings }, [toErrorObject(spoolError)]),
      exitCode: spoolError.exitCode,
    };
  }
}
