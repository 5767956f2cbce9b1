/**
 * `add`, `add --from`, `enqueue` (docs/architecture.md "Adding a job"): jobs
 * validated by `src/ops/add.ts` go in with one write transaction, all or none.
 */
import type { Warning } from "../../contract/errors.ts";
import type { BatchAdd, Job } from "../../model/job.ts";
import { settingsFrom } from "../../model/settings.ts";
import { type AddedJob, addedJobs, planAdds } from "../../ops/add.ts";
import { type JobSpec, toNewJob } from "../../ops/job-spec.ts";
import {
  afterBareIds,
  afterIsAJobWarnings,
  jobNeedsOf,
  needLookup,
  noSuchNeed,
  type PlannedNeeds,
  planNeeds,
} from "../../ops/needs.ts";
import type { StoreReader } from "../reader.ts";
import type { Store } from "../store.ts";
import { findByKeyOrName } from "./job-refs.ts";

/**
 * Adds validated specs in one write transaction (SQLite `BEGIN IMMEDIATE`),
 * all or none: reads the queue settings the jobs copy and the active jobs
 * holding their idempotency keys (one statement), decides with the pure
 * `planAdds` which spec inserts and which reuses a job (docs/architecture.md
 * "Idempotency"), resolves `--needs` references to existing jobs, then
 * inserts with the driver's `addJobs` (PostgreSQL: one multi-row INSERT; the
 * `added` ledger rows with it; each lane's workers woken). Guards: the
 * unique index of active keys, and `addJobs`' own (needs locked and checked,
 * a sealed or failed batch refused). `labels[i]` names spec i in messages
 * (`line 3` for `add --from`); with `batch` the jobs join it in the same
 * transaction (and seal it when it says so). `now`: epoch seconds. Raises
 * `IDEMPOTENCY_CONFLICT`, `INVALID_INPUT` (a need), `CONFLICT` (a sealed or
 * failed batch) or `LOCKED`; then nothing was added.
 */
export async function addJobs(
  store: Store,
  specs: JobSpec[],
  now = store.now(),
  labels: string[] = [],
  batch: BatchAdd | null = null,
): Promise<{ jobs: AddedJob[]; warnings: Warning[] }> {
  const warnings: Warning[] = [];
  const jobs = await store.write(async (tx) => {
    const settings = settingsFrom(await tx.listSettings());
    const wanted = specs.map((spec) => toNewJob(spec, settings, now));
    const keys = wanted.flatMap((j) => (j.idempotency_key === null ? [] : [j.idempotency_key]));
    const active = keys.length > 0 ? await tx.findActiveJobsByKeys(keys) : new Map<string, Job>();
    const plan = planAdds(wanted, active, labels, warnings);
    const needs = planNeeds(specs, labels);
    const resolved = await resolveNeedRefs(tx, needs, specs.length > 1 ? labels : []);
    afterIsAJobWarnings(specs, labels, await existingJobs(tx, afterBareIds(specs)), warnings);
    const needsOf = jobNeedsOf(needs, resolved, plan, labels, warnings);
    const stored = await tx.addJobs(
      plan.flatMap((p) => (p.kind === "insert" ? [p.job] : [])),
      now,
      needsOf,
      batch,
    );
    return addedJobs(plan, stored);
  });
  return { jobs, warnings };
}

/**
 * `--needs` references to existing jobs (not refs of the same add) resolved
 * to job ids in the add's transaction (see `needLookup`): an id as given (the
 * driver checks it exists), `last` the newest job, a key or a name its newest job.
 * Raises `INVALID_INPUT` for a key or `last` that names no job.
 */
async function resolveNeedRefs(
  tx: StoreReader,
  needs: (PlannedNeeds | undefined)[],
  labels: string[],
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  // Each reference with the first entry that names it, for the error (`line 3: --needs: …`).
  const firstAt = new Map<string, number>();
  needs.forEach((n, i) => {
    for (const r of n?.outside ?? []) if (!firstAt.has(r)) firstAt.set(r, i);
  });
  for (const [ref, at] of firstAt) {
    const how = needLookup(ref);
    if ("id" in how) {
      out.set(ref, how.id);
      continue;
    }
    const job = "last" in how ? (await tx.listJobs({ limit: 1 }))[0] : await findByKeyOrName(tx, how.key);
    if (!job) throw noSuchNeed(ref, labels[at] ?? (labels.length > 0 ? `entry ${at + 1}` : undefined));
    out.set(ref, job.id);
  }
  return out;
}

/** Which of `ids` are jobs, one read (none when `ids` is empty). */
async function existingJobs(tx: StoreReader, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const unique = [...new Set(ids)];
  return new Set((await tx.listJobs({ ids: unique, limit: unique.length })).map((j) => j.id));
}
