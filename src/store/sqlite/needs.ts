/**
 * Jobs that wait for jobs on SQLite (docs/architecture.md "Dependencies"): the
 * edges a new job's needs write, what a job's end does to its dependents, and
 * what a retry of a failed need revives. Every function runs inside the
 * caller's write transaction (SQLite admits one writer, so a state read here
 * cannot change before the write that follows it).
 *
 * `jobs.needs_left` counts a job's unmet needs; it changes only together with
 * the `met` flag of one of its edges, so it always equals the number of its
 * edges with `met = 0`, and the claim (hot-path.ts) takes only jobs at 0.
 */
import type { Database } from "bun:sqlite";
import type { JobNeeds } from "../../model/job.ts";
import { closingWords } from "../../ops/needs.ts";
import { lostNeed } from "../bulk-rows.ts";
import { failedNeed, unknownNeed } from "../needs-errors.ts";
import type { WorkSignals } from "../wake-signal.ts";
import { HOT_SQL } from "./hot-path.ts";

type Insert = (jobId: number, event: "canceled" | "retried", detail: string) => void;

/** JSON of an id list, for `IN (SELECT value FROM json_each(?))`. */
const idsJson = (ids: number[]) => JSON.stringify(ids);

/**
 * Writes the edges of freshly inserted jobs (`ids[i]` is the job of `needs[i]`;
 * `needs[i].earlier` indexes `ids`) and sets their `needs_left`. Guard: every
 * need exists, and a need that must succeed has not already failed (dead or
 * canceled): `INVALID_INPUT` otherwise, and the caller's transaction (the whole
 * add) rolls back. A need already `done` (or ended, under policy `done`) is met.
 */
export function insertNeeds(db: Database, ids: number[], needs: (JobNeeds | undefined)[]): void {
  const wanted = new Set<number>();
  for (const n of needs) for (const id of n?.ids ?? []) wanted.add(id);
  const states = new Map<number, string>();
  if (wanted.size > 0) {
    const rows = db
      .query("SELECT id, state FROM jobs WHERE id IN (SELECT value FROM json_each(?))")
      .all(idsJson([...wanted])) as { id: number; state: string }[];
    for (const r of rows) states.set(r.id, r.state);
  }
  const insert = db.query("INSERT INTO job_needs (job_id, need_id, policy, met) VALUES (?, ?, ?, ?)");
  const count = db.query("UPDATE jobs SET needs_left = ? WHERE id = ?");
  needs.forEach((n, i) => {
    if (!n) return;
    const jobId = ids[i]!;
    let left = 0;
    const needIds = new Set([...n.ids, ...n.earlier.map((e) => ids[e]!)]);
    for (const needId of needIds) {
      // Jobs of the same add are queued (just inserted): unmet.
      const state = states.get(needId) ?? (n.ids.includes(needId) ? undefined : "queued");
      if (state === undefined) throw unknownNeed(needId);
      if (n.policy === "success" && (state === "dead" || state === "canceled")) throw failedNeed(needId, state);
      const met = state === "done" || (n.policy === "done" && state !== "queued" && state !== "running");
      insert.run(jobId, needId, n.policy, met ? 1 : 0);
      if (!met) left++;
    }
    if (left > 0) count.run(left, jobId);
  });
}

/**
 * The effects of jobs ending on the jobs that need them, in the transaction
 * that ended them (docs/architecture.md "Dependencies"); `ended` are jobs just
 * moved to done, dead or canceled. An edge whose need is done (or ended, under
 * policy `done`) is met: its dependent's `needs_left` drops, and a dependent
 * reaching 0 wakes its lane (`ready:<lane>`, as a new job). A queued dependent
 * whose need must succeed and failed is closed: `canceled`, `last_error`
 * `need_failed: …`, a `canceled` ledger row naming the need; and so on down the
 * chain, each closed job being a need that ended too. Returns the jobs closed.
 */
function settleDependents(
  db: Database,
  work: WorkSignals,
  ended: number[],
  now: number,
  insert: Insert,
  deleted: ReadonlySet<number>,
): number[] {
  const closedAll: number[] = [];
  let frontier = ended;
  while (frontier.length > 0) {
    // Both statements below start from the frontier's edges: none, nothing to settle.
    if (db.query(HOT_SQL.settleAny).get(idsJson(frontier)) === null) break;
    const met = db.query(HOT_SQL.settleMet).all(idsJson(frontier)) as { job_id: number }[];
    if (met.length > 0) {
      const ready = db
        .query(
          `UPDATE jobs SET needs_left = needs_left - (SELECT count(*) FROM json_each(?1) WHERE value = jobs.id)
           WHERE id IN (SELECT value FROM json_each(?1))
           RETURNING queue, state, needs_left`,
        )
        .all(idsJson(met.map((m) => m.job_id))) as { queue: string; state: string; needs_left: number }[];
      for (const r of ready) if (r.state === "queued" && r.needs_left === 0) work.ready.add(r.queue);
    }
    const failed = (
      db.query(HOT_SQL.settleFailed).all(idsJson(frontier)) as { job_id: number; need_id: number; need_state: string }[]
    ).sort((a, b) => a.job_id - b.job_id || a.need_id - b.need_id);
    const closedNow: number[] = [];
    const markClosed = db.query("UPDATE job_needs SET closed = 1 WHERE job_id = ? AND need_id = ?");
    const close = db.query(
      "UPDATE jobs SET state = 'canceled', finished_at = ?, last_error = ? WHERE id = ? AND state = 'queued' RETURNING id",
    );
    for (const f of failed) {
      markClosed.run(f.job_id, f.need_id);
      if (closedNow.includes(f.job_id)) continue;
      const words = closingWords(f.need_id, f.need_state, deleted.has(f.need_id));
      if (!close.get(now, words.error, f.job_id)) continue;
      closedNow.push(f.job_id);
      insert(f.job_id, "canceled", JSON.stringify(words.detail));
    }
    frontier = closedNow;
    closedAll.push(...closedNow);
  }
  return closedAll;
}

/**
 * The driver's "job ended" hook: every statement that moves jobs to done, dead
 * or canceled calls it with their ids, in its transaction. Other effects of a
 * job's end belong beside {@link settleDependents} here. Returns the
 * dependents it closed (jobs that ended too: the caller adds their hooks).
 */
export function jobsEnded(
  db: Database,
  work: WorkSignals,
  ended: number[],
  now: number,
  insert: Insert,
  deleted: ReadonlySet<number> = new Set(),
): number[] {
  if (ended.length === 0) return [];
  return settleDependents(db, work, ended, now, insert, deleted);
}

/**
 * Revives the dependents that the failure of `needIds` closed, now that they
 * were requeued (`retry`; docs/architecture.md "Dependencies"): each canceled
 * job with an edge to one of them marked `closed`, none of whose other needs
 * that must succeed is dead or canceled, that lost no need (one deleted before
 * it was met, `lostNeed`), and whose idempotency key no active job holds, goes back to `queued` due at `now` with fresh budgets, its
 * `needs_left` recounted, a `retried` ledger row naming the need; and so on
 * down the chain. Returns the ids revived.
 */
export function reviveDependents(
  db: Database,
  work: WorkSignals,
  needIds: number[],
  now: number,
  insert: Insert,
): number[] {
  const revived: number[] = [];
  let frontier = needIds;
  while (frontier.length > 0) {
    const rows = db
      .query(
        `SELECT e.job_id, min(e.need_id) AS need_id FROM job_needs e JOIN jobs d ON d.id = e.job_id
         WHERE e.need_id IN (SELECT value FROM json_each(?1)) AND d.state = 'canceled'
           AND EXISTS (SELECT 1 FROM job_needs c WHERE c.job_id = e.job_id AND c.closed = 1)
           AND NOT EXISTS (SELECT 1 FROM job_needs o JOIN jobs n ON n.id = o.need_id
             WHERE o.job_id = e.job_id AND o.policy = 'success' AND o.met = 0 AND n.state IN ('dead','canceled'))
           AND (d.idempotency_key IS NULL OR NOT EXISTS (SELECT 1 FROM jobs k
             WHERE k.idempotency_key = d.idempotency_key AND k.state IN ('queued','running')))
           AND NOT ${lostNeed("d")}
         GROUP BY e.job_id ORDER BY e.job_id`,
      )
      .all(idsJson(frontier)) as { job_id: number; need_id: number }[];
    const next: number[] = [];
    const requeue = db.query(
      `UPDATE jobs SET state = 'queued', attempts = 0, crashes = 0, next_run_at = ?1, finished_at = NULL, last_error = NULL,
         locked_by = NULL, locked_pid = NULL, locked_at = NULL, heartbeat_at = NULL, cancel_requested = 0,
         needs_left = (SELECT count(*) FROM job_needs WHERE job_id = ?2 AND met = 0)
       WHERE id = ?2 AND state = 'canceled' RETURNING queue, needs_left`,
    );
    for (const r of rows) {
      const row = requeue.get(now, r.job_id) as { queue: string; needs_left: number } | null;
      if (!row) continue;
      db.query("UPDATE job_needs SET closed = 0 WHERE job_id = ?").run(r.job_id);
      if (row.needs_left === 0) work.ready.add(row.queue);
      insert(r.job_id, "retried", JSON.stringify({ from: "canceled", reason: "need_retried", need: r.need_id }));
      next.push(r.job_id);
    }
    revived.push(...next);
    frontier = next;
  }
  return revived;
}

/**
 * A need that ended and runs again (retry, rerun) is no longer met: the edges it met of
 * dependents still queued are unmet again, and each such dependent's `needs_left` grows by one,
 * so it waits for the need's new outcome (docs/architecture.md "Dependencies"). Dependents
 * that ran already keep their edges.
 */
export function unmeetNeeds(db: Database, needIds: number[]): void {
  if (needIds.length === 0) return;
  const rows = db
    .query(
      `UPDATE job_needs SET met = 0 WHERE need_id IN (SELECT value FROM json_each(?1)) AND met = 1
         AND (SELECT d.state FROM jobs d WHERE d.id = job_needs.job_id) = 'queued' RETURNING job_id`,
    )
    .all(idsJson(needIds)) as { job_id: number }[];
  const grow = db.query("UPDATE jobs SET needs_left = needs_left + 1 WHERE id = ?");
  for (const r of rows) grow.run(r.job_id);
}

/** The unmet needs of each of `jobIds` that has any, need ids ascending. */
export function unmetNeeds(db: Database, jobIds: number[]): Map<number, number[]> {
  const out = new Map<number, number[]>();
  if (jobIds.length === 0) return out;
  const rows = db
    .query(
      `SELECT job_id, need_id FROM job_needs WHERE job_id IN (SELECT value FROM json_each(?)) AND met = 0
       ORDER BY job_id, need_id`,
    )
    .all(idsJson(jobIds)) as { job_id: number; need_id: number }[];
  for (const r of rows) out.set(r.job_id, [...(out.get(r.job_id) ?? []), r.need_id]);
  return out;
}

/** Queued jobs waiting for needs: their count, and the oldest `limit` with their unmet needs. */
export function waitingOnNeeds(
  db: Database,
  limit: number,
): { count: number; jobs: { job_id: number; waiting_on: number[] }[] } {
  const { n } = db.query("SELECT count(*) AS n FROM jobs WHERE state = 'queued' AND needs_left > 0").get() as {
    n: number;
  };
  if (n === 0) return { count: 0, jobs: [] };
  const ids = (
    db.query("SELECT id FROM jobs WHERE state = 'queued' AND needs_left > 0 ORDER BY id LIMIT ?").all(limit) as {
      id: number;
    }[]
  ).map((r) => r.id);
  const unmet = unmetNeeds(db, ids);
  return { count: n, jobs: ids.map((id) => ({ job_id: id, waiting_on: unmet.get(id) ?? [] })) };
}
