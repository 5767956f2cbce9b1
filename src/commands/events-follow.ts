/**
 * `events` (docs/contract.md "Paging: meta.pagination", "Long-poll: meta.wait"): pages of the append-only ledger after a cursor, a
 * long-poll that returns as soon as records exist (or at a deadline), and a
 * follow loop for streams, each look one `eventsPage` read (src/store/verbs/events.ts).
 * The ledger id is the cursor.
 */

import type { WaitMeta } from "../contract/envelope.ts";
import type { ControlFrame } from "../describe/schemas-operator.ts";
import type { JobEvent } from "../model/job.ts";
import { LIMITS } from "../model/limits.ts";
import type { SnapshotReader, Store, Waker } from "../store/store.ts";
import { type EventsPage, type EventsQuery, eventsPage } from "../store/verbs/events.ts";
import { resolveJobs } from "../store/verbs/jobs.ts";

export type { EventsPage, EventsQuery };

/** The default and bounds of `--limit`. */
export const EVENTS_LIMIT = LIMITS.list_limit;

/** Resolves `--job` to an id. Raises `NOT_FOUND`. */
export async function resolveEventsJob(store: SnapshotReader, ref: string | undefined): Promise<number | undefined> {
  return ref === undefined ? undefined : (await resolveJobs(store, [ref]))[0]!.id;
}

/**
 * Long-poll: returns the first non-empty page, or an empty one after
 * `timeoutSeconds`. Polls every `pollSeconds`.
 */
export async function waitForEvents(
  store: Pick<Store, "read" | "watch">,
  q: EventsQuery,
  timeoutSeconds: number,
  pollSeconds: number,
): Promise<{ page: EventsPage; wait: WaitMeta }> {
  const started = performance.now();
  const waker = store.watch();
  try {
    for (;;) {
      const page = await eventsPage(store, q);
      const waited = performance.now() - started;
      if (page.count > 0) return { page, wait: { reason: "records_available", waited_ms: Math.round(waited) } };
      if (waited >= timeoutSeconds * 1000) return { page, wait: { reason: "timeout", waited_ms: Math.round(waited) } };
      // A commit wakes us at once (the driver's wake-up); the poll is the fallback.
      await waker.wait(Math.max(1, Math.min(pollSeconds * 1000, timeoutSeconds * 1000 - waited)));
    }
  } finally {
    waker.close();
  }
}

/** Options of {@link followEvents}; times in seconds, null = no bound. */
export interface FollowOptions {
  maxEvents: number | null;
  idleSeconds: number | null;
  pollSeconds: number;
  /** Polled between batches: true ends the follow (a signal arrived). */
  shouldStop?: () => boolean;
}

/** Why a follow ended: the `reason` of its `end` control frame (a storage error ends it with an `error` frame). */
export type FollowEnd = Exclude<ControlFrame["control"]["reason"], "storage_error">;

/**
 * Streams ledger rows after `sinceId` to `emit`, oldest first, until
 * `maxEvents` rows were emitted, nothing arrived for `idleSeconds`, or
 * `shouldStop` says so. Without a bound it runs until the process is stopped.
 */
export async function followEvents(
  store: Pick<Store, "read" | "watch">,
  q: Omit<EventsQuery, "limit">,
  opts: FollowOptions,
  emit: (event: JobEvent) => void,
): Promise<FollowEnd> {
  const waker = store.watch();
  try {
    return await follow(store, waker, q, opts, emit);
  } finally {
    waker.close();
  }
}

async function follow(
  store: Pick<Store, "read">,
  waker: Waker,
  q: Omit<EventsQuery, "limit">,
  opts: FollowOptions,
  emit: (event: JobEvent) => void,
): Promise<FollowEnd> {
  let cursor = q.sinceId;
  let emitted = 0;
  let lastSeen = performance.now();
  for (;;) {
    if (opts.shouldStop?.()) return "signal";
    const room = opts.maxEvents === null ? 500 : Math.min(500, opts.maxEvents - emitted);
    const rows = (await eventsPage(store, { sinceId: cursor, jobId: q.jobId, batch: q.batch, limit: room })).events;
    for (const row of rows) {
      emit(row);
      cursor = row.id;
      emitted++;
    }
    if (opts.maxEvents !== null && emitted >= opts.maxEvents) return "max_events";
    const now = performance.now();
    if (rows.length > 0) lastSeen = now;
    else if (opts.idleSeconds !== null && now - lastSeen >= opts.idleSeconds * 1000) return "idle_timeout";
    if (rows.length < room) {
      const idleLeft = opts.idleSeconds === null ? Infinity : opts.idleSeconds * 1000 - (now - lastSeen);
      await waker.wait(Math.max(1, Math.min(opts.pollSeconds * 1000, idleLeft)));
    }
  }
}
