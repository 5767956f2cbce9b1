/**
 * Reading jobs: resolve a job reference, the shapes of `list` and `show`
 * (read by the verbs of src/store/verbs/jobs.ts), parsing of `--state`.
 */
import { invalidValue, SpoolError } from "../contract/errors.ts";
import type { JobDetail, ListedJobs } from "../describe/schemas-core.ts";
import type { AttemptWithHost, JobSummary } from "../describe/schemas-rows.ts";
import { JOB_STATES, type Job, type JobFilter, type JobState } from "../model/job.ts";
import { LIMITS } from "../model/limits.ts";

// Defined once, as the JSON Schemas `spoolctl schema` prints.
export type { AttemptWithHost, JobDetail };

/** QueueCTL spellings of states (docs/architecture.md "Job states"). */
const STATE_ALIASES: Record<string, JobState> = { pending: "queued", processing: "running", completed: "done" };

/**
 * Parses `--state` values (repeatable and/or comma-separated), accepting the
 * QueueCTL spellings and `failed` (reserved, matches nothing). Raises `INVALID_INPUT`.
 */
export function parseStates(raws: string[]): { states: JobState[]; matchesNothing: boolean } {
  const states = new Set<JobState>();
  let sawFailed = false;
  for (const raw of raws.flatMap((r) => r.split(","))) {
    const name = raw.trim().toLowerCase();
    if (name === "failed") {
      sawFailed = true;
      continue;
    }
    const state = (JOB_STATES as readonly string[]).includes(name)
      ? (name as JobState)
      : Object.hasOwn(STATE_ALIASES, name)
        ? STATE_ALIASES[name]
        : undefined;
    if (!state)
      throw invalidValue(
        "--state",
        raw,
        `one of ${[...JOB_STATES, "failed", ...Object.keys(STATE_ALIASES)].join(", ")}`,
      );
    states.add(state);
  }
  return { states: [...states], matchesNothing: sawFailed && states.size === 0 };
}

/** Remediation of a NOT_FOUND job reference: `list` shows job ids (`status` only counts them); hints then carry the selection (src/commands/selection.ts). */
export const JOB_NOT_FOUND_REMEDIATION = "run: spoolctl list  (to see job ids)";

/** The reference that stands for the newest job (the highest id) wherever a job id is taken. */
export const LAST_JOB_REF = "last";

/**
 * A job reference as typed: `last` (the newest job: the highest id, whatever
 * its state or lane; README "Looking at the queue"), a decimal id (`id` null
 * when it is past the safe integers: no job has it), or an idempotency key
 * (the newest job holding it, docs/architecture.md "Idempotency"). `last`
 * wins over a key spelled `last`: such a job is reached by its id.
 */
export type JobRef = { kind: "last" } | { kind: "id"; id: number | null } | { kind: "key"; key: string };

/**
 * Parses a job reference (see {@link JobRef}); the one rule every verb resolves
 * a job id by (the look-up is `resolveJob` of src/store/verbs/job-refs.ts).
 * Raises `INVALID_INPUT` for an empty reference.
 */
export function parseJobRef(ref: string): JobRef {
  if (ref.trim() === "") throw invalidValue("ID", ref, "a job id (positive integer), last, or an idempotency key");
  if (ref === LAST_JOB_REF) return { kind: "last" };
  if (/^\d+$/.test(ref)) {
    const id = Number(ref);
    return { kind: "id", id: Number.isSafeInteger(id) ? id : null };
  }
  return { kind: "key", key: ref };
}

/**
 * An id range as the bulk verbs take it (`cancel 3-10`; docs/architecture.md
 * "Acting on a selection"): `N-M`, both ends included, or null when `ref` is
 * not of that shape. Raises `INVALID_INPUT` for a range that ends before it
 * starts or past the largest safe integer.
 */
export function parseIdRange(ref: string): { from: number; to: number } | null {
  const m = /^(\d+)-(\d+)$/.exec(ref);
  if (!m) return null;
  const from = Number(m[1]);
  const to = Number(m[2]);
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from > to)
    throw invalidValue("ID", ref, "an id range FROM-TO with FROM <= TO, e.g. 3-10");
  return { from, to };
}

/** The `NOT_FOUND` error of a reference `ref` (parsed as `parsed`) that names no job. */
export function jobNotFound(ref: string, parsed: JobRef, remediation = JOB_NOT_FOUND_REMEDIATION): SpoolError {
  if (parsed.kind === "last")
    return new SpoolError("NOT_FOUND", "no job yet: last names the newest job, and the queue has none", {
      remediation: "add one: spoolctl add -- CMD ARGS…",
    });
  if (parsed.kind === "id") return new SpoolError("NOT_FOUND", `no job with id ${ref}`, { remediation });
  return new SpoolError("NOT_FOUND", `no job with id, key or name ${JSON.stringify(ref)}`, { remediation });
}

/**
 * Whether `job` is flaky: it ended done after failed attempts (a failure or a
 * crash charged since its budget was last renewed; docs/architecture.md
 * "Flaky jobs"), as `wait --json` counts it and `report` marks it.
 */
export function isFlaky(job: Pick<Job, "state" | "attempts" | "crashes">): boolean {
  return job.state === "done" && (job.attempts > 0 || job.crashes > 0);
}

/** Summarises a job row; `now` (epoch seconds) decides `scheduled`; `waitingOn`: the ids of its unmet needs. */
export function summarize(job: Job, now: number, waitingOn: number[] = []): JobSummary {
  return {
    id: job.id,
    state: job.state,
    queue: job.queue,
    priority: job.priority,
    argv: job.argv,
    attempts: job.attempts,
    crashes: job.crashes,
    attempts_total: job.last_attempt_no,
    max_retries: job.max_retries,
    max_crashes: job.max_crashes,
    timeout_seconds: job.timeout_seconds,
    created_at: job.created_at,
    next_run_at: job.next_run_at,
    started_at: job.started_at,
    finished_at: job.finished_at,
    last_exit_code: job.last_exit_code,
    last_error: job.last_error,
    idempotency_key: job.idempotency_key,
    name: job.name ?? null,
    tags: job.tags,
    note: job.note,
    cwd: job.cwd,
    env_keys: Object.keys(job.env).sort(),
    locked_by: job.locked_by,
    scheduled: job.state === "queued" && job.next_run_at > now,
    held: job.state === "queued" && job.held,
    batch: job.batch ?? null,
    waiting_on: waitingOn,
  };
}

/** `list` filters, validated. */
export interface ListQuery {
  states: JobState[];
  matchesNothing: boolean;
  queue?: string;
  tags: Record<string, string>;
  priorityMin?: number;
  /** Only scheduled jobs: queued with next_run_at after `now`. */
  scheduledOnly?: boolean;
  /** Only held jobs (true) or only jobs not held (false); docs/architecture.md "Holding a job". */
  held?: boolean;
  /** Show jobs older than this id (the previous page's cursor). */
  cursor?: number;
  /** Triage's filters (see JobFilter): ended since, failure reasons, command glob. */
  finishedSince?: number;
  failureReasons?: JobFilter["failureReasons"];
  commandGlob?: string;
  /** Text in the command line, key or last error (`--search`, see JobFilter's `text`). */
  text?: string;
  /** Only jobs of this batch. */
  batch?: string;
  /** Only the dead jobs of this kept failure group (`--failure-group`, see JobFilter's `failureGroup`). */
  failureGroup?: string;
  limit: number;
}

/** `list` data ({@link ListedJobs}) and its pagination (the envelope's `meta.pagination`). */
export type ListPage = ListedJobs & {
  /** `searched_to`: with a text search, the lowest id the page read (the window, docs/architecture.md "Job filters"). */
  pagination: { cursor: number; first_id: number | null; limit: number; truncated: boolean; searched_to?: number };
};

/** The default and bounds of `--limit`. */
export const LIST_LIMIT = LIMITS.list_limit;

/**
 * What to do about a queued job someone asked to run again (`retry`, `rerun`):
 * a due one waits for a worker; one scheduled later (`--after`, `--at`, a
 * backoff) is not run by `work --drain` before its time, so the hint names the
 * time (UTC, ISO-8601) and how to run it now. `now`: epoch seconds.
 */
export function queuedJobHint(job: Job, now = Date.now() / 1000): string {
  if (job.next_run_at > now + 1) {
    const at = new Date(job.next_run_at * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
    return `it is scheduled for ${at}; to run it now: spoolctl cancel ${job.id}, then spoolctl rerun ${job.id}`;
  }
  return `run a worker (spoolctl work --drain), or wait for it: spoolctl wait ${job.id}`;
}
