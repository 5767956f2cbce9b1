/**
 * `wait --batch NAME` and `wait --queue LANE --tag K=V` (docs/architecture.md
 * "Batches"): block until a selection of jobs is settled, however many join
 * it while waiting, with `wait`'s verdict (all done, or any dead or canceled:
 * exit 6). A batch is settled once sealed with nothing queued or running, or
 * at once when fail-fast failed it; a lane/tag selection once none of its
 * jobs is queued or running, counting the jobs added while it waits.
 */
import { SpoolError, type Warning } from "../contract/errors.ts";
import { JOB_STATES, type Job, type JobFilter, type JobState } from "../model/job.ts";
import { type BatchSummary, batchNotFound, summarizeBatch } from "../ops/batch.ts";
import { ALL_LANES } from "../ops/lanes.ts";
import { isTerminal } from "../ops/states.ts";
import { counted } from "../ops/values.ts";
import type { Store } from "../store/store.ts";
import { setBatchFailFast } from "../store/verbs/batches.ts";
import { batchByName } from "../store/verbs/follow.ts";
import { jobsMatching, pendingAndWorkers, selectionJobs } from "../store/verbs/wait.ts";
import {
  UNATTENDED_GRACE_SECONDS,
  unattendedWarning,
  type WaitData,
  type WaitedJob,
  type WaitOptions,
  type WaitResult,
} from "./wait-jobs.ts";

/** Which jobs a selection wait follows: a batch, or a lane and/or tags. */
export interface WaitSelection {
  batch?: string;
  queue?: string;
  tags: Record<string, string>;
}

/** Most jobs a selection wait reports in `jobs` (the counts cover all). */
const REPORTED_JOBS = 10_000;

function view(job: Job): WaitedJob {
  return { attempts: job.attempts, last_error: job.last_error, last_exit_code: job.last_exit_code, state: job.state };
}

function countStates(jobs: Job[]): Record<JobState, number> {
  const counts = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as Record<JobState, number>;
  for (const j of jobs) counts[j.state]++;
  return counts;
}

/** How a selection is named in messages: `batch ci-1`, `lane builds, tag ci=1`. */
function selectionLabel(sel: WaitSelection): string {
  if (sel.batch !== undefined) return `batch ${sel.batch}`;
  const parts = [
    ...(sel.queue !== undefined ? [`lane ${sel.queue}`] : []),
    ...Object.entries(sel.tags).map(([k, v]) => `tag ${k}=${v}`),
  ];
  return parts.join(", ");
}

/**
 * Waits for the selection `sel` (see the module doc). With `failFast`, first
 * gives the batch that property in the queue (it holds if this process dies),
 * and ends as soon as the batch failed. Raises `NOT_FOUND` for an unknown
 * batch, `TIMEOUT` after `opts.timeoutSeconds`. An empty sealed batch ends at
 * once with an `EMPTY_BATCH` warning.
 */
export async function waitForSelection(
  store: Store,
  sel: WaitSelection,
  opts: WaitOptions & { failFast?: "queued" | "now" | null },
): Promise<WaitResult> {
  const started = performance.now();
  const warnings: Warning[] = [];
  const base: Omit<JobFilter, "limit"> = {
    ...(sel.queue !== undefined ? { queue: sel.queue } : {}),
    ...(Object.keys(sel.tags).length ? { tags: sel.tags } : {}),
    ...(sel.batch !== undefined ? { batch: sel.batch } : {}),
  };
  if (sel.batch !== undefined) {
    if (opts.failFast) await setBatchFailFast(store, sel.batch, opts.failFast);
    else if (!(await batchByName(store, sel.batch))) throw batchNotFound(sel.batch);
  }
  // A lane/tag selection: the jobs active now, and every matching job added from here on.
  const newest = sel.batch === undefined ? await jobsMatching(store, { limit: 1 }) : [];
  const afterId = newest[0]?.id ?? 0;
  const seen = new Set<number>();
  let unattendedSince: number | null = null;
  let lastLaneCheck = -Infinity;
  for (;;) {
    const look =
      sel.batch !== undefined
        ? { batch: await batchByName(store, sel.batch), active: null }
        : { batch: null, active: await selectionJobs(store, base, afterId, REPORTED_JOBS) };
    let settled: boolean;
    let batch: BatchSummary | null = null;
    let progress: { settled: number; total: number };
    if (sel.batch !== undefined) {
      if (!look.batch) throw batchNotFound(sel.batch); // deleted while waited on: never here, batches are kept
      batch = summarizeBatch(look.batch);
      settled = batch.settled;
      const open = batch.counts.queued + batch.counts.running;
      progress = { settled: batch.total - open, total: batch.total };
    } else {
      for (const j of look.active!) seen.add(j.id);
      const pending = look.active!.filter((j) => !isTerminal(j.state));
      settled = pending.length === 0;
      progress = { settled: seen.size - pending.length, total: seen.size };
    }
    opts.onProgress?.(progress.settled, progress.total);
    if (settled) {
      const jobs =
        sel.batch !== undefined
          ? await jobsMatching(store, { ...base, limit: REPORTED_JOBS })
          : seen.size === 0
            ? []
            : await jobsMatching(store, { ids: [...seen], limit: REPORTED_JOBS });
      const counts = batch?.counts ?? countStates(jobs);
      const total = batch?.total ?? jobs.length;
      const allSucceeded = batch ? batch.all_succeeded === true : counts.done === total;
      if (total === 0)
        warnings.push({
          code: "EMPTY_BATCH",
          message: `${selectionLabel(sel)} ${batch ? "is sealed with no job" : "has no queued or running job"}: nothing to wait for`,
        });
      const data: WaitData = {
        all_succeeded: allSucceeded,
        jobs: Object.fromEntries(jobs.map((j) => [String(j.id), view(j)])),
        counts,
        ...(batch ? { batch } : {}),
      };
      return { data, anyFailed: !allSucceeded, warnings };
    }
    // At most once a second, until said once: jobs in lanes no live worker serves (as wait ID… says it).
    if (opts.servedLanes && warnings.length === 0 && performance.now() - lastLaneCheck >= 1000) {
      lastLaneCheck = performance.now();
      const { pending, workers } = await pendingAndWorkers(store, base, opts.servedLanes.judging());
      const served = opts.servedLanes.decide(workers);
      const stranded = served.live.has(ALL_LANES) ? [] : pending.filter((j) => !served.live.has(j.queue));
      if (stranded.length === 0) unattendedSince = null;
      else {
        unattendedSince ??= performance.now();
        if ((performance.now() - unattendedSince) / 1000 >= UNATTENDED_GRACE_SECONDS) {
          warnings.push(unattendedWarning(stranded, served.stalled));
          opts.onUnattended?.(warnings[0]!);
        }
      }
    }
    const elapsed = (performance.now() - started) / 1000;
    if (opts.timeoutSeconds !== null && elapsed >= opts.timeoutSeconds) {
      const open =
        batch && !batch.sealed
          ? `; it is not sealed yet (spoolctl batch seal ${batch.name}, or --seal on its last add)`
          : "";
      throw new SpoolError(
        "TIMEOUT",
        `${selectionLabel(sel)}: ${progress.total - progress.settled} of ${counted(progress.total, "job")} not finished after ${opts.timeoutSeconds}s${open}`,
        {
          remediation: "wait longer (raise --timeout), or check that a worker serves their lane (spoolctl workers)",
          detail: { ...(batch ? { batch } : {}), settled: progress.settled, total: progress.total },
        },
      );
    }
    const left = opts.timeoutSeconds === null ? Infinity : opts.timeoutSeconds - elapsed;
    await Bun.sleep(Math.max(1, Math.min(opts.pollSeconds, left) * 1000));
  }
}
