/**
 * Jobs that wait for jobs on PostgreSQL (docs/architecture.md "Dependencies"):
 * the same rules as the SQLite driver's (src/store/sqlite/needs.ts), under
 * READ COMMITTED, where each statement sees what committed before it started.
 * What makes them hold under concurrency:
 *
 * - `needs_left` only ever changes by `needs_left - k` in the transaction that
 *   flips k of the job's edges to met (or by a recount while its edges are
 *   locked): an UPDATE that waited for another's row lock re-applies the
 *   decrement to the newest row, so two needs ending at once both count.
 * - An add locks the needs it names `FOR SHARE` before reading their states:
 *   a need's end (an UPDATE of its row) waits for the add to commit, and its
 *   settling statements, run after, see the new edges; or the add waits for
 *   the end and reads the state it committed.
 * - Lock order: the need's row, then edges, then dependents (by id), in every
 *   path; a deadlock left anyway is retried by the transaction runner.
 */
import type { SQL } from "bun";
import type { JobNeeds } from "../../model/job.ts";
import { closingWords } from "../../ops/needs.ts";
import { failedNeed, unknownNeed } from "../needs-errors.ts";
import type { TxEffects } from "./events.ts";

type Row = Record<string, unknown>;

/**
 * Writes the edges of freshly inserted jobs and sets their `needs_left`
 * (see the SQLite driver's insertNeeds); the named needs are locked `FOR SHARE`
 * first. Raises `INVALID_INPUT` for a missing need or one that must succeed
 * and already failed.
 */
export async function insertNeeds(tx: SQL, ids: number[], needs: (JobNeeds | undefined)[]): Promise<void> {
  const wanted = [...new Set(needs.flatMap((n) => n?.ids ?? []))].sort((a, b) => a - b);
  const states = new Map<number, string>();
  if (wanted.length > 0) {
    const rows =
      (await tx`SELECT id, state FROM jobs WHERE id = ANY(${wanted}::bigint[]) ORDER BY id FOR SHARE`) as Row[];
    for (const r of rows) states.set(Number(r.id), r.state as string);
  }
  const edges: { job: number[]; need: number[]; policy: string[]; met: boolean[] } = {
    job: [],
    need: [],
    policy: [],
    met: [],
  };
  const left: { id: number[]; n: number[] } = { id: [], n: [] };
  needs.forEach((n, i) => {
    if (!n) return;
    const jobId = ids[i]!;
    let count = 0;
    for (const needId of new Set([...n.ids, ...n.earlier.map((e) => ids[e]!)])) {
      const state = states.get(needId) ?? (n.ids.includes(needId) ? undefined : "queued");
      if (state === undefined) throw unknownNeed(needId);
      if (n.policy === "success" && (state === "dead" || state === "canceled")) throw failedNeed(needId, state);
      const met = state === "done" || (n.policy === "done" && state !== "queued" && state !== "running");
      edges.job.push(jobId);
      edges.need.push(needId);
      edges.policy.push(n.policy);
      edges.met.push(met);
      if (!met) count++;
    }
    if (count > 0) {
      left.id.push(jobId);
      left.n.push(count);
    }
  });
  if (edges.job.length === 0) return;
  await tx`INSERT INTO job_needs (job_id, need_id, policy, met)
    SELECT * FROM unnest(${edges.job}::bigint[], ${edges.need}::bigint[], ${edges.policy}::text[], ${edges.met}::boolean[])`;
  if (left.id.length > 0)
    await tx`UPDATE jobs SET needs_left = l.n FROM unnest(${left.id}::bigint[], ${left.n}::int[]) AS l(id, n) WHERE jobs.id = l.id`;
}

/**
 * The effects of jobs ending on their dependents, in the transaction that
 * ended them (see the SQLite driver's settleDependents): met edges counted
 * down, a dependent at 0 waking its lane; queued dependents of a failed need
 * that must succeed closed as `need_failed`, down the chain.
 */
async function settleDependents(
  tx: SQL,
  effects: TxEffects,
  ended: number[],
  now: number,
  first?: Promise<SettleRound>,
  deleted: ReadonlySet<number> = new Set(),
): Promise<number[]> {
  const closedAll: number[] = [];
  let frontier = ended;
  let round = first;
  while (frontier.length > 0) {
    const { met, failed } = await (round ?? settleRound(tx, frontier));
    round = undefined;
    if (met.length > 0) {
      const counts = new Map<number, number>();
      for (const id of met) counts.set(id, (counts.get(id) ?? 0) + 1);
      const ids = [...counts.keys()].sort((a, b) => a - b);
      await tx`SELECT id FROM jobs WHERE id = ANY(${ids}::bigint[]) ORDER BY id FOR UPDATE`;
      const ready = (await tx`UPDATE jobs SET needs_left = jobs.needs_left - c.k
        FROM unnest(${ids}::bigint[], ${ids.map((id) => counts.get(id)!)}::int[]) AS c(id, k)
        WHERE jobs.id = c.id RETURNING jobs.queue, jobs.state, jobs.needs_left`) as Row[];
      for (const r of ready)
        if (r.state === "queued" && Number(r.needs_left) === 0) {
          effects.work.ready.add(r.queue as string);
          effects.notify = true;
        }
    }
    const closing = new Map<number, { need: number; state: string }>();
    for (const [job, need, state] of failed.sort((a, b) => a[0] - b[0] || a[1] - b[1]))
      if (!closing.has(job)) closing.set(job, { need, state });
    if (closing.size === 0) break;
    const ids = [...closing.keys()];
    const words = new Map(
      ids.map((id) => [
        id,
        closingWords(closing.get(id)!.need, closing.get(id)!.state, deleted.has(closing.get(id)!.need)),
      ]),
    );
    const errors = ids.map((id) => words.get(id)!.error);
    const closed = (await tx`UPDATE jobs SET state = 'canceled', finished_at = ${now}::float8, last_error = c.error
      FROM unnest(${ids}::bigint[], ${errors}::text[]) AS c(id, error)
      WHERE jobs.id = c.id AND jobs.state = 'queued' RETURNING jobs.id`) as Row[];
    frontier = closed.map((r) => Number(r.id)).sort((a, b) => a - b);
    closedAll.push(...frontier);
    for (const id of frontier) {
      effects.append({
        jobId: id,
        event: "canceled",
        workerId: null,
        detail: JSON.stringify(words.get(id)!.detail),
        at: now,
      });
    }
  }
  return closedAll;
}

/** What one round of {@link settleDependents} found: dependents of met edges (once per edge), and failed edges [job, need, need's state]. */
export interface SettleRound {
  met: number[];
  failed: [number, number, string][];
}

/**
 * The statement of {@link settleRound} ($1: the ended jobs' ids); on the result's path, so in
 * explainHotPath. It starts from the needs' edges (idx_job_needs_need) and reads each job by its
 * key, never walking jobs by state.
 */
export const SETTLE_ROUND_SQL = `WITH met AS (
      UPDATE job_needs e SET met = true
      WHERE e.need_id = ANY($1::bigint[]) AND NOT e.met
        AND (SELECT n.state FROM jobs n WHERE n.id = e.need_id) IN ('done','dead','canceled')
        AND (e.policy = 'done' OR (SELECT n.state FROM jobs n WHERE n.id = e.need_id) = 'done')
      RETURNING e.job_id),
    failed AS (
      UPDATE job_needs e SET closed = true
      WHERE e.need_id = ANY($1::bigint[]) AND e.policy = 'success' AND NOT e.met
        AND (SELECT n.state FROM jobs n WHERE n.id = e.need_id) IN ('dead','canceled')
        AND (SELECT d.state FROM jobs d WHERE d.id = e.job_id) = 'queued'
      RETURNING e.job_id, e.need_id, (SELECT n.state FROM jobs n WHERE n.id = e.need_id) AS need_state)
    SELECT (SELECT coalesce(json_agg(job_id), '[]') FROM met)::text AS met,
      (SELECT coalesce(json_agg(json_build_array(job_id, need_id, need_state)), '[]') FROM failed)::text AS failed`;

/**
 * One statement: the edges of `ended` that are now met are flagged, and those
 * whose need failed (policy success, dependent queued) marked closed. A job
 * without dependents costs this one statement, which {@link jobsEnded} sends
 * pipelined behind the write that ended the job (same connection, in order,
 * each statement with a snapshot taken after the previous one ran).
 */
function settleRound(tx: SQL, ended: number[]): Promise<SettleRound> {
  return tx.unsafe(SETTLE_ROUND_SQL, [ended]).then((rows) => {
    const row = (rows as Row[])[0]!;
    return {
      met: (JSON.parse(row.met as string) as (number | string)[]).map(Number),
      failed: (JSON.parse(row.failed as string) as [number | string, number | string, string][]).map(
        ([j, n, st]) => [Number(j), Number(n), st] as [number, number, string],
      ),
    };
  });
}

/**
 * The driver's "job ended" hook: every statement that moves jobs to done, dead
 * or canceled calls it with their ids, in its transaction (`first`: the first
 * {@link settleRound}, already sent behind that statement). Other effects of a
 * job's end belong beside {@link settleDependents} here.
 */
export async function jobsEnded(
  tx: SQL,
  effects: TxEffects,
  ended: number[],
  now: number,
  first?: Promise<SettleRound>,
  deleted?: ReadonlySet<number>,
): Promise<number[]> {
  if (ended.length === 0) return [];
  return settleDependents(tx, effects, ended, now, first, deleted);
}

/** Revives the dependents the failure of `needIds` closed (see the SQLite driver's reviveDependents); returns their ids. */
export async function reviveDependents(tx: SQL, effects: TxEffects, needIds: number[], now: number): Promise<number[]> {
  const revived: number[] = [];
  let frontier = needIds;
  while (frontier.length > 0) {
    const cands = (await tx`SELECT e.job_id, min(e.need_id) AS need_id FROM job_needs e JOIN jobs d ON d.id = e.job_id
      WHERE e.need_id = ANY(${frontier}::bigint[]) AND d.state = 'canceled'
        AND EXISTS (SELECT 1 FROM job_needs c WHERE c.job_id = e.job_id AND c.closed)
      GROUP BY e.job_id ORDER BY e.job_id`) as Row[];
    if (cands.length === 0) break;
    const ids = cands.map((c) => Number(c.job_id));
    // The edges first (a need ending meanwhile waits, or has committed before the recount below reads them).
    await tx`SELECT 1 FROM job_needs WHERE job_id = ANY(${ids}::bigint[]) ORDER BY job_id, need_id FOR UPDATE`;
    // The last condition is lostNeed("d") of ../bulk-rows.ts negated, written out: a tagged template binds, it does not splice.
    const rows = (await tx`UPDATE jobs d SET state = 'queued', attempts = 0, crashes = 0, next_run_at = ${now}::float8,
        finished_at = NULL, last_error = NULL, locked_by = NULL, locked_pid = NULL, locked_at = NULL, heartbeat_at = NULL,
        cancel_requested = false, needs_left = (SELECT count(*) FROM job_needs WHERE job_id = d.id AND NOT met)
      WHERE d.id = ANY(${ids}::bigint[]) AND d.state = 'canceled'
        AND NOT EXISTS (SELECT 1 FROM job_needs o JOIN jobs n ON n.id = o.need_id
          WHERE o.job_id = d.id AND o.policy = 'success' AND NOT o.met AND n.state IN ('dead','canceled'))
        AND (d.idempotency_key IS NULL OR NOT EXISTS (SELECT 1 FROM jobs k
          WHERE k.idempotency_key = d.idempotency_key AND k.state IN ('queued','running')))
        AND d.needs_left <= (SELECT count(*) FROM job_needs u WHERE u.job_id = d.id AND NOT u.met)
      RETURNING d.id, d.queue, d.needs_left`) as Row[];
    const next = rows.map((r) => Number(r.id)).sort((a, b) => a - b);
    if (next.length === 0) break;
    await tx`UPDATE job_needs SET closed = false WHERE job_id = ANY(${next}::bigint[])`;
    const needOf = new Map(cands.map((c) => [Number(c.job_id), Number(c.need_id)]));
    for (const r of rows) if (Number(r.needs_left) === 0) effects.work.ready.add(r.queue as string);
    for (const id of next)
      effects.append({
        jobId: id,
        event: "retried",
        workerId: null,
        detail: JSON.stringify({ from: "canceled", reason: "need_retried", need: needOf.get(id) }),
        at: now,
      });
    effects.notify = effects.work.all = true;
    revived.push(...next);
    frontier = next;
  }
  return revived;
}

/** The unmet needs of each of `jobIds` that has any, need ids ascending. */
/**
 * A need that ended and runs again (retry, rerun) is no longer met: the edges it met of
 * dependents still queued are unmet again, and each such dependent's `needs_left` grows by one
 * (one statement; the dependents' rows are updated in id order), so it waits for the need's new
 * outcome (docs/architecture.md "Dependencies"). Dependents that ran already keep their edges.
 */
export async function unmeetNeeds(tx: SQL, needIds: number[]): Promise<void> {
  if (needIds.length === 0) return;
  await tx`WITH unmet AS (
      UPDATE job_needs e SET met = false WHERE e.need_id = ANY(${needIds}::bigint[]) AND e.met
        AND (SELECT d.state FROM jobs d WHERE d.id = e.job_id) = 'queued'
      RETURNING e.job_id),
    counted AS (SELECT job_id, count(*)::int AS k FROM unmet GROUP BY job_id)
    UPDATE jobs SET needs_left = jobs.needs_left + c.k FROM counted c WHERE jobs.id = c.job_id`;
}

export async function unmetNeeds(tx: SQL, jobIds: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>();
  if (jobIds.length === 0) return out;
  const rows = (await tx`SELECT job_id, need_id FROM job_needs WHERE job_id = ANY(${jobIds}::bigint[]) AND NOT met
    ORDER BY job_id, need_id`) as Row[];
  for (const r of rows) out.set(Number(r.job_id), [...(out.get(Number(r.job_id)) ?? []), Number(r.need_id)]);
  return out;
}

/** Queued jobs waiting for needs: their count, and the oldest `limit` with their unmet needs. */
export async function waitingOnNeeds(
  tx: SQL,
  limit: number,
): Promise<{ count: number; jobs: { job_id: number; waiting_on: number[] }[] }> {
  const [row] = await tx`SELECT count(*)::int AS n FROM jobs WHERE state = 'queued' AND needs_left > 0`;
  if (row.n === 0) return { count: 0, jobs: [] };
  const ids = (
    (await tx`SELECT id FROM jobs WHERE state = 'queued' AND needs_left > 0 ORDER BY id LIMIT ${limit}`) as Row[]
  ).map((r) => Number(r.id));
  const unmet = await unmetNeeds(tx, ids);
  return { count: row.n, jobs: ids.map((id) => ({ job_id: id, waiting_on: unmet.get(id) ?? [] })) };
}
