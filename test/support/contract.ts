/**
 * Helpers for the contract tests (issue 4): validators compiled from the JSON
 * Schemas that `spoolctl schema --json` itself exports, and the verb whose data
 * schema applies to an argv (two-word forms included).
 *
 * The validator is Ajv (draft 2020-12 build, `ajv/dist/2020`), a dev
 * dependency: the exported schemas declare the 2020-12 dialect, and Ajv is
 * the maintained reference implementation for it in JavaScript.
 */

import type { ValidateFunction } from "ajv";
import Ajv2020 from "ajv/dist/2020";
import { COMPOUND } from "../../src/commands/names.ts";
import { VERBS } from "../../src/commands/registry.ts";
import type { TempQueue } from "./temp-queue.ts";

/** Validators of the exported contract. */
export interface Contract {
  /** The raw export (`schema --json` data). */
  exported: any;
  /** Problems of an envelope (empty when valid). */
  envelope(env: unknown): string[];
  /** Problems of a verb's data (empty when valid). */
  data(verb: string, data: unknown): string[];
  /** Problems of a raw stream frame (empty when valid). */
  stream(name: string, frame: unknown): string[];
}

function problems(validate: ValidateFunction, value: unknown): string[] {
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) =>
    `${e.instancePath || "/"} ${e.message ?? "invalid"} ${e.params ? JSON.stringify(e.params) : ""}`.trim(),
  );
}

/** Compiles the schemas of an export (strict mode: a schema Ajv finds dubious fails here too). */
export function compileContract(exported: any): Contract {
  // strictRequired is off: `capabilities` is deliberately loose (required keys, no property list).
  const ajv = new Ajv2020({ strict: true, strictRequired: false, allowUnionTypes: true, allErrors: true });
  const envelope = ajv.compile(exported.envelope_schema);
  const verbs = new Map<string, ValidateFunction>();
  for (const [name, schema] of Object.entries(exported.verbs as Record<string, object>))
    verbs.set(name, ajv.compile(schema));
  const streams = new Map<string, ValidateFunction>();
  for (const [name, schema] of Object.entries(exported.streams as Record<string, object>))
    streams.set(name, ajv.compile(schema));
  return {
    exported,
    envelope: (env) => problems(envelope, env),
    data(verb, data) {
      const v = verbs.get(verb);
      return v ? problems(v, data) : [`no exported data schema for verb ${verb}`];
    },
    stream(name, frame) {
      const v = streams.get(name);
      return v ? problems(v, frame) : [`no exported stream schema ${name}`];
    },
  };
}

/** Runs `schema --json` against `q` and compiles what it exports. */
export async function loadContract(q: TempQueue): Promise<Contract> {
  const r = await q.json(["schema"]);
  if (r.code !== 0 || !r.env.ok) throw new Error(`schema --json failed: ${JSON.stringify(r.env)}`);
  return compileContract(r.env.data);
}

/**
 * The verb an argv runs (after rewriting two-word forms), or null for the
 * root `--help`/`--version` answers, which have no verb data schema.
 */
export function verbOf(argv: string[]): string | null {
  const [first, second, ...rest] = argv;
  if (first === undefined) return null;
  const group = Object.hasOwn(COMPOUND, first) ? COMPOUND[first] : undefined;
  if (group && second !== undefined && Object.hasOwn(group, second)) return verbOf(group[second]!(rest));
  return Object.hasOwn(VERBS, first) ? first : null;
}
