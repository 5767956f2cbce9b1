/**
 * `add` (docs/architecture.md "Adding a job"): validate a job spec, apply defaults, deduplicate by
 * idempotency key, insert, and append the `added` event — one transaction for
 * one job or a whole `--from` file.
 */

import { existsSync, statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { invalidValue, SpoolError, type Warning } from "../contract/errors.ts";
import type { BatchAdd, Job, NewJob } from "../store/model.ts";
import type { Store } from "../store/store.ts";
import { DEFAULTS, LIMITS } from "./limits.ts";
import { type NeedsSpec, planJobNeeds, validateNeedsInput } from "./needs.ts";
import { type QueueSettings, readSettings } from "./settings.ts";
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
  /** `--needs` values (or a `--from` line's `needs`): job ids, keys, `last`, refs of other lines. */
  needs?: string[];
  needsPolicy?: string;
  /** A `--from` line's name for other lines' `needs`. */
  ref?: string;
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

/** The result of adding one job, as `add --json` reports it. */
export interface AddedJob {
  job_id: number;
  state: Job["state"];
  queue: string;
  priority: number;
  next_run_at: number;
  cwd: string | null;
  env_keys: string[];
  deduplicated: boolean;
}

/** What an env variable name may be (shared with retry overrides, so the two never disagree). */
export const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
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
 * The paths of a job without a cwd that will be resolved in the worker's
 * folder although they were written relative to `here` (docs/architecture.md
 * "Adding a job"): its program when a relative path with a slash (`./run.sh`,
 * `bin/x`; a bare name is looked up on PATH), and arguments that are `./x` or
 * `../x`, or name a file that exists in `here`. Empty when the job has a cwd.
 */
export function relativePaths(spec: Pick<JobSpec, "argv" | "cwd">, here: string): string[] {
  if (spec.cwd !== null) return [];
  const [program, ...args] = spec.argv;
  const found: string[] = [];
  if (program?.includes("/") && !isAbsolute(program)) found.push(program);
  for (const arg of args) {
    if (arg.startsWith("-") || isAbsolute(arg) || arg === "") continue;
    if (arg.startsWith("./") || arg.startsWith("../") || (!arg.includes("=") && fileHere(resolve(here, arg))))
      found.push(arg);
  }
  return found;
}

/** Whether `path` is an existing regular file (never throws). */
function fileHere(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The `RELATIVE_PATH` warning of a job added without `--cwd` whose paths
 * ({@link relativePaths}) would be resolved in the worker's folder; `rerun` is
 * the exact command that adds it with `--cwd .` instead. Null when there is nothing to say.
 */
export function relativePathWarning(
  spec: Pick<JobSpec, "argv" | "cwd">,
  here: string,
  rerun: string,
  label = "",
): Warning | null {
  const paths = relativePaths(spec, here);
  if (paths.length === 0) return null;
  const what =
    paths.length === 1
      ? `the relative path ${JSON.stringify(paths[0])}`
      : `the relative paths ${paths.map((x) => JSON.stringify(x)).join(", ")}`;
  return {
    code: "RELATIVE_PATH",
    message: `${label}${what} will be resolved in the worker's folder, not here (${here}): without --cwd a job runs where its worker runs. To run it from this folder: ${rerun}`,
  };
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

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const sortedEntries = (o: Record<string, string>) => Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * The idempotency rule (docs/architecture.md "Idempotency"): an active job with the same key and the same
 * execution payload (argv, cwd, env) is returned instead of a new one; a
 * different payload is `IDEMPOTENCY_CONFLICT` (exit 5).
 */
export function checkIdempotency(active: NewJob & { id: number }, job: NewJob): { metadataDiffers: boolean } {
  const samePayload =
    sameJson(active.argv, job.argv) &&
    active.cwd === job.cwd &&
    sameJson(sortedEntries(active.env), sortedEntries(job.env));
  if (!samePayload) {
    throw new SpoolError(
      "IDEMPOTENCY_CONFLICT",
      `key ${JSON.stringify(job.idempotency_key)} belongs to active job ${active.id}, which runs a different command, cwd or env`,
      {
        detail: { job_id: active.id, key: job.idempotency_key },
      },
    );
  }
  const metadataDiffers =
    !sameJson(sortedEntries(active.tags), sortedEntries(job.tags)) ||
    active.note !== job.note ||
    active.priority !== job.priority ||
    active.queue !== job.queue ||
    active.timeout_seconds !== job.timeout_seconds ||
    active.max_retries !== job.max_retries ||
    active.max_crashes !== job.max_crashes;
  return { metadataDiffers };
}

function describe(job: Job, deduplicated: boolean): AddedJob {
  return {
    job_id: job.id,
    state: job.state,
    queue: job.queue,
    priority: job.priority,
    next_run_at: job.next_run_at,
    cwd: job.cwd,
    env_keys: Object.keys(job.env).sort(),
    deduplicated,
  };
}

/** What an add does with spec `index`: insert it, reuse an active job, or reuse one inserted by an earlier spec. */
type AddStep =
  | { kind: "insert"; index: number; job: NewJob }
  | { kind: "active"; index: number; job: Job }
  | { kind: "batch"; index: number; of: number };

/**
 * The idempotency rule applied to a whole add (docs/architecture.md
 * "Idempotency"), decided before anything is written: a spec whose key an
 * active job holds reuses it (or raises, {@link checkIdempotency}); one whose
 * key an earlier spec of the same add takes reuses that one (or raises,
 * naming both specs); any other spec is inserted. Pushes the metadata warnings.
 */
function planAdds(wanted: NewJob[], active: Map<string, Job>, labels: string[], warnings: Warning[]): AddStep[] {
  const firstByKey = new Map<string, number>();
  return wanted.map((job, index): AddStep => {
    const key = job.idempotency_key;
    if (key === null) return { kind: "insert", index, job };
    const holder = active.get(key);
    const earlier = firstByKey.get(key);
    let metadataDiffers = false;
    let step: AddStep;
    if (holder) {
      metadataDiffers = checkIdempotency(holder, job).metadataDiffers;
      step = { kind: "active", index, job: holder };
    } else if (earlier !== undefined) {
      const earlierLabel = labels[earlier] ?? `entry ${earlier + 1}`;
      metadataDiffers = checkWithinBatch(wanted[earlier]!, job, earlierLabel, labels[index]).metadataDiffers;
      step = { kind: "batch", index, of: earlier };
    } else {
      firstByKey.set(key, index);
      return { kind: "insert", index, job };
    }
    if (metadataDiffers) {
      const reused = step.kind === "active" ? `job ${step.job.id}` : (labels[earlier!] ?? `entry ${earlier! + 1}`);
      warnings.push({
        code: "IDEMPOTENCY_METADATA_DIFFERS",
        message: `${reused} was reused for key ${JSON.stringify(key)}; its tags, note, priority, lane, timeout or budgets differ from this request; the active job's were kept`,
      });
    }
    return step;
  });
}

/**
 * {@link checkIdempotency} for a key already taken by a job of the same batch:
 * that job exists only inside the transaction this conflict rolls back, so the
 * message names the spec that added it (`line 1`), never its id.
 */
function checkWithinBatch(
  active: NewJob,
  job: NewJob,
  earlier: string,
  label: string | undefined,
): { metadataDiffers: boolean } {
  try {
    return checkIdempotency({ ...active, id: 0 }, job);
  } catch (error) {
    if (!(error instanceof SpoolError) || error.code !== "IDEMPOTENCY_CONFLICT") throw error;
    const key = JSON.stringify(job.idempotency_key);
    throw new SpoolError(
      "IDEMPOTENCY_CONFLICT",
      `${label ? `${label}: ` : ""}key ${key} is already used by ${earlier} of this batch, which runs a different command, cwd or env; nothing was added`,
      {
        remediation: `give each job of the batch its own key, or the same command, cwd and env as ${earlier}`,
        detail: { key: job.idempotency_key, earlier, ...(label ? { conflicting: label } : {}) },
      },
    );
  }
}

/**
 * Adds validated specs in one `BEGIN IMMEDIATE` transaction: all or none.
 * `labels[i]` names spec i in messages (`line 3` for `add --from`).
 * With `batch`, the jobs join that batch in the same transaction (and seal it
 * when it says so; docs/architecture.md "Batches").
 * Raises `IDEMPOTENCY_CONFLICT` (nothing added), `CONFLICT` (a sealed or
 * failed batch; nothing added) or `LOCKED`.
 */
export async function addJobs(
  store: Store,
  specs: JobSpec[],
  now = store.now(),
  labels: string[] = [],
  batch: BatchAdd | null = null,
): Promise<{ jobs: AddedJob[]; warnings: Warning[] }> {
  const warnings: Warning[] = [];
  const jobs = await store.write(async (tx) => {
    const settings = await readSettings(tx);
    const wanted = specs.map((spec) => toNewJob(spec, settings, now));
    const keys = wanted.flatMap((j) => (j.idempotency_key === null ? [] : [j.idempotency_key]));
    const active = keys.length > 0 ? await tx.findActiveJobsByKeys(keys) : new Map<string, Job>();
    const plan = planAdds(wanted, active, labels, warnings);
    const needsOf = await planJobNeeds(tx, specs, plan, labels, warnings);
    const stored = await tx.addJobs(
      plan.flatMap((p) => (p.kind === "insert" ? [p.job] : [])),
      now,
      needsOf,
      batch,
    );
    let next = 0;
    const byIndex = new Map<number, Job>();
    for (const p of plan) if (p.kind === "insert") byIndex.set(p.index, stored[next++]!);
    return plan.map((p) =>
      p.kind === "insert"
        ? describe(byIndex.get(p.index)!, false)
        : p.kind === "active"
          ? describe(p.job, true)
          : describe(byIndex.get(p.of)!, true),
    );
  });
  return { jobs, warnings };
}
