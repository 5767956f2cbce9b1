/**
 * Triage's grouping of dead and canceled jobs for the PostgreSQL driver
 * (docs/architecture.md "Triage"): one GROUP BY over the jobs joined with
 * their last attempt, as the SQLite driver's triage-queries.ts.
 */
import type { SQL } from "bun";
import type { FailureGroupRow, JobFilter } from "../../model/job.ts";
import type { DeadGroupCount, DeadGroupSpan } from "../../model/metrics.ts";
import { jobWhere } from "./job-filter.ts";
import { num, numOrNull } from "./rows.ts";

type Row = Record<string, unknown>;

/** Dead and/or canceled jobs matching `filter`, grouped by failure (see StoreReader.failureGroups). */
export async function failureGroups(
  tx: SQL,
  filter: Omit<JobFilter, "limit" | "beforeId">,
  maskVersion: number,
): Promise<FailureGroupRow[]> {
  const asked = filter.states?.filter((s) => s === "dead" || s === "canceled") ?? [];
  const params: unknown[] = [];
  const p = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const prefix = `${p(`${maskVersion}|`)}::text`;
  const where = jobWhere({ ...filter, states: asked.length ? asked : ["dead", "canceled"] }, p);
  const rows = (await tx.unsafe(
    `WITH failed AS (
       SELECT jobs.id AS id, jobs.state AS state, jobs.queue AS queue, coalesce(jobs.finished_at, jobs.created_at) AS at,
         coalesce(a.failure_reason, CASE WHEN jobs.state = 'canceled' THEN 'canceled' END) AS failure_reason,
         a.exit_code AS exit_code, a.signal AS signal, a.stderr_last_line AS line,
         CASE WHEN a.job_id IS NULL THEN ''
              WHEN starts_with(a.stderr_signature, ${prefix}) THEN substr(a.stderr_signature, length(${prefix}) + 1) END AS signature
       FROM jobs LEFT JOIN attempts a ON a.job_id = jobs.id AND a.attempt_no = jobs.last_attempt_no
       WHERE ${where})
     SELECT state, failure_reason, exit_code, signal, signature,
       CASE WHEN signature IS NULL THEN line END AS stderr_last_line,
       CASE WHEN signature IS NULL AND line IS NULL THEN id END AS unread,
       count(*)::int AS count, min(at)::float8 AS first_seen, max(at)::float8 AS last_seen,
       array_to_json(array_agg(DISTINCT queue))::text AS lanes,
       array_to_json(array_agg(id ORDER BY id DESC))::text AS job_ids
     FROM failed
     GROUP BY 1, 2, 3, 4, 5, 6, 7`,
    params,
  )) as Row[];
  return rows.map((r) => ({
    state: r.state as FailureGroupRow["state"],
    failure_reason: r.failure_reason as FailureGroupRow["failure_reason"],
    exit_code: numOrNull(r.exit_code),
    signal: numOrNull(r.signal),
    stderr_signature: r.signature as string | null,
    stderr_last_line: r.stderr_last_line as string | null,
    count: num(r.count),
    first_seen: num(r.first_seen),
    last_seen: num(r.last_seen),
    lanes: (JSON.parse(r.lanes as string) as string[]).sort(),
    job_ids: (JSON.parse(r.job_ids as string) as number[]).map(Number),
  }));
}

/** The kept counts by failure group and lane, their delta rows summed (see StoreReader.deadGroupCounts). */
export async function deadGroupCounts(tx: SQL): Promise<DeadGroupCount[]> {
  const rows = (await tx`SELECT gkey, queue, failure_reason, exit_code, signal, signature, sum(n)::float8 AS n
    FROM dead_counts GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(n) > 0 ORDER BY 7 DESC, 1, 2`) as Row[];
  return rows.map((r) => ({
    key: r.gkey as string,
    queue: r.queue as string,
    failure_reason: r.failure_reason as string | null,
    exit_code: numOrNull(r.exit_code),
    signal: numOrNull(r.signal),
    signature: r.signature as string | null,
    n: num(r.n),
  }));
}

/** First and last end and newest job of each of `keys` (see StoreReader.deadGroupSpans): index probes, one statement. */
export async function deadGroupSpans(tx: SQL, keys: string[]): Promise<DeadGroupSpan[]> {
  if (keys.length === 0) return [];
  const rows = (await tx`SELECT k.key, f.at AS first_seen, l.at AS last_seen, l.job_id AS newest_job_id
    FROM unnest(${keys}::text[]) AS k(key)
    CROSS JOIN LATERAL (SELECT at FROM dead_jobs WHERE gkey = k.key ORDER BY at LIMIT 1) f
    CROSS JOIN LATERAL (SELECT at, job_id FROM dead_jobs WHERE gkey = k.key ORDER BY at DESC, job_id DESC LIMIT 1) l`) as Row[];
  return rows.map((r) => ({
    key: r.key as string,
    first_seen: num(r.first_seen),
    last_seen: num(r.last_seen),
    newest_job_id: num(r.newest_job_id),
  }));
}
