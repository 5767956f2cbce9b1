/**
 * The ledger and the wake-up, written at the end of a write transaction.
 *
 * Event ids in commit order. `events --since-id N` pages by id, so a row that
 * commits after a reader passed its id would be skipped for ever. A sequence
 * hands out ids in call order, not commit order: a transaction that took id 7
 * may commit after another that took 8. So ids come from a one-row counter
 * table (`event_ids`) instead, and are taken at COMMIT: rows are inserted with
 * a negative placeholder id, and a deferred constraint trigger
 * (`job_events_number`, schema-steps.ts v11 and v17) bumps the counter once and numbers the
 * transaction's rows in insertion order, reading only their index range, while the server commits. The counter's row lock is held
 * from there to the end of the commit, so the next transaction numbering
 * events waits for this one to commit (PostgreSQL makes a transaction visible
 * before it releases its locks) and reads the counter it left. Ids are thus
 * dense and increasing in commit order, and a reader that sees id N sees every
 * id below N. Only transactions that append events pay the wait, and for no
 * longer than the server's own commit: never across a round trip to a client
 * (a busy or paused client cannot stall the others). Chosen over an advisory
 * lock plus a sequence: no lock key shared with other applications, and no
 * gaps. NOTIFY serialises notifying commits the same way anyway.
 *
 * appendEvent() only buffers; the buffer is written by one multi-row INSERT as
 * the transaction's last statement. A read of the ledger inside a write
 * transaction writes the buffer first and numbers it at once (SET CONSTRAINTS
 * … IMMEDIATE: the lock is then held from there to COMMIT), so the transaction
 * sees its own events with their final ids.
 *
 * The same statement calls pg_notify on the queue's channel, delivered to
 * listeners at commit (see listen.ts).
 */
import type { SQL } from "bun";
import type { EventName } from "../../model/job.ts";
import { WorkSignals } from "../wake-signal.ts";

/** One buffered ledger row. */
export interface PendingEvent {
  jobId: number;
  event: EventName;
  workerId: string | null;
  detail: string | null;
  at: number;
}

/** The NOTIFY channel of a queue, for readers: any write that appends events or changes jobs. */
export function channelOf(queueId: string): string {
  return `spoolctl_${queueId}`;
}

/**
 * The NOTIFY channel of a queue's workers, from the readers' {@link channelOf} (docs/architecture.md "Waking"):
 * only writes that make work available, payload `ready:<lane>`,
 * `freed:<lane>` or `all` (see {@link WorkSignals}).
 */
export function workChannelOf(channel: string): string {
  return `${channel}_work`;
}

/** The payloads of what a transaction made available. */
function workPayloads(work: WorkSignals): string[] {
  if (work.all) return ["all"];
  return [...[...work.ready].map((l) => `ready:${l}`), ...[...work.freed].map((l) => `freed:${l}`)];
}

/** What a write transaction still has to write before COMMIT. */
export class TxEffects {
  events: PendingEvent[] = [];
  /** Whether waiting readers should be woken at commit (a job inserted, requeued, finished; events appended). */
  notify = false;
  /** What this transaction made available to workers, sent on the work channel at commit. */
  readonly work = new WorkSignals();
  private numberedNow = false;

  /** `channel`: the readers' channel (null: a read transaction, which notifies nobody); the work channel is derived from it. */
  constructor(private readonly channel: string | null) {}

  /** The readers' and the workers' channels (null: a read transaction), for a statement that sends its own NOTIFY. */
  get channels(): { readers: string; work: string } | null {
    return this.channel === null ? null : { readers: this.channel, work: workChannelOf(this.channel) };
  }

  append(e: PendingEvent): void {
    this.events.push(e);
    this.notify = true;
  }

  /** Writes the buffered events (numbered at COMMIT) and the notification; empties the buffer. */
  async flush(tx: SQL): Promise<void> {
    const events = this.events;
    const notify = this.notify && this.channel !== null;
    const work = this.channel === null ? [] : workPayloads(this.work);
    const workChannel = workChannelOf(this.channel ?? "");
    this.events = [];
    this.notify = false;
    this.work.clear();
    if (events.length > 0) {
      await tx`
        WITH inserted AS (
          INSERT INTO job_events (job_id, at, event, worker_id, detail)
          SELECT e.job_id, e.at, e.event, e.worker_id, e.detail
          FROM unnest(${events.map((e) => e.jobId)}::bigint[], ${events.map((e) => e.at)}::float8[],
                      ${events.map((e) => e.event)}::text[], ${events.map((e) => e.workerId)}::text[],
                      ${events.map((e) => e.detail)}::text[])
               WITH ORDINALITY AS e(job_id, at, event, worker_id, detail, ord)
          ORDER BY e.ord
          RETURNING 1)
        SELECT count(*)::int AS n, CASE WHEN ${notify} THEN pg_notify(${this.channel ?? ""}, '') END AS notified,
          (SELECT count(pg_notify(${workChannel}, p)) FROM unnest(${work}::text[]) AS p)::int AS woken
        FROM inserted`;
    } else if (notify || work.length > 0) {
      await tx`SELECT CASE WHEN ${notify} THEN pg_notify(${this.channel}, '') END AS notified,
        (SELECT count(pg_notify(${workChannel}, p)) FROM unnest(${work}::text[]) AS p)::int AS woken`;
    }
  }

  /**
   * Before the transaction reads the ledger: writes the buffer and gives its
   * rows their final ids now (the counter lock is then held until COMMIT).
   */
  async settle(tx: SQL): Promise<void> {
    const had = this.events.length > 0;
    await this.flush(tx);
    if (had && !this.numberedNow) {
      this.numberedNow = true;
      await tx`SET CONSTRAINTS job_events_number IMMEDIATE`;
    }
  }
}
