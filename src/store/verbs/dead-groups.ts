/**
 * The kept failure groups of dead jobs (docs/architecture.md "Kept dead
 * counts"): what the web view's triage page reads instead of grouping every
 * dead job. One read snapshot: the kept counts, then for the largest `limit`
 * groups when their jobs ended and their newest job's command and stderr line
 * (index probes, a few per group). No guard, no event, no wake.
 */
import { MASK_VERSION } from "../../ops/failure-signature.ts";
import { type KeptGroup, keptGroups } from "../../ops/triage-groups.ts";
import type { SnapshotReader } from "../store.ts";

/** A kept group with when its jobs ended (epoch seconds) and its newest job. */
interface KeptGroupView extends KeptGroup {
  first_seen: number;
  last_seen: number;
  example: { job_id: number; argv: string[]; stderr_line: string };
}

/** The kept groups: the largest `limit` of them in full, and how many groups and dead jobs there are in all. */
export interface KeptGroups {
  groups: KeptGroupView[];
  group_count: number;
  job_count: number;
}

/** The dead jobs by kept failure group, largest first (see the file's comment); `limit` ≥ 1 groups shown. */
export function keptFailureGroups(store: SnapshotReader, limit: number): Promise<KeptGroups> {
  return store.read(async (tx) => {
    const all = keptGroups(await tx.deadGroupCounts(), MASK_VERSION);
    const shown = all.slice(0, limit);
    const spans = new Map((await tx.deadGroupSpans(shown.map((g) => g.key))).map((s) => [s.key, s]));
    const ids = [...spans.values()].map((s) => s.newest_job_id);
    const jobs = new Map((ids.length ? await tx.listJobs({ ids, limit: ids.length }) : []).map((j) => [j.id, j]));
    const groups: KeptGroupView[] = [];
    for (const g of shown) {
      const span = spans.get(g.key);
      const job = span ? jobs.get(span.newest_job_id) : undefined;
      if (!span || !job) continue; // not in this snapshot's rows: cannot happen inside one read
      const attempt = job.last_attempt_no > 0 ? await tx.getAttempt(job.id, job.last_attempt_no) : null;
      groups.push({
        ...g,
        first_seen: span.first_seen,
        last_seen: span.last_seen,
        example: { job_id: job.id, argv: job.argv, stderr_line: attempt?.stderr_last_line ?? "" },
      });
    }
    return { groups, group_count: all.length, job_count: all.reduce((n, g) => n + g.count, 0) };
  });
}
