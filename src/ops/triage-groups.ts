/**
 * Dead and canceled jobs grouped by failure signature (docs/architecture.md
 * "Triage"), for `triage`'s first screen and `list --state dead --group`. The
 * store groups by the signatures workers recorded, in one statement; here
 * only lines recorded without one are masked, and groups that mask alike merged.
 */
import type { FailureGroupRow, FailureReason, Job, JobFilter, JobState } from "../store/model.ts";
import type { Store, StoreReader } from "../store/store.ts";
import {
  type FailureSignature,
  lastNonEmptyLine,
  MASK_VERSION,
  maskLine,
  STDERR_TAIL_READ,
  signatureKey,
  signatureText,
} from "./failure-signature.ts";
import { streamTail } from "./output.ts";
import { regroupDependents } from "./triage-dependents.ts";

/**
 * Which jobs to look at (`--queue`, `--tag`, `--since`, `--failure-reason`,
 * `--match`), the same for `triage`, `retry --all` and `list`.
 */
export interface JobSelection {
  queue?: string;
  tags: Record<string, string>;
  /** Seconds: only jobs that ended within this long before now. */
  sinceSeconds?: number;
  failureReasons?: FailureReason[];
  /** A shell glob over the command line (argv joined by spaces). */
  match?: string;
  /** Only jobs of this batch (docs/architecture.md "Batches"). */
  batch?: string;
}

/** A {@link JobSelection} as the store's filter at `now` (epoch seconds). */
export function selectionFilter(sel: JobSelection, now: number): Omit<JobFilter, "limit"> {
  return {
    queue: sel.queue,
    tags: sel.tags,
    ...(sel.sinceSeconds !== undefined ? { finishedSince: now - sel.sinceSeconds } : {}),
    ...(sel.failureReasons?.length ? { failureReasons: sel.failureReasons } : {}),
    ...(sel.match !== undefined ? { commandGlob: sel.match } : {}),
    ...(sel.batch !== undefined ? { batch: sel.batch } : {}),
  };
}

/** A selection in words, e.g. ` in lane builds, failed by timeout` ("" for everything). */
export function selectionText(sel: JobSelection): string {
  const parts: string[] = [];
  if (sel.queue !== undefined) parts.push(`in lane ${sel.queue}`);
  for (const [k, v] of Object.entries(sel.tags)) parts.push(`tagged ${k}=${v}`);
  if (sel.sinceSeconds !== undefined) parts.push(`ended in the last ${sel.sinceSeconds}s`);
  if (sel.failureReasons?.length) parts.push(`failed by ${sel.failureReasons.join(" or ")}`);
  if (sel.batch !== undefined) parts.push(`of batch ${sel.batch}`);
  if (sel.match !== undefined) parts.push(`matching ${JSON.stringify(sel.match)}`);
  return parts.length ? ` ${parts.join(", ")}` : "";
}

/** One group of failed jobs, as triage shows it and `list --group --json` reports it. */
export interface FailureGroup {
  signature: FailureSignature;
  /** The signature as one line (see signatureText). */
  text: string;
  count: number;
  /** Its jobs, newest (highest id) first. */
  job_ids: number[];
  lanes: string[];
  /** Earliest and latest end of its jobs, epoch seconds. */
  first_seen: number;
  last_seen: number;
  /** The newest job of the group: its command and unmasked stderr line. */
  example: { job_id: number; argv: string[]; stderr_line: string };
  /** Jobs canceled because a job of this group failed (need_failed, down the chain); absent when none. */
  closed_dependents?: number[];
}

/** Dead groups before canceled ones; then largest first; then the freshest. */
function groupOrder(a: FailureGroup, b: FailureGroup): number {
  const rank = (s: JobState) => (s === "dead" ? 0 : 1);
  return (
    rank(a.signature.state) - rank(b.signature.state) ||
    b.count - a.count ||
    b.last_seen - a.last_seen ||
    b.job_ids[0]! - a.job_ids[0]!
  );
}

/** The lines the store could not group by (not recorded): read from each job's last attempt, a bounded read. */
async function readUnrecorded(tx: StoreReader, rows: FailureGroupRow[]): Promise<void> {
  for (const row of rows) {
    if (row.stderr_signature !== null || row.stderr_last_line !== null) continue;
    const job = await tx.getJob(row.job_ids[0]!);
    const attempt = job ? await tx.getAttempt(job.id, job.last_attempt_no) : null;
    const tail = await streamTail(tx, attempt, "stderr", STDERR_TAIL_READ);
    row.stderr_last_line = tail.missing ? "" : lastNonEmptyLine(tail.text, tail.truncated);
  }
}

/** The unmasked stderr line of each example job's last attempt ("" when none was recorded or read). */
async function exampleLines(tx: StoreReader, jobs: Job[], rows: FailureGroupRow[]): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (const row of rows)
    if (row.count === 1 && row.stderr_last_line !== null) out.set(row.job_ids[0]!, row.stderr_last_line);
  for (const job of jobs) {
    if (out.has(job.id) || job.last_attempt_no === 0) continue;
    out.set(job.id, (await tx.getAttempt(job.id, job.last_attempt_no))?.stderr_last_line ?? "");
  }
  return out;
}

/**
 * The failure groups of the dead and canceled jobs `sel` selects (`states`
 * narrows to one of the two), sorted dead first, then largest first. One read
 * snapshot: the store's GROUP BY (by the signatures workers recorded, so a
 * few rows), masking what was recorded without one, and the example jobs.
 */
export async function failureGroups(
  store: Store,
  sel: JobSelection,
  states: JobState[] = ["dead", "canceled"],
  now = store.now(),
): Promise<FailureGroup[]> {
  return await store.read(async (tx) => {
    const rows = await tx.failureGroups({ ...selectionFilter(sel, now), states }, MASK_VERSION);
    await readUnrecorded(tx, rows);
    const merged = new Map<string, { signature: FailureSignature; rows: FailureGroupRow[] }>();
    const masked = new Map<string, string>(); // lines recorded without a signature: each distinct one masked once
    for (const row of rows) {
      let m = row.stderr_signature;
      if (m === null) {
        const line = row.stderr_last_line ?? "";
        m = masked.get(line) ?? maskLine(line);
        masked.set(line, m);
      }
      const signature: FailureSignature = {
        state: row.state as "dead" | "canceled",
        failure_reason: row.failure_reason,
        exit_code: row.exit_code,
        signal: row.signal,
        stderr: m,
      };
      const key = signatureKey(signature);
      const entry = merged.get(key) ?? { signature, rows: [] };
      entry.rows.push(row);
      merged.set(key, entry);
    }
    const groups: FailureGroup[] = [];
    for (const { signature, rows: parts } of merged.values()) {
      const jobIds = parts.flatMap((r) => r.job_ids).sort((a, b) => b - a);
      groups.push({
        signature,
        text: signatureText(signature),
        count: parts.reduce((n, r) => n + r.count, 0),
        job_ids: jobIds,
        lanes: [...new Set(parts.flatMap((r) => r.lanes))].sort(),
        first_seen: Math.min(...parts.map((r) => r.first_seen)),
        last_seen: Math.max(...parts.map((r) => r.last_seen)),
        example: { job_id: jobIds[0]!, argv: [], stderr_line: "" },
      });
    }
    // Dependents a failure closed are shown under it, not among the jobs canceled by hand.
    const regrouped = await regroupDependents(tx, groups);
    groups.splice(0, groups.length, ...regrouped);
    for (const g of groups) g.example.job_id = g.job_ids[0]!;
    const examples = groups.length
      ? await tx.listJobs({ ids: groups.map((g) => g.example.job_id), limit: groups.length })
      : [];
    const argvOf = new Map(examples.map((j) => [j.id, j.argv]));
    const lineOf = await exampleLines(tx, examples, rows);
    return groups
      .map((g) => ({
        ...g,
        example: {
          ...g.example,
          argv: argvOf.get(g.example.job_id) ?? [],
          stderr_line: lineOf.get(g.example.job_id) ?? "",
        },
      }))
      .sort(groupOrder);
  });
}
