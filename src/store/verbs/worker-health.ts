/**
 * The reads behind a running job's worker health (docs/architecture.md
 * "Reaping", "Dead workers in the views"), made inside the caller's
 * transaction (a helper only verbs import): the registry row and current
 * attempt of each job, judged by `judgeJobWorker` of src/ops/worker-health.ts.
 */

import type { Attempt, Job, WorkerRecord } from "../../model/job.ts";
import { type HealthContext, judgeJobWorker, type VerdictCache, type WorkerHealth } from "../../ops/worker-health.ts";
import type { StoreReader } from "../reader.ts";

/** Registry rows, running attempts (by job id) and process verdicts already looked up, for judging many jobs. */
export interface HealthCache {
  rows: Map<string, WorkerRecord | null>;
  attempts: Map<number, Attempt | null>;
  verdicts: VerdictCache;
}

/** A fresh {@link HealthCache}. */
export function healthCache(): HealthCache {
  return { rows: new Map(), attempts: new Map(), verdicts: new Map() };
}

/**
 * Fills `cache` with the registry rows and current attempts {@link jobWorkerHealth}
 * needs for `jobs`, read together (independent reads: PostgreSQL pipelines
 * them, docs/architecture.md "The driver contract"), so judging a thousand
 * running jobs costs a round trip or two, not two per job.
 */
export async function prefetchHealth(tx: StoreReader, jobs: Job[], cache: HealthCache): Promise<void> {
  const running = jobs.filter((j) => j.state === "running" && !cache.attempts.has(j.id));
  const ids = [
    ...new Set(running.flatMap((j) => (j.locked_by === null || cache.rows.has(j.locked_by) ? [] : [j.locked_by]))),
  ];
  const [attempts, rows] = await Promise.all([
    Promise.all(running.map((j) => tx.getAttempt(j.id, j.last_attempt_no))),
    Promise.all(ids.map((id) => tx.getWorker(id))),
  ]);
  running.forEach((j, i) => cache.attempts.set(j.id, attempts[i]!));
  ids.forEach((id, i) => cache.rows.set(id, rows[i]!));
}

/**
 * Judges a running job's worker (null for a job that is not running), reading
 * what `cache` lacks (its registry row, its current attempt) inside `tx`.
 */
export async function jobWorkerHealth(
  tx: StoreReader,
  job: Job,
  ctx: HealthContext,
  cache: HealthCache = healthCache(),
): Promise<WorkerHealth | null> {
  if (job.state !== "running") return null;
  const id = job.locked_by;
  if (id !== null && !cache.rows.has(id)) cache.rows.set(id, await tx.getWorker(id));
  const attempt = cache.attempts.has(job.id)
    ? cache.attempts.get(job.id)!
    : await tx.getAttempt(job.id, job.last_attempt_no);
  const row = id === null ? null : (cache.rows.get(id) ?? null);
  return judgeJobWorker(job, row, attempt, ctx, cache.verdicts);
}

/** The running jobs (at most `limit`, newest first) whose worker is not `live`, read inside `tx`. */
export async function strandedJobs(tx: StoreReader, ctx: HealthContext, limit = 1000): Promise<WorkerHealth[]> {
  const cache = healthCache();
  const out: WorkerHealth[] = [];
  const jobs = await tx.listJobs({ states: ["running"], limit });
  await prefetchHealth(tx, jobs, cache);
  for (const job of jobs) {
    const health = await jobWorkerHealth(tx, job, ctx, cache);
    if (health && health.worker_state !== "live") out.push(health);
  }
  return out;
}
