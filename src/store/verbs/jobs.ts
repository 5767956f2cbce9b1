/**
 * Reading jobs for `list`, `show` and the pickers (docs/architecture.md "The
 * operations", "Reads"): a page of jobs with their unmet needs and workers'
 * health, one job in full, jobs by id, and job references resolved to ids.
 * Each verb is one read snapshot on the queue's clock: no guard, no event, no
 * wake.
 */

import type { Attempt, Job } from "../../model/job.ts";
import { type AttemptWithHost, type JobDetail, type ListPage, type ListQuery, summarize } from "../../ops/jobs.ts";
import type { HealthContext } from "../../ops/worker-health.ts";
import type { StoreReader } from "../reader.ts";
import type { SnapshotReader } from "../store.ts";
import { resolveJob } from "./job-refs.ts";
import { retryBlockIn } from "./need-checks.ts";
import { healthCache, jobWorkerHealth, prefetchHealth } from "./worker-health.ts";

/** The unmet needs of those of `jobs` that are queued and wait for any, in one statement (`waiting_on`). */
async function waitingOf(tx: StoreReader, jobs: Job[]): Promise<Map<number, number[]>> {
  const waiting = jobs.filter((j) => j.state === "queued" && j.needs_left > 0).map((j) => j.id);
  return waiting.length === 0 ? new Map() : tx.unmetNeeds(waiting);
}

/**
 * How many job ids one page of a text search reads below its cursor (docs/architecture.md
 * "Job filters"): the search is a scan, and a page must answer fast on a million jobs.
 */
export const SEARCH_WINDOW = 25_000;

/**
 * One page of `list`: the jobs matching `q`, newest first, at most `q.limit`
 * (one more is read to say `truncated`), each with its unmet needs and, with
 * `health`, its worker's health while running (else `worker_health` is null).
 */
export function listJobs(store: SnapshotReader, q: ListQuery, health?: HealthContext): Promise<ListPage> {
  return store.read(async (tx) => {
    const now = store.now();
    // A text search reads a window of ids below the cursor: a page never scans the whole table.
    const top =
      q.text === undefined || q.matchesNothing
        ? null
        : (q.cursor ?? ((await tx.listJobs({ limit: 1 }))[0]?.id ?? 0) + 1);
    const floor = top === null ? null : Math.max(1, top - SEARCH_WINDOW);
    const rows = q.matchesNothing
      ? []
      : await tx.listJobs({
          states: q.scheduledOnly ? ["queued"] : q.states,
          queue: q.queue,
          tags: q.tags,
          priorityMin: q.priorityMin,
          beforeId: q.cursor,
          runAfter: q.scheduledOnly ? now : undefined,
          ...(q.held !== undefined ? { held: q.held } : {}),
          finishedSince: q.finishedSince,
          failureReasons: q.failureReasons,
          commandGlob: q.commandGlob,
          ...(q.text !== undefined ? { text: q.text } : {}),
          ...(floor !== null && floor > 1 ? { afterId: floor - 1 } : {}),
          ...(q.batch !== undefined ? { batch: q.batch } : {}),
          ...(q.failureGroup !== undefined ? { failureGroup: q.failureGroup } : {}),
          limit: q.limit + 1,
        });
    const full = rows.length > q.limit;
    // Below the window are jobs not searched yet: the next page starts there.
    const truncated = full || (floor !== null && floor > 1);
    const page = rows.slice(0, q.limit);
    const cache = healthCache();
    if (health) await prefetchHealth(tx, page, cache);
    const waiting = await waitingOf(tx, page);
    const jobs: ListPage["jobs"] = [];
    for (const j of page)
      jobs.push({
        ...summarize(j, now, waiting.get(j.id)),
        worker_health: health ? await jobWorkerHealth(tx, j, health, cache) : null,
      });
    return {
      count: jobs.length,
      jobs,
      pagination: {
        cursor: full || floor === null ? (jobs.at(-1)?.id ?? 0) : floor,
        first_id: jobs[0]?.id ?? null,
        limit: q.limit,
        truncated,
        ...(floor !== null ? { searched_to: full ? jobs.at(-1)!.id : floor } : {}),
      },
    };
  });
}

/** The jobs with these ids (at most as many as given), newest first, in one statement. */
export function jobsByIds(store: SnapshotReader, ids: number[]): Promise<Job[]> {
  return store.read((tx) => tx.listJobs({ ids, limit: ids.length }));
}

/**
 * `show`: the job `ref` names (id, `last` or idempotency key) in full, its
 * worker's health while running (with `health`), its attempts with the host
 * each ran on, and its events. Raises `INVALID_INPUT`/`NOT_FOUND` as
 * `resolveJob` of job-refs.ts does.
 */
export function jobDetail(store: SnapshotReader, ref: string, health?: HealthContext): Promise<JobDetail> {
  return store.read(async (tx) => {
    const now = store.now();
    const job = await resolveJob(tx, ref);
    const waiting = await waitingOf(tx, [job]);
    const block = await retryBlockIn(tx, job);
    return {
      job: {
        ...summarize(job, now, waiting.get(job.id)),
        env: job.env,
        cancel_requested: job.cancel_requested,
        locked_pid: job.locked_pid,
        heartbeat_at: job.heartbeat_at,
        trace: job.trace ?? null,
      },
      worker_health: health ? await jobWorkerHealth(tx, job, health) : null,
      attempts: await withHosts(tx, await tx.attemptsOf(job.id)),
      events: await tx.eventsOf(job.id),
      ...(block ? { retry_blocked: block } : {}),
    };
  });
}

/**
 * Each attempt with the host its worker ran on (from the workers registry;
 * null when the row is gone): the attempt's output files are on that host.
 */
async function withHosts(tx: StoreReader, attempts: Attempt[]): Promise<AttemptWithHost[]> {
  const hosts = new Map<string, string | null>();
  for (const a of attempts)
    if (!hosts.has(a.worker_id)) hosts.set(a.worker_id, (await tx.getWorker(a.worker_id))?.host ?? null);
  return attempts.map((a) => ({ ...a, host: hosts.get(a.worker_id) ?? null }));
}

/**
 * The jobs `refs` name (ids, `last` or idempotency keys), in their order, in
 * one snapshot. Raises `INVALID_INPUT`/`NOT_FOUND` for the first that names
 * none, as `resolveJob` of job-refs.ts does.
 */
export async function resolveJobs(store: SnapshotReader, refs: readonly string[]): Promise<Job[]> {
  return await store.read(async (tx) => {
    const jobs: Job[] = [];
    for (const ref of refs) jobs.push(await resolveJob(tx, ref));
    return jobs;
  });
}
