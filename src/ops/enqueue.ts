/**
 * QueueCTL's `enqueue JSON` (docs/architecture.md "Adding a job"): `{"id":"job1","command":"echo hello","max_retries":3}`
 * becomes an add request whose idempotency key is the id, so the id names the
 * job wherever an ID is taken. `command` runs through `sh -c`, as in QueueCTL.
 */
import { invalidValue, SpoolError } from "../contract/errors.ts";
import type { AddInput } from "./job-spec.ts";
import { jsonErrorReason, loneSurrogateAt } from "./values.ts";

/** JSON fields of an enqueue spec → add inputs (QueueCTL and spoolctl spellings). */
const FIELDS: Record<string, keyof AddInput | "id"> = {
  id: "id",
  command: "command",
  argv: "argv",
  max_retries: "maxRetries",
  max_crashes: "maxCrashes",
  timeout: "timeout",
  priority: "priority",
  queue: "queue",
  after: "after",
  at: "at",
  run_at: "at",
  cwd: "cwd",
  env: "env",
  tags: "tag",
  note: "note",
};

function bad(message: string): SpoolError {
  return new SpoolError("INVALID_INPUT", `enqueue: ${message}`, {
    remediation: `spoolctl enqueue '{"id":"job1","command":"echo hello","max_retries":3}'`,
  });
}

function pairs(field: string, value: unknown): string[] {
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value;
  if (value && typeof value === "object" && !Array.isArray(value)) {
    return Object.entries(value).map(([k, v]) => {
      // "X=Y": "1" would be read back as X="Y=1" (as in add --from).
      if (k.includes("="))
        throw bad(`${field} name ${JSON.stringify(k)} holds "=", which no variable or tag name may hold`);
      if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean")
        throw bad(`${field}.${k} must be a string`);
      return `${k}=${v}`;
    });
  }
  throw bad(`${field} must be an object of strings or an array of "KEY=VALUE"`);
}

/**
 * Parses an enqueue spec into an {@link AddInput} (validated later like `add`).
 * Raises `INVALID_INPUT` for bad JSON, unknown fields, or an id of digits only
 * (it would read as a job number), `MISSING_REQUIRED` without an id.
 */
export function parseEnqueueSpec(text: string): AddInput & { key: string } {
  let spec: unknown;
  try {
    spec = JSON.parse(text);
  } catch (error) {
    throw bad(`not valid JSON (${jsonErrorReason(error)})`);
  }
  if (!spec || typeof spec !== "object" || Array.isArray(spec)) throw bad("expected a JSON object");
  const broken = loneSurrogateAt(spec);
  if (broken !== null)
    throw bad(
      `${broken} holds a lone surrogate escape (\\ud800-\\udfff without its pair), which is no character and not valid UTF-8 once stored`,
    );
  const input: AddInput = {};
  let id: string | undefined;
  for (const [rawKey, value] of Object.entries(spec)) {
    const name = rawKey.replaceAll("-", "_");
    const field = Object.hasOwn(FIELDS, name) ? FIELDS[name] : undefined; // "constructor" is no field
    if (!field) throw bad(`unknown field ${JSON.stringify(rawKey)} (known: ${Object.keys(FIELDS).join(", ")})`);
    if (value === null) continue;
    if (field === "argv") {
      if (!Array.isArray(value) || value.some((v) => typeof v !== "string"))
        throw bad("argv must be an array of strings");
      input.argv = value as string[];
    } else if (field === "env" || field === "tag") {
      input[field] = pairs(rawKey, value);
    } else if (typeof value === "string" || typeof value === "number") {
      if (field === "id") id = String(value);
      else (input as Record<string, unknown>)[field] = String(value);
    } else {
      throw bad(`${rawKey} must be a string or a number`);
    }
  }
  if (id === undefined) {
    throw new SpoolError("MISSING_REQUIRED", 'enqueue: the job needs an "id"', {
      remediation: `spoolctl enqueue '{"id":"job1","command":"echo hello"}'  (or use spoolctl add)`,
    });
  }
  if (/^\d+$/.test(id))
    throw invalidValue("id", id, "an id that is not only digits (digits name spoolctl's own job numbers), e.g. job1");
  return { ...input, key: id };
}
