/**
 * `add --needs` and the `"ref"`/`"needs"` of `add --from` lines
 * (docs/architecture.md "Dependencies"): parsing the references, planning the
 * edges of one add (a line may name another line by its ref), refusing a job
 * that needs itself and a cycle, and resolving references to existing jobs.
 * Everything here but {@link resolveNeedRefs} is pure.
 */
import { invalidValue, SpoolError, type Warning } from "../contract/errors.ts";
import { type JobNeeds, NEEDS_POLICIES, type NeedsPolicy } from "../model/job.ts";
import { LAST_JOB_REF } from "./jobs.ts";
import { splitList } from "./values.ts";

/** The fields of an add request (`AddInput`, src/ops/add.ts) that say what the job needs, as typed. */
export interface NeedsInput {
  needs?: string[];
  needsPolicy?: string;
  ref?: string;
  after?: string;
}

/** What an add does with spec `index` (src/ops/add.ts `planAdds`): insert it, reuse an active job, or an earlier spec's. */
export type AddStepRef =
  | { kind: "insert"; index: number }
  | { kind: "active"; index: number; job: { id: number } }
  | { kind: "batch"; index: number; of: number };

/** Most needs one job may name. */
const MAX_NEEDS = 1000;

/** What a job spec says about its needs, validated (absent fields: none). */
export interface NeedsSpec {
  /** References as written: job ids, idempotency keys, `last`, or refs of other lines of the same add. */
  needs?: string[];
  needs_policy?: NeedsPolicy;
  /** The name other lines of the same `add --from` give this one. */
  ref?: string | null;
}

/**
 * Parses `--needs` values (repeatable and/or comma-separated) into references.
 * Raises `INVALID_INPUT` for an empty reference or too many.
 */
function parseNeeds(flag: string, raws: string[]): string[] {
  const refs = raws.flatMap((r) => splitList(r, ",")).map((r) => r.trim());
  if (refs.some((r) => r === "") || refs.length === 0)
    throw invalidValue(flag, raws.join(","), "job ids, idempotency keys or last, separated by commas (e.g. 12,13)");
  if (refs.length > MAX_NEEDS) throw invalidValue(flag, `${refs.length} jobs`, `at most ${MAX_NEEDS} needs`);
  return [...new Set(refs)];
}

/** Parses `--needs-policy`. Raises `INVALID_INPUT`. */
function parseNeedsPolicy(flag: string, raw: string): NeedsPolicy {
  if (!(NEEDS_POLICIES as readonly string[]).includes(raw))
    throw invalidValue(flag, raw, "success (run once every need succeeded) or done (once they ended, however)");
  return raw as NeedsPolicy;
}

/** A line's needs split into other lines of the same add (spec indexes) and references to existing jobs. */
export interface PlannedNeeds {
  earlier: number[];
  outside: string[];
  policy: NeedsPolicy;
}

/**
 * Plans the edges of one add: each reference that is the ref of another spec
 * names that spec; any other names an existing job. Raises `INVALID_INPUT` for
 * a ref given twice, a spec that needs itself, and a cycle (naming its specs).
 * `labels[i]` names spec i in messages (`line 3`).
 */
export function planNeeds(specs: NeedsSpec[], labels: string[]): (PlannedNeeds | undefined)[] {
  const label = (i: number) => labels[i] ?? `entry ${i + 1}`;
  const byRef = new Map<string, number>();
  specs.forEach((s, i) => {
    if (!s.ref) return;
    const first = byRef.get(s.ref);
    if (first !== undefined)
      throw new SpoolError(
        "INVALID_INPUT",
        `${label(i)}: ref ${JSON.stringify(s.ref)} is already the ref of ${label(first)}; nothing was added`,
        { remediation: "give each line its own ref", detail: { ref: s.ref } },
      );
    byRef.set(s.ref, i);
  });
  const planned = specs.map((s, i): PlannedNeeds | undefined => {
    if (!s.needs || s.needs.length === 0) return undefined;
    const earlier: number[] = [];
    const outside: string[] = [];
    for (const ref of s.needs) {
      const j = byRef.get(ref);
      if (j === i)
        throw new SpoolError("INVALID_INPUT", `${label(i)} needs itself (${JSON.stringify(ref)}); nothing was added`, {
          remediation: "a job can only need other jobs: remove its own ref from its needs",
          detail: { ref },
        });
      if (j === undefined) outside.push(ref);
      else earlier.push(j);
    }
    return { earlier, outside, policy: s.needs_policy ?? "success" };
  });
  refuseCycle(planned, specs, label);
  return planned;
}

/** Raises `INVALID_INPUT` naming the first cycle among the specs' needs, if any (depth-first search). */
function refuseCycle(planned: (PlannedNeeds | undefined)[], specs: NeedsSpec[], label: (i: number) => string): void {
  const state = new Array<0 | 1 | 2>(planned.length).fill(0); // 0 new, 1 on the path, 2 done
  const path: number[] = [];
  const visit = (i: number): void => {
    state[i] = 1;
    path.push(i);
    for (const j of planned[i]?.earlier ?? []) {
      if (state[j] === 1) {
        const cycle = [...path.slice(path.indexOf(j)), j];
        const names = cycle.map((k) => (specs[k]!.ref ? JSON.stringify(specs[k]!.ref) : label(k)));
        throw new SpoolError(
          "INVALID_INPUT",
          `the needs form a cycle: ${names.join(" needs ")}; none of them could ever run; nothing was added`,
          {
            remediation: "remove one need of the cycle",
            detail: { cycle: cycle.map((k) => specs[k]!.ref ?? label(k)) },
          },
        );
      }
      if (state[j] === 0) visit(j);
    }
    path.pop();
    state[i] = 2;
  };
  for (let i = 0; i < planned.length; i++) if (state[i] === 0) visit(i);
}

/**
 * How a `--needs` reference to an existing job is looked up (not a ref of the
 * same add): a positive integer is an id (the store checks it exists), `last`
 * the newest job, anything else an idempotency key (its newest job). Raises
 * `INVALID_INPUT` for an integer that is no job id.
 */
export function needLookup(ref: string): { id: number } | { last: true } | { key: string } {
  if (/^\d+$/.test(ref)) {
    const id = Number(ref);
    if (!Number.isSafeInteger(id) || id < 1) throw invalidValue("--needs", ref, "a job id (positive integer)");
    return { id };
  }
  return ref === LAST_JOB_REF ? { last: true } : { key: ref };
}

/**
 * `INVALID_INPUT` for a `--needs` key or `last` that names no job (`last` on an empty queue
 * says so rather than "no key last"): nothing was added. `where`:
 * the first entry that names it (`line 3` of an `add --from`), absent for a single add.
 */
export function noSuchNeed(ref: string, where?: string): SpoolError {
  const at = where ? `${where}: ` : "";
  if (ref === LAST_JOB_REF)
    return new SpoolError("INVALID_INPUT", `${at}--needs last: the queue has no job yet; nothing was added`, {
      remediation: "add the job it should wait for first, or drop --needs last",
      detail: { need: ref },
    });
  return new SpoolError(
    "INVALID_INPUT",
    `${at}--needs: no job with id, key or name ${JSON.stringify(ref)} (and no line of this add has that ref); nothing was added`,
    {
      remediation: "name jobs that exist (spoolctl list shows their ids), by id, idempotency key, name or last",
      detail: { need: ref },
    },
  );
}

/**
 * The store's {@link JobNeeds} of a planned spec: `position(j)` says where spec
 * j's job is — its index among the jobs this add inserts, or the id of the
 * existing job an idempotency key reused.
 */
function toJobNeeds(
  plan: PlannedNeeds,
  resolved: Map<string, number>,
  position: (spec: number) => { index: number } | { id: number },
): JobNeeds {
  const ids = plan.outside.map((r) => resolved.get(r)!);
  const earlier: number[] = [];
  for (const j of plan.earlier) {
    const at = position(j);
    if ("index" in at) earlier.push(at.index);
    else ids.push(at.id);
  }
  return { ids: [...new Set(ids)], earlier: [...new Set(earlier)], policy: plan.policy };
}

/**
 * The needs fields of a validated spec from `input` (`flag(name)` renders a field's name).
 * Raises `INVALID_INPUT` for bad references, a policy without needs, a blank ref.
 */
export function validateNeedsInput(
  input: NeedsInput,
  flag: (name: string) => string,
): NeedsSpec & { after_bare: number | null } {
  const needs = input.needs === undefined ? undefined : parseNeeds(flag("needs"), input.needs);
  if (input.needsPolicy !== undefined && needs === undefined)
    throw new SpoolError(
      "INVALID_INPUT",
      `${flag("needs-policy")} says when needs count as met, but no needs were given`,
      {
        remediation: "spoolctl add --needs 12,13 --needs-policy done -- CMD",
      },
    );
  if (input.ref !== undefined && input.ref.trim() === "")
    throw invalidValue(flag("ref"), input.ref, "a non-blank name other lines' needs can give");
  return {
    needs,
    needs_policy:
      input.needsPolicy === undefined ? undefined : parseNeedsPolicy(flag("needs-policy"), input.needsPolicy),
    ref: input.ref ?? null,
    after_bare: input.after !== undefined && /^\d+$/.test(input.after.trim()) ? Number(input.after.trim()) : null,
  };
}

/**
 * The store's needs of each job an add inserts (in `plan`'s insert order):
 * `needs` as {@link planNeeds} planned the lines, `resolved` the references to
 * existing jobs (by ref, as the add's transaction resolved them), a line
 * deduplicated by its key standing for the job that holds the key. Pushes an
 * `IDEMPOTENCY_METADATA_DIFFERS` warning for needs a deduplicated line drops.
 */
export function jobNeedsOf(
  needs: (PlannedNeeds | undefined)[],
  resolved: Map<string, number>,
  plan: AddStepRef[],
  labels: string[],
  warnings: Warning[],
): (JobNeeds | undefined)[] {
  // Where spec j's job is: its index among the inserted jobs, or the id of the active job its key reused.
  const inserted = new Map<number, number>();
  for (const p of plan) if (p.kind === "insert") inserted.set(p.index, inserted.size);
  const position = (j: number): { index: number } | { id: number } => {
    const p = plan[j]!;
    return p.kind === "active" ? { id: p.job.id } : { index: inserted.get(p.kind === "batch" ? p.of : j)! };
  };
  // A job its key deduplicated onto an active one keeps that job's needs: say so, never drop them unsaid.
  for (const p of plan)
    if (p.kind === "active" && needs[p.index])
      warnings.push({
        code: "IDEMPOTENCY_METADATA_DIFFERS",
        message: `${labels[p.index] ? `${labels[p.index]}: ` : ""}deduplicated by --key onto job ${p.job.id}, which keeps its own needs: these --needs were not added (spoolctl show ${p.job.id} says what it waits on)`,
      });
  return plan.flatMap((p) => {
    if (p.kind !== "insert") return [];
    const n = needs[p.index];
    return [n ? toJobNeeds(n, resolved, position) : undefined];
  });
}

/** The bare integers of `--after N` (absent: none), which may name a job (see {@link afterIsAJobWarnings}). */
export function afterBareIds(specs: { after_bare?: number | null }[]): number[] {
  return specs.flatMap((s) =>
    s.after_bare !== null && s.after_bare !== undefined && Number.isSafeInteger(s.after_bare) && s.after_bare >= 1
      ? [s.after_bare]
      : [],
  );
}

/**
 * `--after N` keeps its meaning, a delay of N seconds; when N is a bare
 * integer naming an existing job (`existing`), pueue's `add --after ID` habit
 * is likely: a `NEEDS_MEANT` warning points at `--needs` (docs/architecture.md "Dependencies").
 */
export function afterIsAJobWarnings(
  specs: { after_bare?: number | null }[],
  labels: string[],
  existing: Set<number>,
  warnings: Warning[],
): void {
  for (const [i, spec] of specs.entries()) {
    const n = spec.after_bare;
    if (n === null || n === undefined || !existing.has(n)) continue;
    warnings.push({
      code: "NEEDS_MEANT",
      message: `${labels[i] ? `${labels[i]}: ` : ""}--after ${n} delays the job by ${n} seconds; job ${n} exists: to run after it ends, use --needs ${n}`,
    });
  }
}

/**
 * The `last_error` and ledger detail of a queued dependent closed because its
 * need `need` ended `state` without success (docs/architecture.md
 * "Dependencies"): `need_failed: job 4 ended dead`; when the need was a queued
 * job being deleted (`deleted`), `need_failed: need deleted: job 4 was
 * deleted before it ran`, detail `need_state: "deleted"`, so that no view
 * says the need "ended canceled". Both stores write it.
 */
export function closingWords(
  need: number,
  state: string,
  deleted: boolean,
): { error: string; detail: { from: "queued"; reason: "need_failed"; need: number; need_state: string } } {
  return deleted
    ? {
        error: `need_failed: need deleted: job ${need} was deleted before it ran`,
        detail: { from: "queued", reason: "need_failed", need, need_state: "deleted" },
      }
    : {
        error: `need_failed: job ${need} ended ${state}`,
        detail: { from: "queued", reason: "need_failed", need, need_state: state },
      };
}
