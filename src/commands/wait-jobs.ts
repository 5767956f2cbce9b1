/**
 * `wait` (docs/contract.md "Exit codes and codes"): block until every awaited job is terminal, polling the
 * database at a short interval (never a busy loop). The verdict: all done, or
 * some ended dead or canceled (exit 6 with `ok: true`); `TIMEOUT` (exit 4) when
 * the deadline passes first.
 */

import { SpoolError, type Warning } from "../contract/errors.ts";
import type { WaitData, WaitedJob } from "../describe/schemas-lanes.ts";
import type { Job } from "../model/job.ts";
import { isFlaky } from "../ops/jobs.ts";
import { ALL_LANES } from "../ops/lanes.ts";
import { holdOf } from "../ops/need-holds.ts";
import { isTerminal } from "../ops/states.ts";
import { counted } from "../ops/values.ts";
import type { WorkerView } from "../ops/workers.ts";
import type { Store } from "../store/store.ts";
import { resolveJobs } from "../store/verbs/jobs.ts";
import { needsOfWaiting } from "../store/verbs/need-holds.ts";
import { awaitedJobs, type WorkersJudged } from "../store/verbs/wait.ts";

// Defined once, as the JSON Schemas `spoolctl schema` prints.
export type { WaitData, WaitedJob };

/** How to wait. Times in seconds. */
export interface WaitOptions {
  /** Give up after this long (`TIMEOUT`); null waits for ever. */
  timeoutSeconds: number | null;
  /** Pause between two looks at the database. */
  pollSeconds: number;
  /** Called after each look: settled jobs of the total (for a TTY progress line). */
  onProgress?: (settled: number, total: number) => void;
  /**
   * The lanes live workers serve (docs/architecture.md "Dead workers in the
   * views"); without it, nobody is watched for. When awaited jobs sit in lanes
   * no live worker serves for {@link UNATTENDED_GRACE_SECONDS}, `onUnattended`
   * is called once and the result carries a `NO_WORKER` warning.
   */
  servedLanes?: LaneServiceCheck;
  onUnattended?: (warning: Warning) => void;
}

/**
 * Who serves which lane, as `wait` sees it: lanes of live workers, and lanes
 * whose only workers are alive on this host but silent, each with why in
 * words ({@link stallReason}: stopped, blocked by a full disk, stuck).
 */
export interface LaneService {
  /** Lanes live workers serve, by name; {@link ALL_LANES} when one serves every lane (`work --all-lanes`). */
  live: Set<string>;
  stalled: Map<string, string>;
}

/**
 * How `wait` learns who serves which lane: the registry is read (in the same
 * snapshot as the awaited jobs) judged by `judging()`, called at each check
 * (the queue's clock moves), then `decide` says who serves what.
 */
export interface LaneServiceCheck {
  judging: () => WorkersJudged;
  decide: (workers: WorkerView[]) => LaneService;
}

/** How long awaited jobs may lack a live worker before `wait` says so (a worker may be starting), seconds. */
export const UNATTENDED_GRACE_SECONDS = 2;

/** A job no live worker can run: an awaited one, or a need up an awaited dependent's chain (`neededBy`). */
export interface Stranded {
  id: number;
  queue: string;
  neededBy: number[];
}

/**
 * The awaited jobs among `pending` that sit in lanes no live worker serves
 * (`served`), and for awaited dependents in served lanes, the needs up their
 * chain that sit in such a lane (docs/architecture.md "Dependencies": `wait`
 * names the need's lane). One more read, only when a pending job waits for needs.
 */
export async function strandedOf(store: Store, pending: Job[], served: LaneService): Promise<Stranded[]> {
  const unserved = (lane: string) => !served.live.has(lane) && !served.live.has(ALL_LANES);
  const out: Stranded[] = pending
    .filter((j) => unserved(j.queue))
    .map((j) => ({ id: j.id, queue: j.queue, neededBy: [] }));
  const blocked = pending.filter((j) => j.state === "queued" && j.needs_left > 0 && !unserved(j.queue));
  if (blocked.length === 0) return out;
  const now = store.now();
  const { graph, paused } = await needsOfWaiting(store, blocked, now);
  const reach = { paused, ours: new Set<string>(), live: served.live, now };
  const memo = new Map();
  for (const job of blocked) {
    const hold = holdOf(job, graph, reach, memo);
    if (hold.runs || hold.stuckJob === null || hold.stuckLane === null) continue;
    const known = out.find((s) => s.id === hold.stuckJob);
    if (known) known.neededBy.push(job.id);
    else out.push({ id: hold.stuckJob, queue: hold.stuckLane, neededBy: [job.id] });
  }
  return out;
}

/** `3` or `3 (needed by 4, 5)`. */
function strandedName(s: Stranded): string {
  return s.neededBy.length ? `${s.id} (lane ${s.queue}, needed by ${s.neededBy.join(", ")})` : String(s.id);
}

/**
 * Why awaited jobs in lanes no live worker serves cannot finish, and the
 * command that starts a worker for them; when a silent worker of this host
 * serves every such lane (`stalled`), why it is silent instead.
 */
function unattended(
  jobs: Stranded[],
  stalled: Map<string, string> = new Map(),
): { why: string; start: string; stalled: boolean } {
  const lanes = [...new Set(jobs.map((j) => j.queue))].sort();
  const ids = jobs.map(strandedName).join(", ");
  if (lanes.every((l) => stalled.has(l))) {
    const reasons = [...new Set(lanes.map((l) => stalled.get(l)!))];
    return {
      why: `${reasons.join("; ")}: job${jobs.length > 1 ? "s" : ""} ${ids} cannot be recorded finished until it goes on`,
      start: `spoolctl work${lanes.length === 1 && lanes[0] !== "default" ? ` --queue ${lanes[0]}` : ""}`,
      stalled: true,
    };
  }
  return {
    why: `no live worker serves lane${lanes.length > 1 ? "s" : ""} ${lanes.join(", ")}: job${jobs.length > 1 ? "s" : ""} ${ids} cannot finish until one runs`,
    start: `spoolctl work${lanes.length === 1 && lanes[0] !== "default" ? ` --queue ${lanes[0]}` : ""}`,
    stalled: false,
  };
}

/** The `NO_WORKER` warning for awaited jobs in lanes no live worker serves (its command gets the selection from the verb). */
export function unattendedWarning(jobs: Stranded[], stalled: Map<string, string>): Warning {
  const { why, start, stalled: allStalled } = unattended(jobs, stalled);
  return { code: "NO_WORKER", message: allStalled ? why : `${why} (start one: ${start})` };
}

/** `{flaky: N}` when N of `jobs` are flaky, else nothing (docs/architecture.md "Flaky jobs"). */
export function flakyCount(jobs: Job[]): { flaky?: number } {
  const n = jobs.filter(isFlaky).length;
  return n > 0 ? { flaky: n } : {};
}

/** A waited job as `wait` reports it (docs/contract.md "Verdicts and the drain's lines"). */
export function view(job: Job): WaitedJob {
  return {
    attempts: job.attempts,
    last_error: job.last_error,
    last_exit_code: job.last_exit_code,
    state: job.state,
    // Only when true: a wait with no flaky job keeps the envelope of the reference (docs/contract.md).
    ...(isFlaky(job) ? { flaky: true } : {}),
  };
}

/** The result of a finished wait: the data, whether any job ended dead or canceled, and warnings (`NO_WORKER`). */
export interface WaitResult {
  data: WaitData;
  anyFailed: boolean;
  warnings: Warning[];
}

/**
 * Waits for the jobs named by `refs` (ids or idempotency keys). Raises
 * `NOT_FOUND` for an unknown reference (or a job pruned while waited on) and
 * `TIMEOUT` with the unsettled jobs in `detail`.
 */
export async function waitForJobs(store: Store, refs: string[], opts: WaitOptions): Promise<WaitResult> {
  const started = performance.now();
  const ids = [...new Set((await resolveJobs(store, refs)).map((j) => j.id))];
  const warnings: Warning[] = [];
  let nobody: ReturnType<typeof unattended> | null = null;
  let unattendedSince: number | null = null;
  let lastLaneCheck = -Infinity;
  for (;;) {
    // At most once a second: a registry read and process look-ups.
    const check = opts.servedLanes && warnings.length === 0 && performance.now() - lastLaneCheck >= 1000;
    if (check) lastLaneCheck = performance.now();
    const look = await awaitedJobs(store, ids, check ? opts.servedLanes!.judging() : null);
    const { jobs } = look;
    const served = look.workers ? opts.servedLanes!.decide(look.workers) : null;
    const settled = jobs.filter((j) => isTerminal(j.state));
    opts.onProgress?.(settled.length, jobs.length);
    const data: WaitData = {
      all_succeeded: jobs.every((j) => j.state === "done"),
      jobs: Object.fromEntries(jobs.map((j) => [String(j.id), view(j)])),
      ...flakyCount(jobs),
    };
    if (settled.length === jobs.length) return { data, anyFailed: !data.all_succeeded, warnings };
    const pending = jobs.filter((j) => !isTerminal(j.state));
    if (served) {
      const stranded = await strandedOf(store, pending, served);
      if (stranded.length === 0) unattendedSince = null;
      else {
        unattendedSince ??= performance.now();
        if ((performance.now() - unattendedSince) / 1000 >= UNATTENDED_GRACE_SECONDS) {
          nobody = unattended(stranded, served.stalled);
          warnings.push(unattendedWarning(stranded, served.stalled));
          opts.onUnattended?.(warnings[0]!);
        }
      }
    }
    const elapsed = (performance.now() - started) / 1000;
    if (opts.timeoutSeconds !== null && elapsed >= opts.timeoutSeconds) {
      // The command goes into the remediation, which carries the selection (--db) like every hint.
      throw new SpoolError(
        "TIMEOUT",
        `${pending.length} of ${counted(jobs.length, "job")} not finished after ${opts.timeoutSeconds}s: ${pending.map((j) => `${j.id} (${j.state})`).join(", ")}${nobody ? `; ${nobody.why}` : ""}`,
        {
          remediation: nobody?.stalled
            ? "let its worker go on (the message says how), then wait again; spoolctl workers lists the workers"
            : nobody
              ? `start a worker (${nobody.start}), then wait again; spoolctl workers lists the workers`
              : "wait longer (raise --timeout), or check that a worker serves their lane (spoolctl workers)",
          detail: { pending: pending.map((j) => j.id), jobs: data.jobs },
        },
      );
    }
    const left = opts.timeoutSeconds === null ? Infinity : opts.timeoutSeconds - elapsed;
    await Bun.sleep(Math.max(1, Math.min(opts.pollSeconds, left) * 1000));
  }
}
