/**
 * `wait --batch NAME` and `wait --queue LANE --tag K=V` (docs/architecture.md
 * "Batches"): block until a selection of jobs is settled, however many join
 * it while waiting, with `wait`'s verdict (all done, or any dead or canceled:
 * exit 6). A batch is settled once sealed with nothing queued or running, or
 * at once when fail-fast failed it; a lane/tag selection once none of its
 * jobs is queued or running, counting the jobs added while it waits. A
 * lane/tag selection's verdict judges every job it matches, those that ended
 * before the wait began included, and one that matches no job is `NOT_FOUND`
 * (docs/contract.md "Exit codes and codes").
 */

import { SpoolError, type Warning } from "../contract/errors.ts";
import { closest } from "../contract/flags.ts";
import { JOB_STATES, type JobFilter, type JobState } from "../model/job.ts";
import { type BatchSummary, batchNotFound, summarizeBatch } from "../ops/batch.ts";
import { isTerminal } from "../ops/states.ts";
import { counted } from "../ops/values.ts";
import type { Store } from "../store/store.ts";
import { setBatchFailFast } from "../store/verbs/batches.ts";
import { batchByName } from "../store/verbs/follow.ts";
import {
  jobsMatching,
  pendingAndWorkers,
  selectionJobs,
  selectionNames,
  selectionVerdict,
} from "../store/verbs/wait.ts";
import {
  flakyCount,
  strandedOf,
  UNATTENDED_GRACE_SECONDS,
  unattendedWarning,
  view,
  type WaitData,
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
 * `NOT_FOUND` for a lane/tag selection that matches no job at all (a typo of
 * a lane or tag, or the wrong queue): with `did_you_mean` the lane in use, or
 * the tag of a recent job, closest to what was given (`names`).
 */
function nothingSelected(sel: WaitSelection, names: { lanes: string[]; tags: string[] }): SpoolError {
  let guess: string | null = null;
  if (sel.queue !== undefined && !names.lanes.includes(sel.queue)) {
    const lane = closest(sel.queue, names.lanes);
    if (lane !== null) guess = `--queue ${lane}`;
  }
  let values = "";
  for (const [k, v] of Object.entries(sel.tags)) {
    if (guess !== null || names.tags.includes(`${k}=${v}`)) continue;
    // A known key with another value (run=nope of run=1234): the closest, else the one value it has, else say them.
    const sameKey = names.tags.filter((t) => t.startsWith(`${k}=`));
    const tag = closest(`${k}=${v}`, names.tags) ?? (sameKey.length === 1 ? sameKey[0]! : null);
    if (tag !== null) guess = `--tag ${tag}`;
    else if (sameKey.length > 1)
      values = `; recent jobs have tag ${sameKey.slice(0, 3).join(", ")}${sameKey.length > 3 ? " …" : ""}`;
  }
  const what =
    sel.queue !== undefined && Object.keys(sel.tags).length === 0
      ? `no job in lane ${JSON.stringify(sel.queue)}`
      : `no job matches ${selectionLabel(sel)}`;
  return new SpoolError("NOT_FOUND", `${what}: nothing to wait for${guess ? ` (did you mean ${guess}?)` : values}`, {
    remediation: `spoolctl status  (names the lanes in use), or spoolctl list${sel.queue !== undefined ? ` --queue ${sel.queue}` : ""}  (the jobs a selection matches)`,
    did_you_mean: guess,
    detail: { ...(sel.queue !== undefined ? { queue: sel.queue } : {}), tags: sel.tags },
  });
}

/**
 * Waits for the selection `sel` (see the module doc). With `failFast`, first
 * gives the batch that property in the queue (it holds if this process dies),
 * and ends as soon as the batch failed. Raises `NOT_FOUND` for an unknown
 * batch or a lane/tag selection that matches no job (with `did_you_mean`),
 * `TIMEOUT` after `opts.timeoutSeconds` (seconds). An empty sealed batch ends at
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
  // A lane/tag selection: every job it matches now, ended ones included, and every matching job added from here on.
  let already = 0;
  if (sel.batch === undefined) {
    const { counts } = await selectionVerdict(store, base, 0);
    already = counts.reduce((sum, c) => sum + c.n, 0);
    if (already === 0) throw nothingSelected(sel, await selectionNames(store));
  }
  const newest = sel.batch === undefined ? await jobsMatching(store, { limit: 1 }) : [];
  const afterId = newest[0]?.id ?? 0;
  const joined = new Set<number>();
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
      for (const j of look.active!) if (j.id > afterId) joined.add(j.id);
      const pending = new Set(look.active!.filter((j) => !isTerminal(j.state)).map((j) => j.id));
      settled = pending.size === 0;
      const total = already + joined.size;
      progress = { settled: total - pending.size, total };
    }
    opts.onProgress?.(progress.settled, progress.total);
    if (settled) {
      if (batch) {
        const jobs = await jobsMatching(store, { ...base, limit: REPORTED_JOBS });
        if (batch.total === 0)
          warnings.push({
            code: "EMPTY_BATCH",
            message: `${selectionLabel(sel)} is sealed with no job: nothing to wait for`,
          });
        const data: WaitData = {
          all_succeeded: batch.all_succeeded === true,
          jobs: Object.fromEntries(jobs.map((j) => [String(j.id), view(j)])),
          ...flakyCount(jobs),
          counts: batch.counts,
          batch,
        };
        return { data, anyFailed: !data.all_succeeded, warnings };
      }
      // The verdict of a lane/tag selection: every job it matches, ended before the wait or during it.
      const verdict = await selectionVerdict(store, base, REPORTED_JOBS);
      const counts = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as Record<JobState, number>;
      for (const c of verdict.counts) counts[c.state] += c.n;
      const total = Object.values(counts).reduce((a, b) => a + b, 0);
      const data: WaitData = {
        all_succeeded: counts.done === total,
        jobs: Object.fromEntries(verdict.newest.map((j) => [String(j.id), view(j)])),
        ...flakyCount(verdict.newest),
        counts,
      };
      return { data, anyFailed: !data.all_succeeded, warnings };
    }
    // At most once a second, until said once: jobs in lanes no live worker serves (as wait ID… says it).
    if (opts.servedLanes && warnings.length === 0 && performance.now() - lastLaneCheck >= 1000) {
      lastLaneCheck = performance.now();
      const { pending, workers } = await pendingAndWorkers(store, base, opts.servedLanes.judging());
      const served = opts.servedLanes.decide(workers);
      const stranded = await strandedOf(store, pending, served);
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
