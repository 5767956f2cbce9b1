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
import type { Waker } from "../store.ts";

/** A waker on `channel` of `sql` (null: no channel yet, poll only). */
export function watchChannel(sql: SQL | null, channel: string | null): Waker {
  let pending: (() => void) | null = null;
  let dirty = false;
  let closed = false;
  let subscription: { unlisten(): Promise<void> } | null = null;
  const fire = () => {
    if (pending) {
      const resolve = pending;
      pending = null;
      resolve();
    } else dirty = true;
  };
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
          if (closed) void sub.unlisten().catch(() => {});
          else subscription = sub;
        },
        () => {}, // no LISTEN (connection refused, closed client): the poll remains
      );
  }
  return {
    wait(ms) {
      if (dirty || closed) {
        dirty = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          pending = null;
          resolve();
        }, ms);
        pending = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    },
    poke: fire,
    close() {
      closed = true;
      const sub = subscription;
      subscription = null;
      if (sub) void sub.unlisten().catch(() => {});
      fire();
    },
  };
}
