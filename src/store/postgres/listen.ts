/**
 * The PostgreSQL driver's wake-up source: LISTEN on the queue's channel
 * (events.ts sends `pg_notify` with every commit that inserts, requeues or
 * finishes a job or appends events; PostgreSQL delivers it at commit). Bun's
 * client (1.4.5) receives notifications: `sql.listen()` opens one dedicated
 * connection per client, shared by every registration, and after losing it
 * reconnects with backoff and subscribes again. Notifications sent before the
 * subscription (the first one, or again after a reconnect) are not heard, so
 * each subscription wakes the waiter once (it reads again), and the
 * caller's poll (`wait(ms)` resolves after `ms` anyway) stays the fallback,
 * also when LISTEN fails altogether.
 */
import type { SQL } from "bun";
import type { Waker, WorkWaker } from "../store.ts";
import { WakeSignal, workWaker } from "../wake-signal.ts";

/** Shortest time between two "no instant wake-ups" lines, milliseconds. */
const LISTEN_WARNING_EVERY_MS = 30_000;
let listenWarnedAt = -Infinity;
const bunWarn = console.warn.bind(console);
// Bun's client says `bun:sql LISTEN "<channel>" failed, retrying: …` with console.warn when it cannot
// subscribe again after a reconnect: a raw line naming an internal channel. Said our way instead, at
// most every 30 s; the poll covers the gap and Bun keeps retrying.
console.warn = (...args: unknown[]) => {
  const [first] = args;
  if (typeof first !== "string" || !first.startsWith("bun:sql LISTEN ")) return bunWarn(...args);
  if (performance.now() - listenWarnedAt < LISTEN_WARNING_EVERY_MS) return;
  listenWarnedAt = performance.now();
  const reason = first.slice(first.indexOf("retrying: ") + "retrying: ".length);
  process.stderr.write(
    `spoolctl: no instant wake-ups while the database connection is down (${reason}); polling until it is back\n`,
  );
};

/** A waker on `channel` of `sql` (null: no channel yet, poll only). */
export function watchChannel(sql: SQL | null, channel: string | null): Waker {
  const signal = new WakeSignal();
  const fire = signal.fire;
  let subscription: { unlisten(): Promise<void> } | null = null;
  if (sql && channel) {
    sql
      .listen(
        channel,
        () => fire(),
        // Subscribed (first time, or again after a reconnect): a commit may have come before, unheard.
        () => fire(),
      )
      .then(
        (sub) => {
          if (signal.closed) void sub.unlisten().catch(() => {});
          else subscription = sub;
        },
        () => {}, // no LISTEN (connection refused, closed client): the poll remains
      );
  }
  return {
    wait: (ms) => signal.wait(ms),
    poke: fire,
    close() {
      signal.closed = true;
      const sub = subscription;
      subscription = null;
      if (sub) void sub.unlisten().catch(() => {});
      fire();
    },
  };
}

/**
 * A worker's waker for `lane` (or each of several) on the queue's work channel (events.ts
 * `workChannelOf`): payload `ready:<lane>` and `all` wake it, `freed:<lane>`
 * wakes a wait that asks for it (ignored altogether unless `wantsFreed`);
 * other lanes' payloads are ignored without a read. Each subscription wakes it once, as in {@link watchChannel}.
 *
 * It LISTENs only while the worker is hungry (a wait with room for a job): PostgreSQL
 * signals every listening backend of the database at each notifying commit, and each
 * then reads the notification queue in a transaction of its own, so listening busy
 * workers multiply the server's work per job by their number. A busy worker unlistens;
 * the next hungry wait listens again, and that subscription's wake makes the worker
 * claim once more, so a job added meanwhile is not missed (the poll stays the bound).
 */
export function watchWorkChannel(
  sql: SQL,
  channel: string,
  lane: string | readonly string[],
  wantsFreed: boolean,
): WorkWaker {
  const signal = new WakeSignal();
  const lanes = typeof lane === "string" ? [lane] : lane;
  const ready = new Set(lanes.map((l) => `ready:${l}`));
  const freed = new Set(lanes.map((l) => `freed:${l}`));
  let subscription: { unlisten(): Promise<void> } | null = null;
  let subscribing = false;
  let wanted = true;
  const subscribe = (): void => {
    if (subscribing || subscription || signal.closed) return;
    subscribing = true;
    sql
      .listen(
        channel,
        (payload) => {
          if (payload === "all") signal.fireStop();
          else if (ready.has(payload)) signal.fire();
          else if (wantsFreed && freed.has(payload)) signal.fire("freed");
        },
        () => signal.fire(),
      )
      .then(
        (sub) => {
          subscribing = false;
          if (signal.closed || !wanted) void sub.unlisten().catch(() => {});
          else subscription = sub;
        },
        () => {
          subscribing = false; // no LISTEN: the poll remains
        },
      );
  };
  const unsubscribe = (): void => {
    const sub = subscription;
    subscription = null;
    if (sub) void sub.unlisten().catch(() => {});
  };
  subscribe();
  const waker = workWaker(signal, unsubscribe);
  return {
    ...waker,
    wait(ms, freedToo, hungry = true) {
      wanted = hungry;
      if (hungry) subscribe();
      else unsubscribe();
      return waker.wait(ms, freedToo);
    },
  };
}
