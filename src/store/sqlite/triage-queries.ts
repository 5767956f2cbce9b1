/**
 * Triage's grouping of dead and canceled jobs for the SQLite driver
 * (docs/architecture.md "Triage"): one GROUP BY over the jobs joined with
 * their last attempt.
 */
import type { Database } from "bun:sqlite";
import type { FailureGroupRow, JobFilter } from "../../model/job.ts";
import type { DeadGroupCount, DeadGroupSpan } from "../../model/metrics.ts";
import { jobWhere } from "./job-filter.ts";

type Row = Record<string, unknown>;

/** Dead and/or canceled jobs matching `filter`, grouped by failure (see StoreReader.failureGroups). */
export function failureGroups(
  db: Database,
  filter: Omit<JobFilter, "limit" | "beforeId">,
  maskVersion: number,
): FailureGroupRow[] {
  if (!Number.isSafeInteger(maskVersion)) throw new TypeError(`mask version ${maskVersion} is not an integer`);
  const prefix = `'${maskVersion}|'`; // a number of ours, not user input: inlined
  const asked = filter.states?.filter((s) => s === "dead" || s === "canceled") ?? [];
  const where = jobWhere({ ...filter, states: asked.length ? asked : ["dead", "canceled"] });
  const rows = db
    .query(
      `WITH failed AS (
         SELECT jobs.id AS id, jobs.state AS state, jobs.queue AS queue, coalesce(jobs.finished_at, jobs.created_at) AS at,
           coalesce(a.failure_reason, CASE WHEN jobs.state = 'canceled' THEN 'canceled' END) AS failure_reason,
           a.exit_code AS exit_code, a.signal AS signal, a.stderr_last_line AS line,
           CASE WHEN a.job_id IS NULL THEN ''
                WHEN substr(a.stderr_signature, 1, length(${prefix})) = ${prefix} THEN substr(a.stderr_signature, length(${prefix}) + 1) END AS signature
         FROM jobs LEFT JOIN attempts a ON a.job_id = jobs.id AND a.attempt_no = jobs.last_attempt_no
         WHERE ${where.sql})
       SELECT state, failure_reason, exit_code, signal, signature,
         CASE WHEN signature IS NULL THEN line END AS stderr_last_line,
         CASE WHEN signature IS NULL AND line IS NULL THEN id END AS unread,
         count(*) AS count, min(at) AS first_seen, max(at) AS last_seen,
         json_group_array(DISTINCT queue) AS lanes, json_group_array(id) AS job_ids
       FROM failed
       GROUP BY 1, 2, 3, 4, 5, 6, 7`,
    )
    .all(...where.params) as Row[];
  return rows.map((r) => ({
    state: r.state as FailureGroupRow["state"],
    failure_reason: r.failure_reason as FailureGroupRow["failure_reason"],
    exit_code: r.exit_code as number | null,
    signal: r.signal as number | null,
    stderr_signature: r.signature as string | null,
    stderr_last_line: r.stderr_last_line as string | null,
    count: r.count as number,
    first_seen: r.first_seen as number,
    last_seen: r.last_seen as number,
    lanes: (JSON.parse(r.lanes as string) as string[]).sort(),
    job_ids: (JSON.parse(r.job_ids as string) as number[]).sort((x, y) => y - x),
  }));
}

/** The kept counts by failure group and lane (see StoreReader.deadGroupCounts). */
export function deadGroupCounts(db: Database): DeadGroupCount[] {
  return db
    .query(
      "SELECT gkey AS key, queue, failure_reason, exit_code, signal, signature, n FROM dead_counts WHERE n > 0 ORDER BY n DESC, gkey, queue",
    )
    .all() as DeadGroupCount[];
}

/** First and last end and newest job of each of `keys` (see StoreReader.deadGroupSpans): three index probes a key. */
export function deadGroupSpans(db: Database, keys: string[]): DeadGroupSpan[] {
  const probe = db.query(
    `SELECT ?1 AS key, (SELECT min(at) FROM dead_jobs WHERE gkey = ?1) AS first_seen,
       (SELECT at FROM dead_jobs WHERE gkey = ?1 ORDER BY at DESC, job_id DESC LIMIT 1) AS last_seen,
       (SELECT job_id FROM dead_jobs WHERE gkey = ?1 ORDER BY at DESC, job_id DESC LIMIT 1) AS newest_job_id`,
  );
  return keys.map((k) => probe.get(k) as DeadGroupSpan).filter((s) => s.newest_job_id !== null);
}
