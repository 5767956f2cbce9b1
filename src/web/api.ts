/**
 * The web view's API (docs/contract.md "The web view's API"): `GET
 * /api/VERB?FLAG=VALUE…` for read verbs, `POST` for write verbs, each
 * answering exactly the envelope `spoolctl VERB … --json` prints, with the
 * HTTP status from the exit code. The verbs themselves run in the commands
 * layer, handed in as a {@link VerbRunner}.
 */
import { buildEnvelope, type Envelope } from "../contract/envelope.ts";
import { type ErrorCode, SpoolError, toErrorObject } from "../contract/errors.ts";
import type { VerbSpec } from "../contract/flags.ts";

/** Runs verbs for the API: what the commands layer hands to the server. */
export interface VerbRunner {
  /** The verb's definition, or null when there is no verb of that name. */
  spec(name: string): Promise<VerbSpec | null>;
  /** Runs verb `name` on `args` (flags and positionals, `--json` implied) against the served queue. Never throws. */
  run(name: string, args: string[]): Promise<{ envelope: Envelope; exitCode: number }>;
}

/** Verbs served by `GET`: they only read. */
const API_READS = new Set([
  "status",
  "list",
  "show",
  "workers",
  "output",
  "feedback",
  "events",
  "lane-list",
  "schedule-list",
  "hook-list",
  "batch-show",
  "batch-list",
  "report",
  "doctor",
  "capabilities",
  "schema",
  "brief",
]);

/**
 * Verbs served by `POST`: an operator's actions on jobs, lanes, schedules,
 * hooks, batches and workers. Verbs that add commands to run (`add`,
 * `schedule add`, `hook add`), change files outside the queue (`config`) or
 * run for long (`work`, `wait`, `ui`) are not served.
 */
export const API_WRITES = new Set([
  "retry",
  "rerun",
  "cancel",
  "hold",
  "release",
  "priority",
  "delete",
  "pause",
  "resume",
  "lane-set",
  "schedule-pause",
  "schedule-resume",
  "schedule-run-now",
  "schedule-rm",
  "hook-rm",
  "batch-seal",
  "stop",
  "prune",
]);

/** Query keys the API refuses: the queue is the server's own, the answer is always JSON, and it never streams. */
const REFUSED_KEYS: Record<string, string> = {
  db: "the web view serves one queue, the one it was started on",
  json: "the API always answers JSON",
  follow: "the API does not stream; the pages follow a job through /live",
  watch: "the API does not stream; poll status instead",
  wait: "the API does not block; poll events with since-id instead",
};

/**
 * The HTTP status of an exit code: 0 and 6 → 200, 1 → 400, 2 (confirm
 * explicitly) → 428, 3 → 500, 4 → 503, 5 → 409.
 */
export function httpStatus(exitCode: number): number {
  return ({ 0: 200, 6: 200, 1: 400, 2: 428, 3: 500, 4: 503, 5: 409 } as Record<number, number>)[exitCode] ?? 500;
}

/**
 * The verb's argv for a query string: each key a long flag (`--key=value`,
 * once per repeated key; `key=true` for a switch), `id` (or the positional's
 * own name) repeated for positional values. Raises `INVALID_INPUT` for a key
 * the API refuses and for a positional that would read as a flag.
 */
export function argsOfQuery(spec: VerbSpec, query: URLSearchParams): string[] {
  const positionalNames = Object.entries(spec.flags)
    .filter(([, d]) => d.type === "positional")
    .map(([n]) => n);
  const flags: string[] = [];
  const positionals: string[] = [];
  for (const [key, value] of query) {
    if (key === "token") continue;
    if (Object.hasOwn(REFUSED_KEYS, key))
      throw new SpoolError("INVALID_INPUT", `${key} cannot be given to the API: ${REFUSED_KEYS[key]}`, {
        remediation: `drop ${key}=… from the query`,
      });
    if (key === "id" || positionalNames.includes(key)) {
      if (value.startsWith("-"))
        throw new SpoolError("INVALID_INPUT", `${key}=${JSON.stringify(value.slice(0, 200))} reads as a flag`, {
          remediation: `give ${key} a job id, key or name`,
        });
      positionals.push(value);
    } else flags.push(`--${key}=${value === "" ? "true" : value}`);
  }
  return [...flags, ...positionals];
}

/** A JSON response of `envelope` with `status`. */
function envelopeResponse(envelope: Envelope, status: number): Response {
  return new Response(`${JSON.stringify(envelope)}\n`, {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
  });
}

/** An error envelope of `code` with `message` and `remediation`, as a response of `status`. */
export function errorResponse(status: number, code: ErrorCode, message: string, remediation?: string): Response {
  const error = new SpoolError(code, message, remediation === undefined ? {} : { remediation });
  return envelopeResponse(buildEnvelope(performance.now(), { data: null }, [toErrorObject(error)]), status);
}

/**
 * Answers `/api/VERB` for `method`: 404 for no such verb or one the API does
 * not serve, 405 for a write verb by GET (or a read verb by POST), else the
 * verb's envelope with {@link httpStatus}; `readOnly` refuses writes (403).
 */
export async function answerApi(
  runner: VerbRunner,
  name: string,
  method: string,
  query: URLSearchParams,
  readOnly: boolean,
): Promise<Response> {
  const isWrite = API_WRITES.has(name);
  if (!isWrite && !API_READS.has(name)) {
    const spec = await runner.spec(name);
    return spec === null
      ? errorResponse(404, "UNKNOWN_COMMAND", `unknown command ${JSON.stringify(name.slice(0, 200))}`)
      : errorResponse(404, "UNKNOWN_COMMAND", `${name} is not served by the web view's API`, "run it with the CLI");
  }
  if (method !== (isWrite ? "POST" : "GET"))
    return errorResponse(
      405,
      "INVALID_INPUT",
      `${name} ${isWrite ? "changes the queue and needs POST" : "only reads and needs GET"}, not ${method}`,
      `send ${isWrite ? "POST" : "GET"} /api/${name}`,
    );
  if (isWrite && readOnly)
    return errorResponse(
      403,
      "SAFETY_BLOCK",
      "this web view is read-only (spoolctl ui --read-only)",
      "run it with the CLI, or restart spoolctl ui without --read-only",
    );
  const spec = (await runner.spec(name))!;
  let args: string[];
  try {
    args = argsOfQuery(spec, query);
  } catch (error) {
    const e = error as SpoolError;
    return errorResponse(400, e.code, e.message, e.remediation);
  }
  const { envelope, exitCode } = await runner.run(name, args);
  return envelopeResponse(envelope, httpStatus(exitCode));
}
