/**
 * What `output --follow --all` and `wait` on a selection look at, one look
 * per poll (docs/architecture.md "The operations", "Reads"; "Batches"). Each
 * verb is one read snapshot: no guard, no event, no wake.
 */
import type { Attempt, BatchView, Job, JobFilter } from "../../model/job.ts";
import type { Store } from "../store.ts";

/** The batch named `name`, with its counts, or null when there is none (yet). */
export function batchByName(store: Pick<Store, "read">, name: string): Promise<BatchView | null> {
  return store.read((tx) => tx.getBatch(name));
}

/** Which jobs a {@link followLook} reads. */
type FollowScope =
  /** Every job of the selection (a batch's first look). */
  | { kind: "all" }
  /** Its queued and running jobs, and those ended at or after `endedSince` (epoch seconds). */
  | { kind: "active"; endedSince: number };

/** What a {@link followLook} reads. */
export interface FollowLookQuery {
  filter: Omit<JobFilter, "limit">;
  /** The batch followed, whose row (counts, seal) is read too. */
  batch?: string;
  scope: FollowScope;
  /** Per job, the highest attempt number already taken up. */
  taken: ReadonlyMap<number, number>;
  /** Attempts followed now, whose rows are read again. */
  followed: readonly Pick<Attempt, "job_id" | "attempt_no">[];
  /** Most jobs read per list. */
  limit: number;
}

/** One look of `output --follow --all`. */
export interface FollowLook {
  /** The followed batch's row (null: no batch followed, or none of that name yet). */
  batch: BatchView | null;
  /** Attempts not taken up before, by job then attempt number. */
  fresh: Attempt[];
  /** The new highest attempt taken up, per job that has fresh ones. */
  taken: Map<number, number>;
  /** The followed attempts' rows now (those deleted since are absent). */
  now: Attempt[];
}

/**
 * One look of `output --follow --all` in one read snapshot: the batch's row,
 * the attempts of the selection's jobs not taken up yet, and the followed
 * attempts' rows now (their state is read before their bytes, so the read
 * after an attempt ended sees all it wrote).
 */
export function followLook(store: Pick<Store, "read">, q: FollowLookQuery): Promise<FollowLook> {
  return store.read(async (tx) => {
    const batch = q.batch !== undefined ? await tx.getBatch(q.batch) : null;
    const jobs: Job[] =
      q.scope.kind === "all"
        ? await tx.listJobs({ ...q.filter, limit: q.limit })
        : [
            ...(await tx.listJobs({ ...q.filter, states: ["queued", "running"], limit: q.limit })),
            ...(await tx.listJobs({ ...q.filter, finishedSince: q.scope.endedSince, limit: q.limit })),
          ];
    const fresh: Attempt[] = [];
    const taken = new Map<number, number>();
    for (const job of jobs) {
      const from = Math.max(q.taken.get(job.id) ?? 0, taken.get(job.id) ?? 0) + 1;
      for (let n = from; n <= job.last_attempt_no; n++) {
        const attempt = await tx.getAttempt(job.id, n);
        if (attempt) fresh.push(attempt);
      }
      if (job.last_attempt_no >= from) taken.set(job.id, job.last_attempt_no);
    }
    const now: Attempt[] = [];
    for (const f of q.followed) {
      const row = await tx.getAttempt(f.job_id, f.attempt_no);
      if (row) now.push(row);
    }
    return { batch, fresh, taken, now };
  });
}
