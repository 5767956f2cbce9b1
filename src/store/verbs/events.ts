/**
 * `events` (docs/architecture.md "The operations", "Reads"; docs/contract.md
 * "Paging: meta.pagination"): pages of the append-only ledger after a cursor.
 * The ledger id is the cursor.
 */
import type { JobEvent } from "../../model/job.ts";
import type { Store } from "../store.ts";

/** Which ledger rows. */
export interface EventsQuery {
  /** Only rows with a larger id. */
  sinceId: number;
  /** Only this job's rows (resolved id). */
  jobId?: number;
  /** Only rows of this batch's jobs (`events --batch`). */
  batch?: string;
  limit: number;
}

/** One page, with the cursor for the next. */
export interface EventsPage {
  count: number;
  events: JobEvent[];
  /** `cursor`: pass it as `--since-id` to continue (a page of `limit` rows may have more); `first_id`: the first row's id, or null. */
  pagination: { cursor: number; first_id: number | null };
}

/**
 * The ledger rows after `q.sinceId` that `q` selects, oldest first, at most
 * `q.limit`, with the cursor of the next page (`q.sinceId` when empty). One
 * read snapshot, one statement: no guard, no event, no wake.
 */
export async function eventsPage(store: Pick<Store, "read">, q: EventsQuery): Promise<EventsPage> {
  const events = await store.read((tx) =>
    tx.listEvents({ afterId: q.sinceId, jobId: q.jobId, batch: q.batch, limit: q.limit }),
  );
  return {
    count: events.length,
    events,
    pagination: { cursor: events.at(-1)?.id ?? q.sinceId, first_id: events[0]?.id ?? null },
  };
}
