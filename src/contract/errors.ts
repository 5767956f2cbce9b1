/**
 * The one registry of error and warning codes (docs/contract.md "Exit codes
 * and codes"). Every failure the CLI reports is a {@link SpoolError} carrying
 * one of these codes; the exit code and retryability come from here, never
 * from the call site.
 */
import type { errorObjectSchema, warningSchema } from "./envelope-schema.ts";
import type { Static } from "./schema-kit.ts";

/** The exit codes (docs/contract.md "Exit codes"). */
export const EXIT = {
  OK: 0,
  USER_INPUT: 1,
  SAFETY_BLOCK: 2,
  ENVIRONMENT: 3,
  TRANSIENT: 4,
  CONFLICT: 5,
  JOB_FAILED: 6,
} as const;

/** An error code's contract: its exit code, whether retrying may help, and a default remediation. */
export interface ErrorCodeInfo {
  exit_code: number;
  retryable: boolean;
  remediation: string;
}

/** Every error code spoolctl can emit, with its exit code (docs/contract.md "Error codes"). */
export const ERROR_CODES = {
  INVALID_INPUT: {
    exit_code: EXIT.USER_INPUT,
    retryable: false,
    remediation: "fix the value and run the command again; see --help",
  },
  MISSING_REQUIRED: {
    exit_code: EXIT.USER_INPUT,
    retryable: false,
    remediation: "supply the missing argument; see --help",
  },
  NOT_FOUND: { exit_code: EXIT.USER_INPUT, retryable: false, remediation: "run: spoolctl list  (to see job ids)" },
  UNKNOWN_FLAG: { exit_code: EXIT.USER_INPUT, retryable: false, remediation: "see the command's --help for its flags" },
  UNKNOWN_COMMAND: {
    exit_code: EXIT.USER_INPUT,
    retryable: false,
    remediation: "run: spoolctl --help  (to list commands)",
  },
  SAFETY_BLOCK: {
    exit_code: EXIT.SAFETY_BLOCK,
    retryable: false,
    remediation: "confirm the destructive form explicitly (see --help)",
  },
  INTERNAL: {
    exit_code: EXIT.ENVIRONMENT,
    retryable: false,
    remediation:
      "run: spoolctl doctor  (a file that is not a spoolctl queue, one written by a newer spoolctl, or one you may not read: pass another --db or fix its permissions; report the message if it persists)",
  },
  QUEUE_CORRUPT: {
    exit_code: EXIT.ENVIRONMENT,
    retryable: false,
    remediation:
      "run: spoolctl doctor  (its integrity check names the damage); stop the queue's workers, then restore the file from a backup, or copy out what SQLite can still read (sqlite3 FILE .recover)",
  },
  QUEUE_REPLACED: {
    exit_code: EXIT.ENVIRONMENT,
    retryable: false,
    remediation:
      "start the worker again: it opens the file now at the path; spoolctl status shows what that file holds (a job that ran in the old file is not in it)",
  },
  LOCKED: {
    exit_code: EXIT.TRANSIENT,
    retryable: true,
    remediation: "another process holds the queue's write lock; retry in a moment",
  },
  TIMEOUT: {
    exit_code: EXIT.TRANSIENT,
    retryable: true,
    remediation: "wait longer (raise --timeout) or check that a worker is running",
  },
  // Exit 3 like INTERNAL (an environment error; docs/contract.md "Stability": no exit code changes), but retryable.
  UNREACHABLE: {
    exit_code: EXIT.ENVIRONMENT,
    retryable: true,
    remediation:
      "check that the queue's database server is running and reachable from this host (spoolctl doctor); run the command again once it is",
  },
  CONFLICT: {
    exit_code: EXIT.CONFLICT,
    retryable: false,
    remediation: "re-read the job's state (spoolctl show ID) and decide again",
  },
  IDEMPOTENCY_CONFLICT: {
    exit_code: EXIT.CONFLICT,
    retryable: false,
    remediation: "use a new --key, or submit the same command, cwd and env as the active job",
  },
} as const satisfies Record<string, ErrorCodeInfo>;

/** A code from {@link ERROR_CODES}. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** Warning codes; a warning never changes the exit code. */
export const WARNING_CODES = {
  IDEMPOTENCY_METADATA_DIFFERS:
    "the job was deduplicated by --key but its tags, note, priority or needs differ from the active job's (the active job's are kept)",
  NO_ATTEMPTS_YET: "the job has not been executed yet",
  EMPTY_BATCH: "the batch is sealed with no job in it: there is nothing to wait for, and its verdict is success",
  REPORT_TRUNCATED: "more jobs matched than report --limit; only the newest are in the report",
  CWD_MISSING:
    "the job's --cwd does not exist yet; the job fails to start (spawn_failed) unless it is created before the job runs",
  RELATIVE_PATH:
    "the job has no --cwd and names a relative path (its program ./x or dir/x, or a file of this folder): it will be resolved in the worker's folder, not here",
  KILL_ASYNC:
    "a running job was asked to stop; its worker is woken and kills it (at its next heartbeat at the latest), so it may still be running now",
  NO_WORKER: "an awaited job is in a lane no live worker serves: it cannot finish until a worker runs",
  HOOK_UNSERVED:
    "hook add: no live worker serves the lane the hook's jobs run in (hooks, unless --run-queue), and plain spoolctl work serves lane default only: its jobs wait queued until a worker of that lane runs",
  LANE_PAUSED:
    "the job's lane is paused (spoolctl pause): the job was added, or is awaited, but no job of the lane starts until it is resumed or its pause ends",
  LANE_UNSERVED:
    "the job was added to a lane no live worker serves: it waits until a worker serves the lane (the message names the command)",
  IDEMPOTENCY_KEY_HELD:
    "retry --all left a dead or canceled job as it was because another active job holds its idempotency key",
  UNTRUSTED_FOLDER:
    "a .spoolctl/ folder (or its config.json) on the way up from the working directory belongs to another user and was not used; SPOOLCTL_TRUSTED_DIRS trusts it",
  NO_QUEUE:
    "no queue exists at the selected location (nothing was ever added there), so it reads as empty; check --db, SPOOLCTL_DB or the folder",
  OUTPUT_NOT_REMOVED:
    "a deleted job's output files could not all be removed (the job's rows are gone); the message names the files to remove by hand",
  SCHEDULES_UNFIRED:
    "schedules are active but no live worker runs the due-slot pass: their slots pass unfired until a worker runs (or spoolctl schedule tick)",
  NEED_NOT_RETRIED:
    "retry --all left a canceled job as it was because a job it needs is dead or canceled and was not retried; retrying that need revives it",
  LANE_UNKNOWN:
    "a lane was paused or given slots that no job, setting or worker names yet (a typo?): the setting holds from now on for the lane's first jobs; the message lists the lanes in use",
  PAUSE_REPLACED:
    "the lane was already paused: this pause (its reason and end) replaces the earlier one, which the message names",
  NEEDS_MEANT:
    "add --after N got a bare integer that is also an existing job's id: --after is a delay in seconds; --needs N waits for the job",
  TRACE_CONTEXT_INVALID:
    "add found a malformed TRACEPARENT (or an oversized TRACESTATE or BAGGAGE) in its environment: it was dropped, never passed on, and the job's attempts start traces of their own",
} as const;

/** A code from {@link WARNING_CODES}. */
export type WarningCode = keyof typeof WARNING_CODES;

/**
 * A warning as it appears in the envelope: `{code, message}`, the type of its
 * schema (./envelope-schema.ts `warningSchema`) over {@link WARNING_CODES}.
 */
export type Warning = Static<ReturnType<typeof warningSchema<WarningCode>>>;

/** Optional parts of an error beyond its code and message. */
export interface SpoolErrorOptions {
  remediation?: string;
  did_you_mean?: string | null;
  detail?: Record<string, unknown>;
}

/**
 * A failure with a contract code. Thrown anywhere below the CLI; `src/cli.ts`
 * renders it as one stderr line (human) or an envelope error (JSON).
 */
export class SpoolError extends Error {
  readonly code: ErrorCode;
  readonly remediation: string;
  readonly did_you_mean?: string | null;
  readonly detail?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: SpoolErrorOptions = {}) {
    // A bad value is echoed, never whole when it is huge (docs/contract.md "Error objects and warnings"): a 1 MB lane name stays readable.
    super(clipEcho(message));
    this.name = "SpoolError";
    this.code = code;
    this.remediation = clipEcho(options.remediation ?? ERROR_CODES[code].remediation);
    this.did_you_mean =
      typeof options.did_you_mean === "string" ? clipEcho(options.did_you_mean) : options.did_you_mean;
    this.detail = options.detail && clipDetail(options.detail);
  }

  /** The exit code of this error's code (from {@link ERROR_CODES}). */
  get exitCode(): number {
    return ERROR_CODES[this.code].exit_code;
  }
}

/**
 * The error object of the envelope: `{code, message, exit_code, remediation,
 * did_you_mean?, detail?}`, the type of its schema (./envelope-schema.ts
 * `errorObjectSchema`) over {@link ERROR_CODES}.
 */
export type ErrorObject = Static<ReturnType<typeof errorObjectSchema<ErrorCode>>>;

/** Longest run of one word (no white space) an error or warning echoes, characters (docs/contract.md "Error objects and warnings"). */
const ECHO_MAX = 200;

/**
 * `text` with every run of more than {@link ECHO_MAX} non-space characters cut
 * to that many and marked `…(+N chars)`: an error echoes a bad value, but at
 * most about 200 characters of it. Never splits a surrogate pair.
 */
function clipEcho(text: string): string {
  if (text.length <= ECHO_MAX) return text;
  return text.replace(new RegExp(`\\S{${ECHO_MAX + 1},}`, "g"), (word) => {
    let keep = ECHO_MAX;
    const last = word.charCodeAt(keep - 1);
    if (last >= 0xd800 && last <= 0xdbff) keep--;
    return `${word.slice(0, keep)}…(+${word.length - keep} chars)`;
  });
}

/** A detail with its strings (in objects and arrays too) clipped as {@link clipEcho} clips a message; other values unchanged. */
function clipDetail(detail: Record<string, unknown>): Record<string, unknown> {
  return clipValue(detail, 0) as Record<string, unknown>;
}

function clipValue(v: unknown, depth: number): unknown {
  if (typeof v === "string") return v.length > ECHO_MAX ? clipEcho(v) : v;
  if (depth > 4 || v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map((x) => clipValue(x, depth + 1));
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [clipEcho(k), clipValue(x, depth + 1)]));
}

/** Converts a {@link SpoolError} to its envelope form. */
export function toErrorObject(error: SpoolError): ErrorObject {
  const out: ErrorObject = {
    code: error.code,
    message: error.message,
    exit_code: error.exitCode,
    remediation: error.remediation,
  };
  if (error.did_you_mean !== undefined) out.did_you_mean = error.did_you_mean;
  if (error.detail !== undefined) out.detail = error.detail;
  return out;
}

/** Shorthand for an `INVALID_INPUT` error naming the flag, the value and what is accepted. */
export function invalidValue(flag: string, value: string, accepted: string): SpoolError {
  return new SpoolError("INVALID_INPUT", `invalid value for ${flag}: ${JSON.stringify(value)} (expected ${accepted})`, {
    detail: { flag, value, accepted },
  });
}
