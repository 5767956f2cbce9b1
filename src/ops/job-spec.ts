/**
 * A job spec from what a person typed (docs/architecture.md "Adding a job"):
 * the flags of `add`, a line of `add --from`, `enqueue`, the job of a
 * schedule or hook, and the settings a retry changes on the way, parsed with
 * one set of rules and bounds, so a retried job can hold nothing `add` would
 * refuse. Pure: no store, no clock but the one given.
 */

import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { invalidValue, SpoolError } from "../contract/errors.ts";
import { KILL_LEFTOVERS_VAR, type NewJob } from "../model/job.ts";
import { DEFAULTS, LIMITS } from "../model/limits.ts";
import type { QueueSettings } from "../model/settings.ts";
import { type NeedsSpec, validateNeedsInput } from "./needs.ts";
import {
  durationText,
  parseDuration,
  parseInteger,
  parseLane,
  parsePairs,
  parseTimeout,
  parseTimestamp,
} from "./values.ts";

/** A job spec as the user wrote it: flag values (strings), before validation. */
export interface AddInput {
  /** The command's argv (from `--` or positionals). */
  argv?: string[];
  /** `-c STRING`: run through `sh -c`. */
  command?: string;
  timeout?: string;
  maxRetries?: string;
  maxCrashes?: string;
  priority?: string;
  queue?: string;
  after?: string;
  at?: string;
  cwd?: string;
  env?: string[];
  tag?: string[];
  note?: string;
  key?: string;
  /** `--name` (or a `--from` line's `name`): the job's name, a reference like a key (docs/architecture.md "Job names"). */
  name?: string;
  /** `--needs` values (or a `--from` line's `needs`): job ids, keys, `last`, refs of other lines. */
  needs?: string[];
  needsPolicy?: string;
  /** A `--from` line's name for other lines' `needs`. */
  ref?: string;
  /** `--kill-leftovers`: stored as the job variable {@link KILL_LEFTOVERS_VAR}=1 (docs/architecture.md "Leftover processes"). */
  killLeftovers?: boolean;
}

/** A validated spec: the stored job minus the defaults that come from settings. */
export interface JobSpec extends Omit<NewJob, "timeout_seconds" | "max_retries" | "next_run_at">, NeedsSpec {
  timeout_seconds: number | null;
  max_retries: number | null;
  /** Delay from submission in seconds, or an absolute epoch time. */
  delay: { after: number } | { at: number } | null;
  /** `--after N` given as a bare integer: N, which may be a job id meant as a need (warned about). */
  after_bare?: number | null;
}

/** What an env variable name may be (shared with retry overrides, so the two never disagree). */
const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const TAG_KEY = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/;

/** Characters no program name holds but a shell command line does: blanks, operators, expansions, quotes. */
const SHELL_SYNTAX = /[\s|&;<>()$`'"\\]/;

/**
 * Refuses a program name that is a shell command line (`add -- "make && make
 * test"`, one argument): argv runs without a shell, so it would fail with
 * "program not found". A name that is an existing file (a path with a space)
 * passes. Raises `INVALID_INPUT` suggesting `-c`.
 */
function refuseShellLine(argv: string[], jobCwd: string): void {
  const program = argv[0]!;
  if (!SHELL_SYNTAX.test(program) || existsSync(resolve(jobCwd, program))) return;
  const line = argv.length === 1 ? program : argv.join(" ");
  throw new SpoolError(
    "INVALID_INPUT",
    `${JSON.stringify(program)} is a shell command line, not a program: the command runs without a shell; nothing was added`,
    {
      remediation: `run it through sh: spoolctl add -c '${line.replaceAll("'", `'\\''`)}'  (in a --from line: {"command": ${JSON.stringify(line)}})`,
      detail: { argv },
    },
  );
}

/**
 * Validates an {@link AddInput}. `flag(name)` renders a field's name for
 * messages (`--timeout`, or `line 3: timeout` for `--from`). `cwd` is the
 * directory relative `--cwd` values are made absolute against.
 * Raises `MISSING_REQUIRED` without a command, `INVALID_INPUT` for any bad value.
 */
export function validateAddInput(input: AddInput, flag: (name: string) => string, cwd: string): JobSpec {
  const hasArgv = input.argv !== undefined && input.argv.length > 0;
  if (hasArgv && input.command !== undefined) {
    throw new SpoolError("INVALID_INPUT", `give the command either after -- or with ${flag("c")}, not both`, {
      remediation: "spoolctl add -- CMD ARGS…  or  spoolctl add -c 'SHELL STRING'",
    });
  }
  let argv: string[];
  if (input.command !== undefined) {
    if (input.command.trim() === "") throw invalidValue(flag("c"), input.command, "a non-empty shell command");
    argv = ["sh", "-c", input.command];
  } else if (hasArgv) {
    argv = input.argv!;
    if (argv[0] === "")
      throw invalidValue("command", "", "a program name; the first argument after -- cannot be empty");
    refuseShellLine(argv, input.cwd === undefined ? cwd : resolve(cwd, input.cwd));
  } else {
    throw new SpoolError("MISSING_REQUIRED", "add needs a command to run", {
      remediation: "spoolctl add -- CMD ARGS…  or  spoolctl add -c 'SHELL STRING'",
    });
  }
  if (argv.some((a) => a.includes("\0"))) throw invalidValue("command", argv.join(" "), "arguments without NUL bytes");
  if (Buffer.byteLength(JSON.stringify(argv)) > LIMITS.argv.maxBytes) {
    throw invalidValue(
      "command",
      `${argv.join(" ").slice(0, 40)}…`,
      `a command of at most ${LIMITS.argv.maxBytes} bytes`,
    );
  }

  const timeout_seconds = input.timeout === undefined ? null : parseTimeout(flag("timeout"), input.timeout);
  const max_retries =
    input.maxRetries === undefined
      ? null
      : parseInteger(flag("max-retries"), input.maxRetries, LIMITS.max_retries.min, LIMITS.max_retries.max);
  const max_crashes =
    input.maxCrashes === undefined
      ? null
      : parseInteger(flag("max-crashes"), input.maxCrashes, LIMITS.max_crashes.min, LIMITS.max_crashes.max);
  const priority =
    input.priority === undefined
      ? DEFAULTS.priority
      : parseInteger(flag("priority"), input.priority, LIMITS.priority.min, LIMITS.priority.max);
  const queue = input.queue === undefined ? DEFAULTS.queue : parseLane(flag("queue"), input.queue);

  if (input.after !== undefined && input.at !== undefined) {
    throw new SpoolError("INVALID_INPUT", `give ${flag("after")} or ${flag("at")}, not both`, {
      remediation: "choose a delay (--after 5m) or a time (--at 2026-12-01T09:00:00Z)",
    });
  }
  let delay: JobSpec["delay"] = null;
  if (input.after !== undefined)
    delay = { after: parseDuration(flag("after"), input.after, 0, LIMITS.delay_seconds.max) };
  if (input.at !== undefined) {
    // The bound of --after, so both spellings of "later" agree (and a far-future time cannot break date rendering).
    const max = LIMITS.delay_seconds.max;
    delay = {
      at: parseTimestamp(flag("at"), input.at, {
        at: Date.now() / 1000 + max,
        rule: `a time at most ${max / (365 * 86400)} years ahead (the --after bound, ${durationText(max)})`,
      }),
    };
  }

  let jobCwd: string | null = null;
  if (input.cwd !== undefined) {
    if (input.cwd === "" || input.cwd.includes("\0")) throw invalidValue(flag("cwd"), input.cwd, "a directory path");
    jobCwd = resolve(cwd, input.cwd);
    // A missing folder may be made before the job runs (CWD_MISSING); a file never becomes a working directory.
    let kind: ReturnType<typeof statSync> | undefined;
    try {
      kind = statSync(jobCwd, { throwIfNoEntry: false });
    } catch {
      kind = undefined; // unreadable from here: the worker decides when it runs
    }
    if (kind && !kind.isDirectory()) throw invalidValue(flag("cwd"), input.cwd, "a directory (this is a file)");
  }
  const env = parsePairs(flag("env"), input.env ?? [], ENV_KEY, "a variable name ([A-Za-z_][A-Za-z0-9_]*)");
  if (input.killLeftovers) env[KILL_LEFTOVERS_VAR] = "1";
  if (Object.values(env).some((v) => v.includes("\0")))
    throw invalidValue(flag("env"), "…", "values without NUL bytes");
  if (Object.keys(env).length > LIMITS.env.max)
    throw invalidValue(flag("env"), `${Object.keys(env).length} variables`, `at most ${LIMITS.env.max}`);
  const tags = parsePairs(flag("tag"), input.tag ?? [], TAG_KEY, "1-64 of letters, digits, '.', '_', ':', '/' or '-'");
  if (Object.keys(tags).length > LIMITS.tags.max)
    throw invalidValue(flag("tag"), `${Object.keys(tags).length} tags`, `at most ${LIMITS.tags.max} tags`);
  for (const [k, v] of Object.entries(tags)) {
    if (v.length > LIMITS.tags.valueMaxLength)
      throw invalidValue(
        flag("tag"),
        `${k}=${v.slice(0, 20)}…`,
        `a value of at most ${LIMITS.tags.valueMaxLength} characters`,
      );
  }
  if (input.note !== undefined && input.note.length > LIMITS.note.maxLength) {
    throw invalidValue(flag("note"), `${input.note.slice(0, 20)}…`, `at most ${LIMITS.note.maxLength} characters`);
  }
  if (input.key !== undefined && (input.key.trim() === "" || input.key.length > LIMITS.key.maxLength)) {
    throw invalidValue(flag("key"), input.key, `a non-blank key of at most ${LIMITS.key.maxLength} characters`);
  }
  // A key is also a job reference (show KEY, wait KEY): digits only would name a job id instead.
  if (input.key !== undefined && /^\d+$/.test(input.key)) {
    throw invalidValue(flag("key"), input.key, "a key that is not only digits (digits name job ids), e.g. nightly-1");
  }
  return {
    ...validateNeedsInput(input, flag),
    name: jobName(input, flag),
    argv,
    priority,
    queue,
    timeout_seconds,
    max_retries,
    max_crashes,
    idempotency_key: input.key ?? null,
    tags,
    note: input.note ?? null,
    cwd: jobCwd,
    env,
    delay,
  };
}

/** Control characters (C0, DEL, C1): a name is printed on one line of every view. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * The job's name (docs/architecture.md "Job names"): `name` as given, else a
 * `--from` line's `ref` when the line gives no key (the key is its reference
 * then), else null. Checked like a key (a name is a reference too): non-blank,
 * at most the key's length, not only digits (ids), not `last`, no control
 * characters. Raises `INVALID_INPUT` naming the field.
 */
function jobName(input: AddInput, flag: (name: string) => string): string | null {
  const field = input.name !== undefined ? "name" : "ref";
  const name = input.name ?? (input.key === undefined ? input.ref : undefined);
  if (name === undefined) return null;
  const max = LIMITS.key.maxLength;
  if (name.trim() === "" || name.length > max || CONTROL.test(name))
    throw invalidValue(flag(field), name, `a non-blank name of at most ${max} characters on one line`);
  if (/^\d+$/.test(name) || name === "last")
    throw invalidValue(flag(field), name, "a name that is not only digits (job ids) nor last, e.g. unit-tests");
  return name;
}

/** Applies queue-wide defaults and the clock to a spec. A past `--at` clamps to now. */
export function toNewJob(spec: JobSpec, settings: QueueSettings, now: number): NewJob {
  const { delay, needs: _needs, needs_policy: _policy, ref: _ref, after_bare: _bare, ...rest } = spec;
  let next_run_at = now;
  if (delay && "after" in delay) next_run_at = now + delay.after;
  if (delay && "at" in delay) next_run_at = Math.max(now, delay.at);
  return {
    ...rest,
    timeout_seconds: spec.timeout_seconds ?? settings.timeout,
    max_retries: spec.max_retries ?? settings.max_retries,
    next_run_at,
  };
}

/** Run settings a retry may change on the way (`triage`): absent fields stay as they are. */
export interface RetryOverrides {
  timeoutSeconds?: number;
  maxRetries?: number;
  /** Variables to set (added or replaced); the job's other variables stay. */
  env?: Record<string, string>;
}

/**
 * Parses overrides as a person types them, with the rules and bounds of `add`
 * (docs/architecture.md "Adding a job"), so a retried job can hold nothing `add` would refuse. Raises
 * `INVALID_INPUT` naming the field.
 */
export function parseRetryOverrides(input: { timeout?: string; maxRetries?: string; env?: string[] }): RetryOverrides {
  const out: RetryOverrides = {};
  if (input.timeout !== undefined) out.timeoutSeconds = parseTimeout("timeout", input.timeout);
  if (input.maxRetries !== undefined)
    out.maxRetries = parseInteger("max-retries", input.maxRetries, LIMITS.max_retries.min, LIMITS.max_retries.max);
  if (input.env !== undefined) {
    const env = parsePairs("env", input.env, ENV_KEY, "a variable name ([A-Za-z_][A-Za-z0-9_]*)");
    if (Object.values(env).some((v) => v.includes("\0"))) throw invalidValue("env", "…", "values without NUL bytes");
    out.env = env;
  }
  return out;
}
