/**
 * What `wait` looks at, one look per poll (docs/architecture.md "The
 * operations", "Reads"): the awaited jobs, the jobs of a lane/tag selection,
 * and the workers registry that says who serves their lanes. Each verb is one
 * read snapshot: no guard, no event, no wake.
 */
import { SpoolError } from "../../contract/errors.ts";
import type { Job, JobFilter, JobState } from "../../model/job.ts";
import { JOB_NOT_FOUND_REMEDIATION } from "../../ops/jobs.ts";
import type { JudgeWorker, StaleAfter, WorkerView } from "../../ops/workers.ts";
import type { StoreReader } from "../reader.ts";
import type { Store } from "../store.ts";
import { listWorkers } from "./workers.ts";

/** How to judge the registry's rows (see `workerViews` of src/ops/workers.ts). */
export interface WorkersJudged {
  judge: JudgeWorker;
  stale?: StaleAfter;
}

/** The registry's rows (at most 1000) judged by `workers`, inside `tx`; null when not asked. */
async function workersIn(tx: StoreReader, workers: WorkersJudged | null): Promise<WorkerView[] | null> {
  return workers ? await listWorkers(tx, workers.judge, 1000, workers.stale) : null;
}

/**
 * The jobs matching `filter`, newest first, at most `filter.limit`. One
 * statement. The plain read of the pollers that follow a selection (`wait
 * --batch/--queue/--tag`): the newest job, the jobs joined since, the end.
 */
export function jobsMatching(store: Pick<Store, "read">, filter: JobFilter): Promise<Job[]> {
  return store.read((tx) => tx.listJobs(filter));
}

/**
 * One look of `wait IDS…`: the awaited jobs by id, in the order given, and
 * (when `workers` is given) the registry judged, in one snapshot. Raises
 * `NOT_FOUND` for a job that no longer exists (pruned while waited on).
 */
export function awaitedJobs(
  store: Pick<Store, "read">,
  ids: readonly number[],
  workers: WorkersJudged | null,
): Promise<{ jobs: Job[]; workers: WorkerView[] | null }> {
  return store.read(async (tx) => {
    // One statement for all of them, not one per job.
    const rows = ids.length ? await tx.listJobs({ ids: [...ids], limit: ids.length }) : [];
    const found = new Map(rows.map((j) => [j.id, j]));
    const jobs: Job[] = [];
    for (const id of ids) {
      const job = found.get(id);
      if (!job)
        throw new SpoolError("NOT_FOUND", `job ${id} no longer exists (pruned while waited on)`, {
          remediation: JOB_NOT_FOUND_REMEDIATION,
        });
      jobs.push(job);
    }
    return { jobs, workers: await workersIn(tx, workers) };
  });
}

/**
 * One look of a lane/tag selection wait: the selection's queued and running
 * jobs and those added after job `afterId`, at most `limit` of each.
 */
export function selectionJobs(
  store: Pick<Store, "read">,
  filter: Omit<JobFilter, "limit">,
  afterId: number,
  limit: number,
): Promise<Job[]> {
  return store.read(async (tx) => [
    ...(await tx.listJobs({ ...filter, states: ["queued", "running"], limit })),
    ...(await tx.listJobs({ ...filter, afterId, limit })),
  ]);
}

/**
 * The selection's queued and running jobs (at most 1000) and the registry
 * judged by `workers`, in one snapshot: which awaited jobs sit in lanes no
 * live worker serves.
 */
export function pendingAndWorkers(
  store: Pick<Store, "read">,
  filter: Omit<JobFilter, "limit">,
  workers: WorkersJudged,
): Promise<{ pending: Job[]; workers: WorkerView[] }> {
  return store.read(async (tx) => ({
    pending: await tx.listJobs({ ...filter, states: ["queued", "running"], limit: 1000 }),
    workers: (await workersIn(tx, workers))!,
  }));
}

/**
 * The jobs of a lane/tag selection counted by state, ended ones included, and
 * the newest `limit` of them, in one snapshot: what a selection `wait` judges
 * (docs/architecture.md "Batches": "A selection's verdict"). Two statements;
 * no guard, no event, no wake.
 */
export function selectionVerdict(
  store: Pick<Store, "read">,
  filter: Omit<JobFilter, "limit">,
  limit: number,
): Promise<{ counts: { state: JobState; n: number }[]; newest: Job[] }> {
  return store.read(async (tx) => ({
    counts: await tx.countMatchingByState(filter),
    newest: await tx.listJobs({ ...filter, limit }),
  }));
}

/**
 * What a selection that matched no job might have meant: the lanes in use
 * (jobs, settings) and the `K=V` tags of the newest `recent` jobs, one
 * snapshot. Read only on the `NOT_FOUND` path, so bounded rather than exact.
 */
export function selectionNames(
  store: Pick<Store, "read">,
  recent = 2000,
): Promise<{ lanes: string[]; tags: string[] }> {
  return store.read(async (tx) => {
    const lanes = new Set((await tx.countByStateAndLane()).map((c) => c.queue));
    for (const l of await tx.listLanes()) lanes.add(l.queue);
    const tags = new Set<string>();
    for (const j of await tx.listJobs({ limit: recent }))
      for (const [k, v] of Object.entries(j.tags)) tags.add(`${k}=${v}`);
    return { lanes: [...lanes].sort(), tags: [...tags].sort() };
  });
}
