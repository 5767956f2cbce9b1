/**
 * The job rows a worker's claims returned, kept until their result is
 * written (issue 35 item 1; docs/architecture.md "The claim"): a result in
 * `Store.writeAndClaim` is decided on the kept row and the settings last read
 * instead of a `getJob … FOR UPDATE` of its own, one statement per job fewer.
 * Nothing is trusted: spoolctl_record_outcome (hot-schema.ts) locks the row
 * and writes only if its version (`xmin`) and the settings are still those
 * the decision read; if not it writes nothing, the transaction is run again
 * ({@link StaleRow}) and that job read afresh.
 */
import type { Job } from "../../model/job.ts";
import type { ClaimedJob } from "../attempt-types.ts";
import { claimedVersions } from "./claim.ts";

/** A kept row and its version. */
export interface KeptRow {
  job: Job;
  version: string;
}

/** Kept rows of one store, by job id (at most {@link KeptRows.LIMIT}). */
export class KeptRows {
  static readonly LIMIT = 4096;
  private readonly rows = new Map<number, KeptRow>();
  /** The settings as the outcome function compares them (hot-schema.ts SETTINGS_TEXT), last read; null: none yet. */
  settings: string | null = null;

  /** Keeps the rows of what a claim returned (those it knows the version of). */
  keep(claimed: ClaimedJob[]): void {
    for (const c of claimed) {
      const version = claimedVersions.get(c.job);
      if (version !== undefined) this.rows.set(c.job.id, { job: structuredClone(c.job), version });
    }
    if (this.rows.size > KeptRows.LIMIT)
      for (const id of [...this.rows.keys()].slice(0, KeptRows.LIMIT / 2)) this.rows.delete(id);
  }

  /** The kept row of job `id` (a copy), or null. */
  get(id: number): KeptRow | null {
    const kept = this.rows.get(id);
    return kept ? { job: structuredClone(kept.job), version: kept.version } : null;
  }

  /** A heartbeat renewed job `id`'s lease: the row's new version and `heartbeat_at` (if it is kept). */
  renewed(id: number, version: string, heartbeatAt: number): void {
    const kept = this.rows.get(id);
    if (kept) this.rows.set(id, { job: { ...kept.job, heartbeat_at: heartbeatAt }, version });
  }

  /** Forgets job `id`'s row: written, or found changed. */
  forget(id: number): void {
    this.rows.delete(id);
  }
}

/** What a transaction may do with the kept rows: decide results on them (`Store.writeAndClaim`), or only renew them. */
export interface KeptUse {
  rows: KeptRows;
  decide: boolean;
}

/** Raised inside a transaction whose result was decided on a kept row that had changed: run it again. */
export class StaleRow extends Error {
  constructor(readonly jobId: number) {
    super(`job ${jobId} changed since its claim; decided again`);
  }
}
