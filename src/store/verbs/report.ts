/**
 * `report` (docs/architecture.md "The operations", "Reads"): the jobs of a CI
 * run as test cases, read in one snapshot and decided by src/ops/report.ts.
 */

import {
  caseOf,
  REPORT_TAIL_BYTES,
  type ReportCase,
  type ReportData,
  type ReportQuery,
  reportOf,
  tailedAttempt,
  tailLines,
} from "../../ops/report.ts";
import type { SnapshotReader } from "../store.ts";
import { resolveJob } from "./job-refs.ts";
import { streamTailIn } from "./output.ts";

/**
 * The report of the jobs matching every filter of `q` (ids ∩ lane ∩ tags ∩
 * since ∩ batch), oldest first, at most `q.limit` (the newest are kept), with
 * the output tails of each case that did not pass; dated `now` (epoch
 * seconds). One read snapshot: no guard, no event, no wake. Raises
 * `NOT_FOUND` for an id or key that matches no job.
 */
export function reportSnapshot(store: SnapshotReader, q: ReportQuery, now: number): Promise<ReportData> {
  return store.read(async (tx) => {
    const ids: number[] = [];
    for (const ref of q.refs) ids.push((await resolveJob(tx, ref)).id);
    const unique = [...new Set(ids)];
    const rows = await tx.listJobs({
      ids: q.refs.length ? unique : undefined,
      queue: q.queue,
      tags: q.tags,
      createdSince: q.since,
      ...(q.batch !== undefined ? { batch: q.batch } : {}),
      limit: q.limit + 1,
    });
    const cases: ReportCase[] = [];
    for (const job of rows.slice(0, q.limit).reverse()) {
      const attempts = await tx.attemptsOf(job.id);
      const tailed = tailedAttempt(job, attempts);
      const tails = tailed && {
        stderr: tailLines(await streamTailIn(tx, tailed, "stderr", REPORT_TAIL_BYTES)),
        stdout: tailLines(await streamTailIn(tx, tailed, "stdout", REPORT_TAIL_BYTES)),
      };
      cases.push(caseOf(job, attempts, now, tails));
    }
    return reportOf(q, now, unique, cases, rows.length > q.limit);
  });
}
