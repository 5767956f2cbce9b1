/**
 * `add --from FILE|-` (docs/architecture.md "Adding a job"): one JSON job spec per line, `{"command": …}` or
 * `{"argv": […]}` plus any add option (snake_case or kebab-case keys). Blank
 * lines are skipped. Every error names the line.
 */
import { SpoolError } from "../contract/errors.ts";
import type { AddInput } from "./job-spec.ts";
import { type MatrixAxis, parseMatrixField } from "./matrix.ts";
import { jsonErrorReason, loneSurrogateAt } from "./values.ts";

const FIELDS: Record<string, keyof AddInput> = {
  argv: "argv",
  command: "command",
  timeout: "timeout",
  max_retries: "maxRetries",
  max_crashes: "maxCrashes",
  priority: "priority",
  queue: "queue",
  after: "after",
  at: "at",
  cwd: "cwd",
  env: "env",
  tags: "tag",
  tag: "tag",
  note: "note",
  key: "key",
  idempotency_key: "key",
  needs: "needs",
  needs_policy: "needsPolicy",
  ref: "ref",
  name: "name",
  kill_leftovers: "killLeftovers",
};

function bad(line: number, message: string): SpoolError {
  return new SpoolError("INVALID_INPUT", `--from line ${line}: ${message}`, {
    remediation: 'write one JSON object per line, e.g. {"argv": ["echo", "hi"], "timeout": 30}',
    detail: { line },
  });
}

/** A JSON object of strings, or an array of "K=V", as K=V strings. */
function pairs(line: number, field: string, value: unknown): string[] {
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value;
  if (value && typeof value === "object" && !Array.isArray(value)) {
    return Object.entries(value).map(([k, v]) => {
      // "X=Y": "1" would be read back as X="Y=1": no name holds "=" (a name, so it may be shown; the value never).
      if (k.includes("="))
        throw bad(line, `${field} name ${JSON.stringify(k)} holds "=", which no variable or tag name may hold`);
      if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean")
        throw bad(line, `${field}.${k} must be a string`);
      return `${k}=${v}`;
    });
  }
  throw bad(line, `${field} must be an object of strings or an array of "KEY=VALUE"`);
}

/**
 * Parses NDJSON job specs. Each spec starts from `defaults` (the flags given on
 * the command line) and overrides them; a line's `"matrix"` (./matrix.ts) is
 * returned beside its spec, unexpanded. Raises `INVALID_INPUT` naming the line,
 * also for an env or tag name holding "=" and for a lone surrogate escape in
 * any string (docs/architecture.md "Adding a job").
 */
export function parseJobLines(
  text: string,
  defaults: AddInput,
): { input: AddInput; line: number; matrix?: MatrixAxis[] }[] {
  const out: { input: AddInput; line: number; matrix?: MatrixAxis[] }[] = [];
  const lines = text.split("\n");
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === "") return;
    let spec: unknown;
    try {
      spec = JSON.parse(raw);
    } catch (error) {
      throw bad(line, `not valid JSON (${jsonErrorReason(error)})`);
    }
    if (!spec || typeof spec !== "object" || Array.isArray(spec)) throw bad(line, "expected a JSON object");
    const broken = loneSurrogateAt(spec);
    if (broken !== null)
      throw bad(
        line,
        `${broken} holds a lone surrogate escape (\\ud800-\\udfff without its pair), which is no character and not valid UTF-8 once stored`,
      );
    const input: AddInput = { ...defaults };
    let matrix: MatrixAxis[] | undefined;
    for (const [rawKey, value] of Object.entries(spec)) {
      const key = rawKey.replaceAll("-", "_");
      if (key === "matrix") {
        if (value !== null) matrix = parseMatrixField(value, `--from line ${line}: matrix`);
        continue;
      }
      const field = Object.hasOwn(FIELDS, key) ? FIELDS[key] : undefined; // "constructor" is no field
      if (!field)
        throw bad(
          line,
          `unknown field ${JSON.stringify(rawKey)} (known: ${[...Object.keys(FIELDS), "matrix"].join(", ")})`,
        );
      if (value === null) continue;
      if (field === "argv") {
        if (!Array.isArray(value) || value.some((v) => typeof v !== "string"))
          throw bad(line, "argv must be an array of strings");
        input.argv = value as string[];
      } else if (field === "needs") {
        // Other lines' refs, job ids, keys or last: a list, or one reference.
        const refs = Array.isArray(value) ? value : [value];
        // [] is no needs, as a generator writes a job without any (it also drops a command line's --needs).
        if (refs.length === 0) {
          delete input.needs;
          continue;
        }
        if (refs.some((v) => (typeof v !== "string" && typeof v !== "number") || v === ""))
          throw bad(line, 'needs must be a list of refs, job ids or keys, e.g. "needs": ["build", 12]');
        input.needs = refs.map(String);
      } else if (field === "killLeftovers") {
        if (typeof value !== "boolean") throw bad(line, "kill_leftovers must be true or false");
        input.killLeftovers = value;
      } else if (field === "env" || field === "tag") {
        // Merged over the command line's --env/--tag (parsePairs: the later key wins).
        input[field] = [...(defaults[field] ?? []), ...pairs(line, rawKey, value)];
      } else if (typeof value === "string" || typeof value === "number") {
        (input as Record<string, unknown>)[field] = String(value);
      } else {
        throw bad(line, `${rawKey} must be a string or a number`);
      }
    }
    out.push(matrix ? { input, line, matrix } : { input, line });
  });
  return out;
}
