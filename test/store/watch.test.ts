/**
 * Store.watch: a waker that resolves soon after another connection commits,
 * when poked, or after its timeout. Every wait here is bounded by a deadline
 * far longer than the wake should take; none measures speed.
 */
import { expect, test } from "bun:test";
import { openQueue } from "../../src/store/index.ts";
import { forEachDriver, insertJob, pollUntil } from "./support.ts";

/** Resolves with `value`, or fails after `ms`. */
function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: Timer | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

forEachDriver("watch (waker)", (q) => {
  test("wait resolves after its timeout when nothing happens", async () => {
    const waker = q.store.watch();
    try {
      await within(20_000, "wait(50)", waker.wait(50));
    } finally {
      waker.close();
    }
  });

  test("poke wakes a pending wait", async () => {
    const waker = q.store.watch();
    try {
      const pending = waker.wait(600_000);
      waker.poke();
      await within(20_000, "a poked wait", pending);
    } finally {
      waker.close();
    }
  });

  test("a commit by another connection wakes a waiting reader", async () => {
    const store = q.store;
    const other = await openQueue(q.location, { create: true });
    const waker = store.watch();
    try {
      let stop = false;
      let waits = 0;
      // The reader: waits (10 min at a time) until it sees the job, as `events --follow` does.
      const reader = (async () => {
        while (!stop) {
          if ((await store.read(async (tx) => tx.listJobs({ limit: 1 }))).length > 0) return;
          const waiting = waker.wait(600_000);
          waits++;
          await waiting;
        }
      })();
      // Commit only once the reader has found nothing and is waiting.
      await pollUntil("the reader to wait", () => waits > 0);
      await insertJob(other);
      try {
        await within(20_000, "the reader to wake on another connection's commit", reader);
      } finally {
        stop = true;
      }
    } finally {
      waker.close();
      await other.close();
    }
  });

  test("close ends the waker: a pending wait resolves", async () => {
    const waker = q.store.watch();
    const pending = waker.wait(600_000);
    waker.close();
    await within(20_000, "a wait pending at close", pending);
    // And the store is unaffected.
    expect(await q.store.read(async (tx) => tx.listSettings())).toEqual({});
  });
});
