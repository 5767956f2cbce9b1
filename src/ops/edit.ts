/**
 * `edit` and `priority` (docs/architecture.md "Editing a job"): what a queued
 * (or held) job will run with, changed before it starts, with the rules and
 * bounds of `add`. Pure: the parse, the check and the diff; the transaction is
 * the `editJob` verb (src/store/verbs/edit.ts).
 */
import { resolve } from "node:path";
import { invalidValue, SpoolError } from "../contract/errors.ts";
import { EDITABLE_FIELDS, type Job, type JobEdit } from "../model/job.ts";
import { LIMITS } from "../model/limits.ts";
import { parseRetryOverrides, validateAddInput } from "./job-spec.ts";
import { durationText, parseDuration, parseInteger, parseLane, parseTimestamp } from "./values.ts";

/** `edit`'s flags as typed (absent: unchanged). */
export interface EditInput {
  /** The new command, after `--`. */
  argv?: string[];
  /** `-c`: a shell string, stored as `[sh, -c, STRING]`. */
  command?: string;
  /** `--env K=V`, added to or replacing the job's variables. */
  env?: string[];
  cwd?: string;
  queue?: string;
  priority?: string;
  timeout?: string;
  maxRetries?: string;
  /** `--after`: due this long from now. */
  after?: string;
  /** `--at`: due at this time. */
  at?: string;
}

/**
 * Parses `input` into the changes to make to `job` (its env is read to merge
 * `--env` into), with `add`'s rules (docs/architecture.md "Adding a job"):
 * `cwd` made absolute against `cwd`, `--after` read against `now` (epoch
 * seconds). Raises `INVALID_INPUT` naming the flag, or when nothing is asked.
 */
export function parseJobEdit(input: EditInput, job: Job, cwd: string, now: number): JobEdit {
  const out: JobEdit = {};
  if ((input.argv && input.argv.length > 0) || input.command !== undefined)
    out.argv = validateAddInput(
      { argv: input.argv, command: input.command, cwd: input.cwd },
      (n) => (n.length === 1 ? `-${n}` : `--${n}`),
      cwd,
    ).argv;
  const o = parseRetryOverrides({ timeout: input.timeout, maxRetries: input.maxRetries, env: input.env });
  if (o.timeoutSeconds !== undefined) out.timeout_seconds = o.timeoutSeconds;
  if (o.maxRetries !== undefined) out.max_retries = o.maxRetries;
  if (o.env !== undefined) {
    const env = { ...job.env, ...o.env };
    if (Object.keys(env).length > LIMITS.env.max)
      throw invalidValue("--env", `${Object.keys(env).length} variables`, `at most ${LIMITS.env.max}`);
    out.env = env;
  }
  if (input.cwd !== undefined) {
    if (input.cwd === "" || input.cwd.includes("\0")) throw invalidValue("--cwd", input.cwd, "a directory path");
    out.cwd = resolve(cwd, input.cwd);
  }
  if (input.queue !== undefined) out.queue = parseLane("--queue", input.queue);
  if (input.priority !== undefined) out.priority = parsePriority("--priority", input.priority);
  if (input.after !== undefined && input.at !== undefined)
    throw new SpoolError("INVALID_INPUT", "give --after or --at, not both", {
      remediation: "choose a delay (--after 5m) or a time (--at 2026-12-01T09:00:00Z)",
    });
  if (input.after !== undefined)
    out.next_run_at = now + parseDuration("--after", input.after, 0, LIMITS.delay_seconds.max);
  if (input.at !== undefined) {
    const max = LIMITS.delay_seconds.max;
    const at = parseTimestamp("--at", input.at, {
      at: now + max,
      rule: `a time at most ${max / (365 * 86400)} years ahead (the --after bound, ${durationText(max)})`,
    });
    out.next_run_at = Math.max(now, at);
  }
  if (Object.keys(out).length === 0)
    throw new SpoolError("MISSING_REQUIRED", "edit needs something to change", {
      remediation: `spoolctl edit ${job.id} -- NEW COMMAND, or a flag: --priority N, --queue NAME, --timeout 10m, --max-retries N, --env K=V, --cwd DIR, --after 5m (at a terminal, no flag opens $EDITOR)`,
    });
  return out;
}

/** A priority as `add --priority` takes it: a 32-bit integer, higher runs first. */
function parsePriority(flag: string, raw: string): number {
  return parseInteger(flag, raw, LIMITS.priority.min, LIMITS.priority.max);
}

/**
 * Raises `CONFLICT` (exit 5) unless `job` may be edited: it is queued (held
 * or not) and, when `seenAttempt` is given (what the editor was shown), no
 * attempt has started since. A job that started meanwhile is refused whole.
 */
export function checkEditable(job: Job, seenAttempt?: number): void {
  if (job.state === "queued" && (seenAttempt === undefined || job.last_attempt_no === seenAttempt)) return;
  const started =
    job.state !== "queued" ? `is ${job.state}` : `ran (attempt ${job.last_attempt_no}) while being edited`;
  throw new SpoolError(
    "CONFLICT",
    `job ${job.id} ${started}; edit changes only a job that has not started (queued or held)`,
    {
      remediation:
        job.state === "queued"
          ? `re-read it (spoolctl show ${job.id}) and edit again`
          : `to run a changed command: spoolctl add -- CMD (or spoolctl rerun ${job.id} once it ends)`,
      detail: { job_id: job.id, state: job.state, last_attempt_no: job.last_attempt_no },
    },
  );
}

/** The names of the fields `edit` changes on `job` (those whose value differs), in a fixed order. */
export function changedFields(job: Job, edit: JobEdit): (keyof JobEdit)[] {
  return EDITABLE_FIELDS.filter((k) => edit[k] !== undefined && JSON.stringify(edit[k]) !== JSON.stringify(job[k]));
}

/** The fields of the JSON document `edit` opens in $EDITOR, in order. */
const EDITABLE_KEYS = ["argv", "env", "cwd", "queue", "priority", "timeout_seconds", "max_retries"] as const;

/** What `edit` shows in $EDITOR for `job`: its editable fields as JSON, two-space indented, with a final newline. */
export function editDocument(job: Job): string {
  return `${JSON.stringify(Object.fromEntries(EDITABLE_KEYS.map((k) => [k, job[k]])), null, 2)}\n`;
}

/**
 * Reads back the document of {@link editDocument} as changes, with `add`'s
 * rules for each field (`argv` a non-empty array of strings, `env` string
 * values, `cwd` a path or null, `timeout_seconds` in seconds, 0 or null for
 * none). Raises `INVALID_INPUT` naming the field, for bad JSON, or for a
 * key it does not know (a typo must not be dropped silently).
 */
export function parseEditedDocument(text: string, cwd: string): JobEdit {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw new SpoolError("INVALID_INPUT", `the edited job is not JSON: ${(error as Error).message}; nothing changed`, {
      remediation: "run spoolctl edit again and keep the file one JSON object",
    });
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc))
    throw invalidValue("the edited job", String(text).slice(0, 40), "one JSON object");
  const d = doc as Record<string, unknown>;
  const unknown = Object.keys(d).find((k) => !(EDITABLE_KEYS as readonly string[]).includes(k));
  if (unknown !== undefined) throw invalidValue("the edited job", unknown, `keys among ${EDITABLE_KEYS.join(", ")}`);
  const out: JobEdit = {};
  if (d.argv !== undefined) {
    if (!Array.isArray(d.argv) || d.argv.length === 0 || d.argv.some((a) => typeof a !== "string"))
      throw invalidValue("argv", JSON.stringify(d.argv), "a non-empty array of strings");
    out.argv = validateAddInput({ argv: d.argv as string[] }, (n) => n, cwd).argv;
  }
  if (d.env !== undefined) {
    if (d.env === null || typeof d.env !== "object" || Array.isArray(d.env))
      throw invalidValue("env", JSON.stringify(d.env), "an object of string values");
    const pairs = Object.entries(d.env as Record<string, unknown>).map(([k, v]) => {
      if (typeof v !== "string") throw invalidValue("env", k, "string values");
      return `${k}=${v}`;
    });
    out.env = parseRetryOverrides({ env: pairs }).env ?? {};
  }
  if (d.cwd !== undefined) {
    if (d.cwd !== null && (typeof d.cwd !== "string" || d.cwd === "" || d.cwd.includes("\0")))
      throw invalidValue("cwd", String(d.cwd), "a directory path, or null");
    out.cwd = d.cwd === null ? null : resolve(cwd, d.cwd as string);
  }
  if (d.queue !== undefined) out.queue = parseLane("queue", String(d.queue));
  if (d.priority !== undefined) out.priority = parsePriority("priority", String(d.priority));
  if (d.timeout_seconds !== undefined)
    out.timeout_seconds = parseRetryOverrides({
      timeout: d.timeout_seconds === null || d.timeout_seconds === 0 ? "none" : `${d.timeout_seconds}s`,
    }).timeoutSeconds!;
  if (d.max_retries !== undefined)
    out.max_retries = parseInteger(
      "max_retries",
      String(d.max_retries),
      LIMITS.max_retries.min,
      LIMITS.max_retries.max,
    );
  return out;
}
