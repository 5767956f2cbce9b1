/**
 * The flags that select failed jobs, shared by `triage`, `retry --all` and
 * `list` so a script can do what triage does (docs/architecture.md "Triage"):
 * `--queue`, `--tag`, `--since`, `--failure-reason`, `--match`, `--batch`.
 */
import type { FlagsDef } from "../contract/flags.ts";
import { FAILURE_REASONS, type FailureReason } from "../model/job.ts";
import { LIMITS } from "../model/limits.ts";
import { parseBatchName } from "../ops/batch.ts";
import type { JobSelection } from "../ops/triage-groups.ts";
import type { SnapshotReader } from "../store/store.ts";
import { showBatch } from "../store/verbs/batches.ts";

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
  } as const satisfies FlagsDef;
}

/** Names of the job filter flags. */
export const JOB_FILTER_NAMES = ["queue", "tag", "since", "failure-reason", "match", "batch"] as const;

/** Parsed values of the selection flags. */
export interface JobFilterArgs {
  queue?: string;
  tag: Record<string, string>;
  since?: number;
  "failure-reason": string[];
  match?: string;
  batch?: string;
}

/**
 * A `--batch` selection that matched nothing: `NOT_FOUND` when no batch has that name (a typo
 * reads as "no jobs" otherwise), as `status` and `wait` say; nothing when the batch exists or no
 * `--batch` was given. Called only on an empty result, so a match costs no extra read.
 */
export async function batchMustExist(store: SnapshotReader, batch: string | undefined): Promise<void> {
  if (batch !== undefined) await showBatch(store, batch);
}

/** The {@link JobSelection} the flags ask for. */
export function jobSelectionOf(args: JobFilterArgs): JobSelection {
  return {
    queue: args.queue,
    tags: args.tag,
    ...(args.since !== undefined ? { sinceSeconds: args.since } : {}),
    ...(args["failure-reason"].length ? { failureReasons: args["failure-reason"] as FailureReason[] } : {}),
    ...(args.match !== undefined ? { match: args.match } : {}),
    ...(args.batch !== undefined ? { batch: parseBatchName("--batch", args.batch) } : {}),
  };
}
