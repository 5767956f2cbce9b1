/**
 * The flags that select failed jobs, shared by `triage`, `retry --all` and
 * `list` so a script can do what triage does (docs/architecture.md "Triage"):
 * `--queue`, `--tag`, `--since`, `--failure-reason`, `--match`, `--batch`, `--search`.
 */
import { SpoolError } from "../contract/errors.ts";
import type { FlagsDef } from "../contract/flags.ts";
import { FAILURE_REASONS, type FailureReason, type JobFilter } from "../model/job.ts";
import { LIMITS } from "../model/limits.ts";
import { parseBatchName } from "../ops/batch.ts";
import { type JobSelection, selectionFilter } from "../ops/triage-groups.ts";
import type { SnapshotReader } from "../store/store.ts";
import { showBatch } from "../store/verbs/batches.ts";
import type { JobTarget } from "../store/verbs/job-targets.ts";

/** The job filter flags; `prefix` starts each description (e.g. "with --all: "). */
export function jobFilterFlags(prefix = "") {
  return {
    queue: { type: "string", description: `${prefix}only jobs of this lane`, valueHint: "NAME", format: "lane" },
    tag: {
      type: "string",
      repeatable: true,
      description: `${prefix}only jobs with this tag; all given must match`,
      valueHint: "K=V",
      valueType: "pair",
    },
    since: {
      type: "string",
      valueType: "duration",
      min: 1,
      max: LIMITS.delay_seconds.max,
      valueHint: "DURATION",
      description: `${prefix}only jobs that ended within this long: 30m, 1h, 2d`,
    },
    "failure-reason": {
      type: "string",
      repeatable: true,
      separator: ",",
      looseChoices: true,
      choices: FAILURE_REASONS,
      valueHint: "REASON",
      noun: "a failure reason",
      description: `${prefix}only jobs whose last attempt failed so (process_exit, timeout, spawn_failed, worker_crash, canceled; canceled also before it ran); comma-separated or repeated`,
    },
    batch: {
      type: "string",
      valueHint: "NAME",
      description: `${prefix}only jobs of this batch (add --batch NAME)`,
    },
    match: {
      type: "string",
      valueHint: "GLOB",
      description: `${prefix}only jobs whose whole command line (argv joined by spaces) matches this glob: * any run, ? one character, [abc], [!abc]; quote it`,
    },
    search: {
      type: "string",
      valueHint: "TEXT",
      description: `${prefix}only jobs whose command line, idempotency key or last error contains this text (ASCII letters in either case)`,
    },
    "failure-group": {
      type: "string",
      valueHint: "KEY",
      description: `${prefix}only the dead jobs of this failure group, named by its key as the web view's triage page gives it (reason|exit|signal|signature)`,
    },
  } as const satisfies FlagsDef;
}

/** Names of the job filter flags. */
export const JOB_FILTER_NAMES = [
  "queue",
  "tag",
  "since",
  "failure-reason",
  "match",
  "batch",
  "search",
  "failure-group",
] as const;

/** Parsed values of the selection flags. */
export interface JobFilterArgs {
  queue?: string;
  tag: Record<string, string>;
  since?: number;
  "failure-reason": string[];
  match?: string;
  batch?: string;
  search?: string;
  "failure-group"?: string;
}

/**
 * A `--batch` selection that matched nothing: `NOT_FOUND` when no batch has that name (a typo
 * reads as "no jobs" otherwise), as `status` and `wait` say; nothing when the batch exists or no
 * `--batch` was given. Called only on an empty result, so a match costs no extra read.
 */
export async function batchMustExist(store: SnapshotReader, batch: string | undefined): Promise<void> {
  if (batch !== undefined) await showBatch(store, batch);
}

/** The {@link JobSelection} the flags ask for; `INVALID_INPUT` for an empty `--search` (it would select every job). */
export function jobSelectionOf(args: JobFilterArgs): JobSelection {
  if (args.search === "")
    throw new SpoolError("INVALID_INPUT", "--search needs some text: an empty one would select every job", {
      remediation: "give the text to look for, e.g. --search 'connection refused'",
    });
  return {
    queue: args.queue,
    tags: args.tag,
    ...(args.since !== undefined ? { sinceSeconds: args.since } : {}),
    ...(args["failure-reason"].length ? { failureReasons: args["failure-reason"] as FailureReason[] } : {}),
    ...(args.match !== undefined ? { match: args.match } : {}),
    ...(args.batch !== undefined ? { batch: parseBatchName("--batch", args.batch) } : {}),
    ...(args.search !== undefined ? { search: args.search } : {}),
    ...(args["failure-group"] !== undefined ? { failureGroup: args["failure-group"] } : {}),
  };
}

/** What a verb that takes ids or `--all` reads of its context to tell which it was given. */
interface SelectionContext {
  args: JobFilterArgs & { all: boolean };
  given(name: string): boolean;
  raw: { values: Record<string, unknown> };
}

/**
 * The jobs a bulk verb (`retry`, `cancel`, `delete`) was told to act on
 * (docs/architecture.md "Acting on a selection"): `refs`, or with `--all` the
 * selection its filter flags make (also `extra` flags such as `--state`).
 * Raises `INVALID_INPUT` for a filter without `--all` or for ids and `--all`
 * together, `MISSING_REQUIRED` for neither; `example` is the remediation's
 * command for a selection (`spoolctl cancel --all --queue Q`).
 */
export function refsOrSelection(
  ctx: SelectionContext,
  verb: string,
  refs: string[],
  example: string,
  extra: readonly string[] = [],
): { refs: string[] } | { selection: JobSelection } {
  const filters = [...extra, ...JOB_FILTER_NAMES].filter((k) => ctx.given(k));
  const either = `spoolctl ${verb} ID…  or  ${example}`;
  if (!ctx.args.all) {
    if (filters.length)
      throw new SpoolError("INVALID_INPUT", `--${filters[0]} selects jobs only with --all`, { remediation: example });
    if (refs.length === 0)
      throw new SpoolError("MISSING_REQUIRED", `${verb} needs job ids, or --all with filters`, { remediation: either });
    return { refs };
  }
  if (refs.length) throw new SpoolError("INVALID_INPUT", "give job ids or --all, not both", { remediation: either });
  return { selection: jobSelectionOf(ctx.args) };
}

/**
 * The words that repeat a selection on the command line (`--all --queue builds
 * --tag ci=1`), from the flags as given: what a refusal's remediation appends
 * `--yes` to. `extra`: more flags of the verb that belong to the selection.
 */
export function selectionWords(ctx: SelectionContext, extra: readonly string[] = []): string[] {
  const words = ["--all"];
  for (const name of [...extra, ...JOB_FILTER_NAMES]) {
    const value = ctx.raw.values[name];
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) words.push(`--${name}`, String(one));
  }
  return words;
}

/**
 * What a bulk verb hands its store operation (docs/architecture.md "Acting on
 * a selection"): the ids it was given, or its selection's filter (`now`: epoch
 * seconds, for `--since`) narrowed by `narrow` (the states the verb acts on).
 */
export function targetOf(
  named: { refs: string[] } | { selection: JobSelection },
  now: number,
  narrow: Partial<Omit<JobFilter, "limit">> = {},
): JobTarget {
  return "refs" in named ? named.refs : { filter: { ...selectionFilter(named.selection, now), ...narrow } };
}
