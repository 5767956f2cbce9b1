/**
 * Look-ups that several operator verbs make inside their own transaction
 * (a helper only verbs import): the job a reference names, the jobs named by
 * references, and the active job holding a job's idempotency key.
 */

import { SpoolError } from "../../contract/errors.ts";
import type { Job } from "../../model/job.ts";
import { JOB_NOT_FOUND_REMEDIATION, jobNotFound, parseIdRange, parseJobRef } from "../../ops/jobs.ts";
import type { StoreReader } from "../reader.ts";

/**
 * The newest job holding idempotency key `text`, else the newest job named
 * `text` (docs/architecture.md "Job names": a key wins over a name), in the
 * caller's transaction; null when neither matches. One or two statements.
 */
export async function findByKeyOrName(tx: StoreReader, text: string): Promise<Job | null> {
  return (await tx.findLatestJobByKey(text)) ?? (await tx.findLatestJobByName(text));
}

/**
 * The job `ref` names (an id, `last`, an idempotency key or a job name, as
 * `parseJobRef` of src/ops/jobs.ts reads it), inside the caller's
 * transaction. The one place every verb resolves a job id. Raises
 * `INVALID_INPUT` for an empty reference, `NOT_FOUND` (with `remediation`)
 * when no job matches.
 */
export async function resolveJob(tx: StoreReader, ref: string, remediation = JOB_NOT_FOUND_REMEDIATION): Promise<Job> {
  const parsed = parseJobRef(ref);
  const job =
    parsed.kind === "last"
      ? ((await tx.listJobs({ limit: 1 }))[0] ?? null)
      : parsed.kind === "id"
        ? parsed.id === null
          ? null
          : await tx.getJob(parsed.id)
        : await findByKeyOrName(tx, parsed.key);
  if (!job) throw jobNotFound(ref, parsed, remediation);
  return job;
}

/** At most this many jobs one id range names (the `--all` bound of job-targets.ts). */
const RANGE_LIMIT = 100_000;

/**
 * The jobs `refs` name (ids, idempotency keys, `last`, or id ranges `N-M`
 * of the bulk verbs: every existing job with an id from N to M, ascending),
 * in the caller's transaction, duplicates dropped (two refs naming one job),
 * in the order first named. One read per reference; raises `NOT_FOUND` for an
 * unknown one or a range that holds no job, `INVALID_INPUT` for a range of
 * more than 100,000 jobs.
 */
export async function resolveUnique(tx: StoreReader, refs: string[]): Promise<Job[]> {
  const seen = new Map<number, Job>();
  for (const ref of refs) {
    const range = parseIdRange(ref);
    const jobs = range ? await rangeJobs(tx, ref, range) : [await resolveJob(tx, ref)];
    for (const job of jobs) if (!seen.has(job.id)) seen.set(job.id, job);
  }
  return [...seen.values()];
}

async function rangeJobs(tx: StoreReader, ref: string, range: { from: number; to: number }): Promise<Job[]> {
  const jobs = await tx.listJobs({ afterId: range.from - 1, beforeId: range.to + 1, limit: RANGE_LIMIT + 1 });
  if (jobs.length > RANGE_LIMIT)
    throw new SpoolError(
      "INVALID_INPUT",
      `id range ${ref} holds more than ${RANGE_LIMIT.toLocaleString("en-US")} jobs`,
      {
        remediation: "act on a narrower range, one part at a time",
      },
    );
  if (jobs.length === 0)
    throw new SpoolError("NOT_FOUND", `no job with an id in ${ref}`, { remediation: JOB_NOT_FOUND_REMEDIATION });
  return jobs.reverse();
}

/**
 * The active job that holds `job`'s idempotency key, other than `job` itself,
 * read inside the caller's write transaction: a job requeued earlier in the
 * same transaction counts (docs/architecture.md "Idempotency": one active job
 * per key, for retry and rerun as for add). Null when the key is free or the
 * job has none.
 */
export async function keyHolder(tx: StoreReader, job: Job): Promise<Job | null> {
  if (job.idempotency_key === null) return null;
  const holder = await tx.findActiveJobByKey(job.idempotency_key);
  return holder && holder.id !== job.id ? holder : null;
}
