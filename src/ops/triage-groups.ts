/**
 * Dead and canceled jobs grouped by failure signature (docs/architecture.md
 * "Triage"), for `triage`'s first screen and `list --state dead --group`. The
 * store groups by the signatures workers recorded, in one statement; here
 * only lines recorded without one are masked, and groups that mask alike
 * merged. The read is `failureGroups` of src/store/verbs/triage.ts.
 */
import type { FailureGroup } from "../describe/schemas-rows.ts";
import type { FailureGroupRow, FailureReason, JobFilter, JobState } from "../model/job.ts";
import type { DeadGroupCount } from "../model/metrics.ts";
import { type FailureSignature, maskLine, signatureKey, signatureText } from "./failure-signature.ts";

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
  /** Text in the command line, key or last error, ASCII case ignored (`--search`). */
  search?: string;
  /** Only the dead jobs of this kept failure group, by its key (`--failure-group`; docs/architecture.md "Kept dead counts"). */
  failureGroup?: string;
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
    ...(sel.search !== undefined ? { text: sel.search } : {}),
    ...(sel.failureGroup !== undefined ? { failureGroup: sel.failureGroup } : {}),
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
  if (sel.search !== undefined) parts.push(`containing ${JSON.stringify(sel.search)}`);
  if (sel.failureGroup !== undefined) parts.push(`of failure group ${JSON.stringify(sel.failureGroup)}`);
  return parts.length ? ` ${parts.join(", ")}` : "";
}

// Defined once, as the JSON Schema `spoolctl schema` prints.
export type { FailureGroup };

/** Dead groups before canceled ones; then largest first; then the freshest. */
export function groupOrder(a: FailureGroup, b: FailureGroup): number {
  const rank = (s: JobState) => (s === "dead" ? 0 : 1);
  return (
    rank(a.signature.state) - rank(b.signature.state) ||
    b.count - a.count ||
    b.last_seen - a.last_seen ||
    b.job_ids[0]! - a.job_ids[0]!
  );
}

/**
 * The groups of the store's `rows` (one per recorded signature, or per job
 * recorded without one) once the lines recorded without a signature are
 * masked (each distinct line once) and rows that mask alike are merged. Each
 * group's example is its newest job, with no command or line yet. Pure.
 */
export function mergeFailureRows(rows: FailureGroupRow[]): FailureGroup[] {
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
  return groups;
}

/**
 * One kept failure group of dead jobs, all lanes together, as the web view's
 * triage page and its actions name it (docs/architecture.md "Kept dead
 * counts"): `key` selects its jobs (`--failure-group`).
 */
export interface KeptGroup {
  key: string;
  signature: FailureSignature;
  /** False when its stderr line was not recorded masked by this version: `signature.stderr` then says so. */
  recorded: boolean;
  text: string;
  count: number;
  lanes: string[];
}

/** What `signature.stderr` says of a group whose line was not recorded with this version's masking. */
const UNRECORDED_LINE = "(stderr line not recorded)";

/**
 * The kept counts `rows` (by group and lane) as groups, largest first, then
 * by key; a signature recorded with `maskVersion` is shown unmasked of its
 * prefix, `""` (never ran) as no stderr, anything else as {@link UNRECORDED_LINE}. Pure.
 */
export function keptGroups(rows: readonly DeadGroupCount[], maskVersion: number): KeptGroup[] {
  const prefix = `${maskVersion}|`;
  const byKey = new Map<string, KeptGroup>();
  for (const r of rows) {
    let g = byKey.get(r.key);
    if (!g) {
      const recorded = r.signature === "" || (r.signature?.startsWith(prefix) ?? false);
      const signature: FailureSignature = {
        state: "dead",
        failure_reason: r.failure_reason as FailureReason | null,
        exit_code: r.exit_code,
        signal: r.signal,
        stderr: r.signature === "" ? "" : recorded ? r.signature!.slice(prefix.length) : UNRECORDED_LINE,
      };
      g = { key: r.key, signature, recorded, text: signatureText(signature), count: 0, lanes: [] };
      byKey.set(r.key, g);
    }
    g.count += r.n;
    if (!g.lanes.includes(r.queue)) g.lanes.push(r.queue);
  }
  for (const g of byKey.values()) g.lanes.sort();
  return [...byKey.values()].sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
