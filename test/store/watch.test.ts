/**
 * Store.watch: a waker that resolves soon after another connection commits,
 * when poked, or after its timeout. Every wait here is bounded by a deadline
 * far longer than the wake should take; none measures speed.
 */
import { expect, test } from "bun:test";
import { openQueue } from "../../src/store/index.ts";
import { attemptRecord, claim, forEachDriver, insertJob, pollUntil, record } from "../support/store.ts";

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

forEachDriver("watchWork (a worker's waker)", (q) => {
  test("work signals: a job added or requeued wakes its lane, a job ending frees its lane, operators' retry and stop wake all; claims and heartbeats wake nobody", async () => {
    const observer = await q.driver.observeWork(q.store, q.location, ["a", "b"]);
    try {
      const store = q.store;
      const job = await insertJob(store, { queue: "b" }); // ready:b
      await claim(store, { queue: "b", workerId: "w1" }); // nothing
      await store.write(async (tx) => tx.heartbeatJobs("w1", [{ jobId: job.id, attemptNo: 1 }])); // nothing
      const now = store.now();
      // A failure with a retry backoff: the slot is freed and the job is work again.
      await record(
        store,
        attemptRecord(job.id, 1, "w1", now, {
          attemptState: "failed",
          exitCode: 1,
          error: "exit 1",
          failureReason: "process_exit",
          jobState: "queued",
          attempts: 1,
          nextRunAt: now - 1,
          events: [],
        }),
      );
      await claim(store, { queue: "b", workerId: "w1" }); // nothing
      await record(
        store,
        attemptRecord(job.id, 2, "w1", store.now(), {
          jobState: "dead",
          attemptState: "failed",
          exitCode: 1,
          failureReason: "process_exit",
          error: "exit 1",
          attempts: 2,
          events: [],
        }),
      ); // freed:b
      await store.write(async (tx) => tx.requeueJob(job.id, "dead", store.now())); // all
      await store.write(async (tx) => tx.requestWorkerStop(null)); // nothing: no worker is registered
      await insertJob(store, { queue: "a" }); // ready:a, the sentinel
      // Signals arrive in commit order, so once the sentinel's is seen every earlier one is.
      await pollUntil("the sentinel's signal", () => observer.seen.includes("ready:a"), 20_000);
      // (A medium may fold a repeated signal into one: SQLite's file events do.)
      expect([...new Set(observer.seen)]).toEqual(["ready:b", "freed:b", "all", "ready:a"]);
      expect(observer.seen.at(-1)).toBe("ready:a");
      expect(observer.seen.filter((s) => s === "all")).toHaveLength(1);
    } finally {
      await observer.close();
    }
  });

  test("a job added to its lane wakes a waiting worker on another connection; close ends a pending wait", async () => {
    const other = await openQueue(q.location, { create: true });
    const waker = q.store.watchWork("a");
    try {
      let stop = false;
      let waits = 0;
      const worker = (async () => {
        while (!stop) {
          if ((await q.store.read(async (tx) => tx.listJobs({ queue: "a", limit: 1 }))).length > 0) return;
          const waiting = waker.wait(600_000, false);
          waits++;
          await waiting;
        }
      })();
      await pollUntil("the worker to wait", () => waits > 0);
      await insertJob(other, { queue: "a" });
      try {
        await within(20_000, "the worker to wake on a job added to its lane", worker);
      } finally {
        stop = true;
      }
      const pending = waker.wait(600_000, true);
      waker.close();
      await within(20_000, "a wait pending at close", pending);
    } finally {
      waker.close();
      await other.close();
    }
  });
});

test("WakeSignal: a freed signal wakes only a wait that asks for it, and is kept for the next one that does", async () => {
  const { WakeSignal } = await import("../../src/store/wake-signal.ts");
  const signal = new WakeSignal();
  let woke = false;
  const busy = signal.wait(600_000, false).then(() => (woke = true));
  signal.fire("freed");
  await Bun.sleep(0);
  expect(woke).toBe(false); // a busy worker ignores a freed slot
  signal.fire(); // work in its lane wakes it
  await within(20_000, "a ready wake", busy);
  signal.fire("freed"); // nobody waits: kept
  await within(20_000, "a kept freed wake", signal.wait(600_000, true));
  signal.fire("freed");
  let again = false;
  const later = signal.wait(600_000, false).then(() => (again = true)); // not asked for: still pending
  await Bun.sleep(0);
  expect(again).toBe(false);
  signal.fire();
  await within(20_000, "a ready wake after an unwanted freed one", later);
});
