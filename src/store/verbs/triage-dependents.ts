/**
 * Triage groups a job closed because its need failed (`need_failed`,
 * docs/architecture.md "Dependencies") under the failure that closed it: such
 * a job never ran, so alone it would sit in the one group of canceled jobs
 * that never ran, beside jobs canceled by hand. Here each moves to the group
 * of its root need (following `need_failed` down a chain), listed in that
 * group's `closed_dependents`. A helper of the `failureGroups` verb (src/store/verbs/triage.ts).
 */
import type { Job } from "../../model/job.ts";
import type { StoreReader } from "../reader.ts";

/** The prefix of `last_error` the store writes on a job its need's failure closed. */
const NEED_FAILED = /^need_failed: (?:need deleted: )?job (\d+) (?:ended |was deleted)/;

/** The need named by a job's `need_failed` last error, or null. */
export function closingNeed(job: Pick<Job, "state" | "last_error">): number | null {
  if (job.state !== "canceled" || job.last_error === null) return null;
  const m = NEED_FAILED.exec(job.last_error);
  return m ? Number(m[1]) : null;
}

/** What {@link regroupDependents} needs of a failure group. */
export interface GroupOfJobs {
  count: number;
  job_ids: number[];
  closed_dependents?: number[];
}

/**
 * Moves the need_failed jobs of `groups` into the `closed_dependents` of the
 * group holding their root need, in `tx`'s snapshot (one `listJobs` for the
 * candidates, one `getJob` per link of a chain not already known). A job whose
 * root is in no group (filtered out) stays where it was. Groups left empty are
 * dropped. Returns the groups, otherwise unchanged.
 */
export async function regroupDependents<G extends GroupOfJobs>(tx: StoreReader, groups: G[]): Promise<G[]> {
  const ids = groups.flatMap((g) => g.job_ids);
  if (ids.length === 0) return groups;
  const canceled = (await tx.listJobs({ ids, states: ["canceled"], limit: ids.length })).filter(
    (j) => closingNeed(j) !== null,
  );
  if (canceled.length === 0) return groups;
  const rootOf = rootFinder(tx, new Map(canceled.map((j) => [j.id, closingNeed(j)!])));
  const groupOf = new Map<number, G>();
  for (const g of groups) for (const id of g.job_ids) groupOf.set(id, g);
  const moves: { id: number; from: G; to: G }[] = [];
  for (const j of canceled) {
    const to = groupOf.get(await rootOf(j.id));
    const from = groupOf.get(j.id)!;
    if (to && to !== from) moves.push({ id: j.id, from, to });
  }
  for (const { id, from, to } of moves) {
    from.job_ids = from.job_ids.filter((x) => x !== id);
    from.count--;
    to.closed_dependents = [...(to.closed_dependents ?? []), id].sort((a, b) => a - b);
  }
  return groups.filter((g) => g.count > 0);
}

/**
 * Follows `need_failed` from a job to the need whose failure started the
 * chain (the first job not closed by a need), in `tx`'s snapshot: `needOf`
 * holds the links already known, and grows by one `getJob` per link read.
 */
function rootFinder(tx: StoreReader, needOf: Map<number, number>): (id: number) => Promise<number> {
  return async (id) => {
    let at = id;
    for (let hops = 0; hops < 10_000; hops++) {
      let need = needOf.get(at);
      if (need === undefined) {
        const job = await tx.getJob(at);
        const n = job ? closingNeed(job) : null;
        if (n === null) return at;
        needOf.set(at, n);
        need = n;
      }
      at = need;
    }
    return at;
  };
}

/**
 * The dependents `closed` (jobs a failed need just closed, docs/architecture.md
 * "Dependencies") by the job of `roots` whose end started their chain, each
 * list ascending, in `tx`'s snapshot (one `listJobs`, then a `getJob` per link
 * not among them). A closed job whose root is not in `roots` is left out.
 */
export async function dependentsByRoot(
  tx: StoreReader,
  closed: number[],
  roots: Set<number>,
): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>();
  if (closed.length === 0) return out;
  const jobs = await tx.listJobs({ ids: closed, limit: closed.length });
  const rootOf = rootFinder(
    tx,
    new Map(jobs.flatMap((j) => (closingNeed(j) === null ? [] : [[j.id, closingNeed(j)!]]))),
  );
  for (const id of [...closed].sort((a, b) => a - b)) {
    const root = await rootOf(id);
    if (roots.has(root)) out.set(root, [...(out.get(root) ?? []), id]);
  }
  return out;
}

/** Most dependents {@link closedDependentsIn} collects. */
const CLOSED_MAX = 100_000;

/**
 * The jobs the failure of `needIds` closed that are still closed: canceled
 * jobs whose `need_failed` names one of them, and so on down the chain, in
 * `tx`'s snapshot (one `needEdges` and one `listJobs` per level), ascending,
 * at most {@link CLOSED_MAX}. What `retry --no-cascade` leaves closed.
 */
export async function closedDependentsIn(tx: StoreReader, needIds: number[]): Promise<number[]> {
  const out = new Set<number>();
  let frontier = new Set(needIds);
  while (frontier.size > 0 && out.size < CLOSED_MAX) {
    const edges = await tx.needEdges([...frontier]);
    const candidates = [...new Set(edges.filter((e) => frontier.has(e.need_id)).map((e) => e.job_id))].filter(
      (id) => !out.has(id) && !needIds.includes(id),
    );
    if (candidates.length === 0) break;
    const jobs = await tx.listJobs({ ids: candidates, states: ["canceled"], limit: candidates.length });
    const next = new Set<number>();
    for (const j of jobs) {
      const need = closingNeed(j);
      if (need !== null && frontier.has(need)) next.add(j.id);
    }
    for (const id of next) out.add(id);
    frontier = next;
  }
  return [...out].sort((a, b) => a - b);
}
