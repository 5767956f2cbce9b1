/**
 * The write of `add` (single, `--from`, `--matrix`): `addJobs` with the lane
 * warnings read after it committed, and the trace context of this process
 * stamped on each spec (README "Metrics and traces").
 */
import type { Warning } from "../contract/errors.ts";
import type { JobTrace } from "../model/job.ts";
import type { AddedJob } from "../ops/add.ts";
import { captureTrace } from "../ops/trace-context.ts";
import { staleAfter } from "../ops/workers.ts";
import type { Store } from "../store/store.ts";
import { addJobs } from "../store/verbs/add.ts";
import { addNotices, type WorkerJudge } from "./lane-notices.ts";

/**
 * The lane warnings of an add (docs/architecture.md "Lanes and slots"):
 * `LANE_PAUSED`, `LANE_UNSERVED` for the lanes the add queued jobs in, read on
 * `store` after the add committed. Best effort: a read that fails says nothing
 * (the add itself succeeded and is never tried again for it).
 */
async function laneWarnings(store: Store, jobs: AddedJob[]): Promise<Warning[]> {
  const added = new Map<string, number>();
  for (const j of jobs) if (!j.deduplicated && j.state === "queued") added.set(j.queue, (added.get(j.queue) ?? 0) + 1);
  if (added.size === 0) return [];
  try {
    return await addNotices(
      store,
      added,
      [...added.keys()].some((lane) => lane !== "default") ? await judge(store) : null,
    );
  } catch {
    return [];
  }
}

/**
 * How the views judge a worker, for `LANE_UNSERVED`: loaded only for an add
 * off the default lane (process look-ups and the views' health rules are not
 * on the path of `add -- CMD`, docs/benchmarks.md "CLI start-up").
 */
async function judge(store: Store): Promise<WorkerJudge> {
  const { healthContext, judgeRecord } = await import("./workers.ts");
  return { judge: judgeRecord, stale: staleAfter(healthContext(store)) };
}

/**
 * `specs` with the trace context of this process's environment (a CI step's
 * `TRACEPARENT`, README "Metrics and traces"), and the warnings for what was
 * malformed and dropped.
 */
export function withTrace<T extends object>(
  specs: T[],
): { specs: (T & { trace: JobTrace | null })[]; warnings: Warning[] } {
  const { trace, warnings } = captureTrace(process.env);
  return { specs: specs.map((s) => ({ ...s, trace })), warnings };
}

/** {@link addJobs} followed by its {@link laneWarnings}, on one store. */
export async function addWithLaneWarnings(
  store: Store,
  ...args: Parameters<typeof addJobs> extends [Store, ...infer R] ? R : never
): Promise<Awaited<ReturnType<typeof addJobs>>> {
  const added = await addJobs(store, ...args);
  return { ...added, warnings: [...added.warnings, ...(await laneWarnings(store, added.jobs))] };
}
