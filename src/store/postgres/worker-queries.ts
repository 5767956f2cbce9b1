/**
 * The PostgreSQL writes a worker makes, on its hot path: an attempt's result,
 * shipped output, lease and registry heartbeats, stop requests (the claim
 * itself is claim.ts); and the job-ended machinery every write path shares
 * (hooks, dependents, a batch's cancels). queries.ts builds the operator's
 * writes on it.
 */

import type { EventName, JobState, WorkerRecord } from "../../model/job.ts";
import type { Hook } from "../../model/recurring.ts";
import type { AttemptKey, AttemptLease, AttemptRecord, OutputChunk } from "../attempt-types.ts";
import * as batches from "./batch-queries.ts";
import { HOT_SQL } from "./hot-path.ts";
import { StaleRow } from "./kept-rows.ts";
import { jobsEnded, type SettleRound } from "./needs.ts";
import { appendOutput } from "./output.ts";
import { PgReads } from "./read-queries.ts";
import { hooksFromJson, type PgRecurring } from "./recurring-queries.ts";
import { num } from "./rows.ts";

type Row = Record<string, unknown>;

/** The worker's writes and the shared job-ended machinery, in one transaction. */
export abstract class PgWorkerWrites extends PgReads {
  /** Schedules and hooks; set by {@link PgQueries}, which can insert their jobs. */
  abstract readonly recurring: PgRecurring;

  /**
   * Everything that happens in the transaction that ends a job (done, dead, canceled), from
   * every path that ends one: a worker's result, a reap, a cancel. Today: its outcome hooks,
   * and its batch's `batch-done` hooks when that end finished the batch.
   */
  protected async jobEnded(
    jobId: number,
    state: JobState,
    now: number,
    hooks?: Hook[],
    batchCheck = true,
  ): Promise<void> {
    await this.recurring.enqueueHooks(jobId, state, now, hooks, batchCheck);
  }

  /**
   * What ending jobs outside their own outcome sets off (a batch's fail-fast
   * canceling its queued jobs): their hooks, and their dependents closed
   * (docs/architecture.md "Hooks", "Dependencies"), in the same transaction.
   */
  protected async canceledByBatch(jobIds: number[], now: number): Promise<void> {
    // One batch: its batch-done check once, after the last cancel (not a count per canceled job).
    for (const [i, id] of jobIds.entries())
      await this.jobEnded(id, "canceled", now, undefined, i === jobIds.length - 1);
    await this.closedByNeeds(await jobsEnded(this.tx, this.effects, jobIds, now), now);
  }

  /** The hooks of dependents a failed need closed (need_failed): ends like any other (docs/architecture.md "Hooks"). */
  protected async closedByNeeds(jobIds: number[], now: number): Promise<void> {
    for (const id of jobIds) await this.jobEnded(id, "canceled", now);
  }

  async appendAttemptOutput(chunk: OutputChunk): Promise<boolean> {
    return appendOutput(this.tx, chunk);
  }

  async appendEvent(
    jobId: number,
    event: EventName,
    workerId: string | null,
    detail: string | null,
    now: number,
  ): Promise<void> {
    this.effects.append({ jobId, event, workerId, detail, at: now });
  }

  async recordAttempt(r: AttemptRecord): Promise<boolean> {
    // One statement (hot-path.ts recordAttempt): fenced by (job, attempt, worker) in the UPDATE itself; the attempt
    // row, the ledger rows, the first settling round of an ended job's dependents, its hooks and the NOTIFYs ride in
    // it. Events buffered earlier in this transaction go first, so the ledger keeps the order things happened in.
    if (this.effects.events.length > 0) this.effects.flush(this.tx).catch(() => {}); // sent now; its error aborts the record too
    const channels = this.effects.channels;
    const version = this.keptVersions.get(r.jobId) ?? null;
    this.kept?.rows.forget(r.jobId); // written now, or found changed: read afresh from here on
    const [row] = (await this.tx.unsafe(HOT_SQL.recordOutcome, [
      r.jobState,
      r.attempts,
      r.crashes,
      r.nextRunAt,
      r.exitCode,
      r.error,
      r.jobState === "queued" ? null : r.now,
      r.jobId,
      r.workerId,
      r.attemptNo,
      r.attemptState,
      r.now,
      r.signal,
      r.failureReason,
      r.stderrLastLine ?? null,
      r.process?.pgid ?? null,
      r.process?.startTime ?? null,
      r.stderrSignature ?? null,
      r.events.map((e) => e.event),
      r.events.map((e) => e.workerId),
      r.events.map((e) => e.detail),
      channels?.readers ?? "",
      channels?.work ?? "",
      version,
      version === null ? null : this.kept!.rows.settings,
    ])) as Row[];
    if (row?.o_stale === true) {
      if (this.kept) this.kept.rows.settings = null; // perhaps they changed: the next result reads them with its job
      throw new StaleRow(r.jobId);
    }
    if (!row || row.o_n === 0) return false;
    if (channels === null) this.effects.notify = true; // (a write always has its channels)
    if (r.jobState !== "queued") {
      const settled: SettleRound = {
        met: (JSON.parse(row.o_met as string) as (number | string)[]).map(Number),
        failed: (JSON.parse(row.o_failed as string) as [number | string, number | string, string][]).map(
          ([j, n, st]) => [Number(j), Number(n), st] as [number, number, string],
        ),
      };
      await this.jobEnded(r.jobId, r.jobState, r.now, hooksFromJson(row.o_hooks as string));
      await this.closedByNeeds(
        await jobsEnded(this.tx, this.effects, [r.jobId], r.now, Promise.resolve(settled)),
        r.now,
      );
    }
    // The batch effects of this outcome, in its transaction (docs/architecture.md "Batches").
    if (r.jobState === "dead") {
      const failed = await batches.failFastOnDead(this.tx, this.effects, r.jobId, r.now);
      if (failed) await this.canceledByBatch(failed.canceled, r.now);
    } else if (
      r.jobState === "queued" &&
      (await batches.cancelRequeuedInFailedBatch(this.tx, this.effects, r.jobId, r.now))
    )
      await this.canceledByBatch([r.jobId], r.now);
    return true;
  }

  async upsertWorker(w: WorkerRecord): Promise<void> {
    await this
      .tx`INSERT INTO workers (worker_id, pid, host, boot_id, start_time, queue, started_at, heartbeat_at, stop_requested, stopped_at, pid_ns)
      VALUES (${w.worker_id}, ${w.pid}, ${w.host}, ${w.boot_id}::text, ${w.start_time}::text, ${w.queue}, ${w.started_at}::float8,
        ${w.heartbeat_at}::float8, ${w.stop_requested}, ${w.stopped_at}::float8, ${w.pid_ns ?? null}::text)
      ON CONFLICT (worker_id) DO UPDATE SET pid = excluded.pid, host = excluded.host, boot_id = excluded.boot_id, pid_ns = excluded.pid_ns,
        start_time = excluded.start_time, queue = excluded.queue, started_at = excluded.started_at,
        heartbeat_at = excluded.heartbeat_at, stop_requested = excluded.stop_requested, stopped_at = excluded.stopped_at`;
  }

  async markWorkerStopped(workerId: string, now: number): Promise<void> {
    await this
      .tx`UPDATE workers SET stopped_at = ${now}::float8, heartbeat_at = ${now}::float8 WHERE worker_id = ${workerId}`;
  }

  async heartbeatJobs(workerId: string, attempts: AttemptKey[]): Promise<AttemptLease[]> {
    if (attempts.length === 0) return [];
    // One statement for all of the worker's attempts and the process groups of the new ones (hot-path.ts).
    const groups = attempts.filter((a) => a.process);
    const rows = (await this.tx.unsafe(HOT_SQL.heartbeatJobs, [
      workerId,
      attempts.map((a) => a.jobId),
      attempts.map((a) => a.attemptNo),
      groups.map((a) => a.jobId),
      groups.map((a) => a.attemptNo),
      groups.map((a) => a.process!.pgid),
      groups.map((a) => a.process!.startTime),
    ])) as Row[];
    const seen = new Map(rows.map((r) => [`${num(r.id)}:${r.last_attempt_no}`, r.cancel_requested === true]));
    for (const r of rows) this.kept?.rows.renewed(num(r.id), r.row_version as string, r.heartbeat_at as number);
    return attempts.map((a) => {
      const cancel = seen.get(`${a.jobId}:${a.attemptNo}`);
      return { jobId: a.jobId, attemptNo: a.attemptNo, owned: cancel !== undefined, cancelRequested: cancel === true };
    });
  }

  async heartbeatWorker(workerId: string, now: number): Promise<{ stopRequested: boolean }> {
    const [row] = await this
      .tx`UPDATE workers SET heartbeat_at = ${now}::float8 WHERE worker_id = ${workerId} RETURNING stop_requested`;
    return { stopRequested: row?.stop_requested === true };
  }

  async requestWorkerStop(workerId: string | null): Promise<string[]> {
    const rows = (await this.tx`UPDATE workers SET stop_requested = true
      WHERE stopped_at IS NULL AND (${workerId}::text IS NULL OR worker_id = ${workerId}::text) RETURNING worker_id`) as {
      worker_id: string;
    }[];
    if (rows.length > 0) this.effects.notify = this.effects.work.all = true; // idle workers look at their flag when woken
    return rows.map((r) => r.worker_id);
  }
}
