/**
 * `add` (docs/architecture.md "Adding a job"): the decisions of an add, pure —
 * which spec inserts and which reuses a job by its idempotency key, what the
 * answer says, which paths a job without `--cwd` would resolve elsewhere.
 * Parsing a spec is ./job-spec.ts; the transaction is the `addJobs` verb
 * (src/store/verbs/add.ts).
 */

import { statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { SpoolError, type Warning } from "../contract/errors.ts";
import type { AddedJob } from "../describe/schemas-rows.ts";
import type { Job, NewJob } from "../model/job.ts";
import type { JobSpec } from "./job-spec.ts";

// Defined once, as the JSON Schema `spoolctl schema` prints.
export type { AddedJob };

/**
 * The paths of a job without a cwd that will be resolved in the worker's
 * folder although they were written relative to `here` (docs/architecture.md
 * "Adding a job"): its program when a relative path with a slash (`./run.sh`,
 * `bin/x`; a bare name is looked up on PATH), and arguments that are `./x` or
 * `../x`, or name a file that exists in `here`. Empty when the job has a cwd.
 */
function relativePaths(spec: Pick<JobSpec, "argv" | "cwd">, here: string): string[] {
  if (spec.cwd !== null) return [];
  const [program, ...args] = spec.argv;
  const found: string[] = [];
  if (program?.includes("/") && !isAbsolute(program)) found.push(program);
  for (const arg of args) {
    if (arg.startsWith("-") || isAbsolute(arg) || arg === "") continue;
    if (arg.startsWith("./") || arg.startsWith("../") || (!arg.includes("=") && fileHere(resolve(here, arg))))
      found.push(arg);
  }
  return found;
}

/** Whether `path` is an existing regular file (never throws). */
function fileHere(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The `RELATIVE_PATH` warning of a job added without `--cwd` whose paths
 * ({@link relativePaths}) would be resolved in the worker's folder; `rerun` is
 * the exact command that adds it with `--cwd .` instead. Null when there is nothing to say.
 */
export function relativePathWarning(
  spec: Pick<JobSpec, "argv" | "cwd">,
  here: string,
  rerun: string,
  label = "",
): Warning | null {
  const paths = relativePaths(spec, here);
  if (paths.length === 0) return null;
  const what =
    paths.length === 1
      ? `the relative path ${JSON.stringify(paths[0])}`
      : `the relative paths ${paths.map((x) => JSON.stringify(x)).join(", ")}`;
  return {
    code: "RELATIVE_PATH",
    message: `${label}${what} will be resolved in the worker's folder, not here (${here}): without --cwd a job runs where its worker runs. To run it from this folder: ${rerun}`,
  };
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const sortedEntries = (o: Record<string, string>) => Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * The idempotency rule (docs/architecture.md "Idempotency"): an active job with the same key and the same
 * execution payload (argv, cwd, env) is returned instead of a new one; a
 * different payload is `IDEMPOTENCY_CONFLICT` (exit 5).
 */
function checkIdempotency(active: NewJob & { id: number }, job: NewJob): { metadataDiffers: boolean } {
  const samePayload =
    sameJson(active.argv, job.argv) &&
    active.cwd === job.cwd &&
    sameJson(sortedEntries(active.env), sortedEntries(job.env));
  if (!samePayload) {
    throw new SpoolError(
      "IDEMPOTENCY_CONFLICT",
      `key ${JSON.stringify(job.idempotency_key)} belongs to active job ${active.id}, which runs a different command, cwd or env`,
      {
        detail: { job_id: active.id, key: job.idempotency_key },
      },
    );
  }
  const metadataDiffers =
    !sameJson(sortedEntries(active.tags), sortedEntries(job.tags)) ||
    active.note !== job.note ||
    active.priority !== job.priority ||
    active.queue !== job.queue ||
    active.timeout_seconds !== job.timeout_seconds ||
    active.max_retries !== job.max_retries ||
    active.max_crashes !== job.max_crashes;
  return { metadataDiffers };
}

function describe(job: Job, deduplicated: boolean): AddedJob {
  return {
    job_id: job.id,
    state: job.state,
    queue: job.queue,
    priority: job.priority,
    next_run_at: job.next_run_at,
    cwd: job.cwd,
    env_keys: Object.keys(job.env).sort(),
    deduplicated,
  };
}

/** What an add does with spec `index`: insert it, reuse an active job, or reuse one inserted by an earlier spec. */
export type AddStep =
  | { kind: "insert"; index: number; job: NewJob }
  | { kind: "active"; index: number; job: Job }
  | { kind: "batch"; index: number; of: number };

/**
 * The idempotency rule applied to a whole add (docs/architecture.md
 * "Idempotency"), decided before anything is written: a spec whose key an
 * active job holds reuses it (or raises, {@link checkIdempotency}); one whose
 * key an earlier spec of the same add takes reuses that one (or raises,
 * naming both specs); any other spec is inserted. Pushes the metadata warnings.
 */
export function planAdds(wanted: NewJob[], active: Map<string, Job>, labels: string[], warnings: Warning[]): AddStep[] {
  const firstByKey = new Map<string, number>();
  return wanted.map((job, index): AddStep => {
    const key = job.idempotency_key;
    if (key === null) return { kind: "insert", index, job };
    const holder = active.get(key);
    const earlier = firstByKey.get(key);
    let metadataDiffers = false;
    let step: AddStep;
    if (holder) {
      metadataDiffers = checkIdempotency(holder, job).metadataDiffers;
      step = { kind: "active", index, job: holder };
    } else if (earlier !== undefined) {
      const earlierLabel = labels[earlier] ?? `entry ${earlier + 1}`;
      metadataDiffers = checkWithinBatch(wanted[earlier]!, job, earlierLabel, labels[index]).metadataDiffers;
      step = { kind: "batch", index, of: earlier };
    } else {
      firstByKey.set(key, index);
      return { kind: "insert", index, job };
    }
    if (metadataDiffers) {
      const reused = step.kind === "active" ? `job ${step.job.id}` : (labels[earlier!] ?? `entry ${earlier! + 1}`);
      warnings.push({
        code: "IDEMPOTENCY_METADATA_DIFFERS",
        message: `${reused} was reused for key ${JSON.stringify(key)}; its tags, note, priority, lane, timeout or budgets differ from this request; the active job's were kept`,
      });
    }
    return step;
  });
}

/**
 * {@link checkIdempotency} for a key already taken by a job of the same batch:
 * that job exists only inside the transaction this conflict rolls back, so the
 * message names the spec that added it (`line 1`), never its id.
 */
function checkWithinBatch(
  active: NewJob,
  job: NewJob,
  earlier: string,
  label: string | undefined,
): { metadataDiffers: boolean } {
  try {
    return checkIdempotency({ ...active, id: 0 }, job);
  } catch (error) {
    if (!(error instanceof SpoolError) || error.code !== "IDEMPOTENCY_CONFLICT") throw error;
    const key = JSON.stringify(job.idempotency_key);
    throw new SpoolError(
      "IDEMPOTENCY_CONFLICT",
      `${label ? `${label}: ` : ""}key ${key} is already used by ${earlier} of this batch, which runs a different command, cwd or env; nothing was added`,
      {
        remediation: `give each job of the batch its own key, or the same command, cwd and env as ${earlier}`,
        detail: { key: job.idempotency_key, earlier, ...(label ? { conflicting: label } : {}) },
      },
    );
  }
}

/**
 * What an add answers, spec by spec, once `plan`'s inserts are `stored` (row i
 * of `stored` is the plan's i-th insert): the job inserted, or the one reused
 * (`deduplicated`).
 */
export function addedJobs(plan: AddStep[], stored: Job[]): AddedJob[] {
  let next = 0;
  const byIndex = new Map<number, Job>();
  for (const p of plan) if (p.kind === "insert") byIndex.set(p.index, stored[next++]!);
  return plan.map((p) =>
    p.kind === "insert"
      ? describe(byIndex.get(p.index)!, false)
      : p.kind === "active"
        ? describe(p.job, true)
        : describe(byIndex.get(p.of)!, true),
  );
}
