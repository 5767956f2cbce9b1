/**
 * What a bulk verb acts on (docs/architecture.md "Acting on a selection"):
 * jobs named by reference, or every job a filter matches, read inside the
 * caller's transaction so the action and its selection are one snapshot;
 * and a dry run, which does the whole write and rolls it back.
 */
import { SpoolError } from "../../contract/errors.ts";
import type { Job, JobFilter } from "../../model/job.ts";
import type { StoreReader } from "../reader.ts";
import type { Store } from "../store.ts";
import type { StoreWriter } from "../writer.ts";
import { resolveUnique } from "./job-refs.ts";

/** Jobs by reference (ids, keys, `last`), or every job `filter` matches (`--all` with filters). */
export type JobTarget = string[] | { filter: Omit<JobFilter, "limit"> };

/** At most this many jobs one `--all` acts on: past it the selection must be narrowed (one transaction holds them all). */
const BULK_LIMIT = 100_000;

/**
 * The jobs `target` names, in the caller's transaction: references resolved
 * (`NOT_FOUND` for an unknown one, duplicates dropped), or the filter's
 * matches newest first. Raises `INVALID_INPUT` when a filter matches more than
 * {@link BULK_LIMIT} jobs; `verb` names the command in the message.
 */
export async function targetJobs(tx: StoreReader, target: JobTarget, verb: string): Promise<Job[]> {
  if (Array.isArray(target)) return resolveUnique(tx, target);
  const jobs = await tx.listJobs({ ...target.filter, limit: BULK_LIMIT + 1 });
  if (jobs.length > BULK_LIMIT)
    throw new SpoolError(
      "INVALID_INPUT",
      `${verb} --all matches more than ${BULK_LIMIT.toLocaleString("en-US")} jobs; one ${verb} acts on at most that many`,
      {
        remediation: `narrow the selection (--queue, --tag, --batch, --since, --search) and run ${verb} --all once per part`,
      },
    );
  return jobs;
}

/** Carries a dry run's result out of the write transaction it rolls back. */
class DryRunDone<T> extends Error {
  constructor(readonly result: T) {
    super("dry run");
  }
}

/**
 * Runs `fn` in one write transaction of `store` and commits it; with
 * `dryRun`, runs it the same way and rolls it back, returning what it would
 * have done: every guard and count of the real write, nothing changed.
 */
export async function writeOrDryRun<T>(store: Store, dryRun: boolean, fn: (tx: StoreWriter) => Promise<T>): Promise<T> {
  try {
    return await store.write(async (tx) => {
      const result = await fn(tx);
      if (dryRun) throw new DryRunDone(result);
      return result;
    });
  } catch (error) {
    if (error instanceof DryRunDone) return error.result as T;
    throw error;
  }
}
