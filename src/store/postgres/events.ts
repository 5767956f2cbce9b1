/**
 * The ledger and the wake-up, written at the end of a write transaction.
 *
 * Event ids in commit order. `events --since-id N` pages by id, so a row that
 * commits after a reader passed its id would be skipped for ever. A sequence
 * hands out ids in call order, not commit order: a transaction that took id 7
 * may commit after another that took 8. So ids come from a one-row counter
 * table instead (`event_ids`), bumped by the statement that inserts the rows:
 * the UPDATE holds the counter's row lock until COMMIT, so the next writer of
 * events waits for this one to commit (PostgreSQL makes a transaction visible
 * before it releases its locks) and then reads the counter it left. Ids are
 * thus dense and increasing in commit order, and a reader that sees id N sees
 * every id below N. Chosen over an advisory lock plus a sequence because it is
 * one statement and needs no lock key shared with other applications.
 *
 * Only transactions that append events pay the wait, and for as short as
 * possible: appendEvent() only buffers, and the buffer is written by one
 * multi-row statement as the transaction's last statement, right before
 * COMMIT. A read of the ledger inside the same transaction writes the buffer
 * first, so the transaction sees its own events.
 *
 * The same statement calls pg_notify on the queue's channel, delivered to
 * listeners at commit (see listen.ts).
 */
import type { SQL } from "bun";
import type { EventName } from "../model.ts";

/** One buffered ledger row. */
export interface PendingEvent {
  jobId: number;
  event: EventName;
  workerId: string | null;
  detail: string | null;
  at: number;
}

/** The NOTIFY channel of a queue. */
export function channelOf(queueId: string): string {
  return `spoolctl_${queueId}`;
}

/** What a write transaction still has to write before COMMIT. */
export class TxEffects {
  events: PendingEvent[] = [];
  /** Whether waiting processes should be woken at commit (a job inserted, requeued, finished; events appended). */
  notify = false;

  constructor(private readonly channel: string | null) {}

  append(e: PendingEvent): void {
    this.events.push(e);
    this.notify = true;
  }

  /** Writes the buffered events (ids from the counter) and the notification; empties the buffer. */
  async flush(tx: SQL): Promise<void> {
    const events = this.events;
    const notify = this.notify && this.channel !== null;
    this.events = [];
    this.notify = false;
    if (events.length > 0) {
      const n = events.length;
      await tx`
        WITH ids AS (UPDATE event_ids SET last_id = last_id + ${n}::int RETURNING last_id - ${n}::int AS base),
        inserted AS (
          INSERT INTO job_events (id, job_id, at, event, worker_id, detail)
          SELECT ids.base + e.ord, e.job_id, e.at, e.event, e.worker_id, e.detail
          FROM ids, unnest(${events.map((e) => e.jobId)}::bigint[], ${events.map((e) => e.at)}::float8[],
                           ${events.map((e) => e.event)}::text[], ${events.map((e) => e.workerId)}::text[],
                           ${events.map((e) => e.detail)}::text[])
               WITH ORDINALITY AS e(job_id, at, event, worker_id, detail, ord)
          RETURNING 1)
        SELECT count(*)::int AS n, CASE WHEN ${notify} THEN pg_notify(${this.channel ?? ""}, '') END AS notified FROM inserted`;
    } else if (notify) {
      await tx`SELECT pg_notify(${this.channel}, '')`;
    }
  }
}
