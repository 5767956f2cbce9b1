/**
 * A claimant for the dependency race (needs.test.ts): opens the queue, waits
 * at the barrier, then claims one job at a time and records it done after a
 * short random hold, until every job of the queue is done.
 *
 *   bun test/store/needs-claimant.ts DB_PATH SPOOL_DIR --barrier DIR --id N --total N
 *
 * Prints `{ id, claimed: [job ids], locked }`.
 */
import type { Store } from "../../src/store/store.ts";
import { barrier, childArgs, isLocked, openFromArgs, runChild } from "./child-support.ts";

const RUN_TIMEOUT_MS = 90_000;

async function unlocked<T>(stats: { locked: number }, fn: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (!isLocked(error)) throw error;
      stats.locked++;
    }
  }
}

async function doneCount(store: Store): Promise<number> {
  const counts = await store.read(async (tx) => tx.countByStateAndLane());
  return counts.filter((c) => c.state === "done").reduce((n, c) => n + Number(c.n), 0);
}

runChild(async () => {
  const { location, values, id, barrierDir } = childArgs({ total: { type: "string" } });
  const total = Number(values.total);
  const workerId = `needs-claimant-${id}`;
  const store = await openFromArgs(location);
  await barrier(barrierDir, id);
  const claimed: number[] = [];
  const stats = { locked: 0 };
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  for (;;) {
    if (Date.now() > deadline) throw new Error(`not all ${total} jobs done after ${RUN_TIMEOUT_MS} ms`);
    const got = await unlocked(stats, () =>
      store.claimJobs({ queue: "default", workerId, workerPid: process.pid, slots: null, limit: 1 }),
    );
    if (got.length === 0) {
      if ((await unlocked(stats, () => doneCount(store))) >= total) break;
      await Bun.sleep(1);
      continue;
    }
    const { job, attempt } = got[0]!;
    claimed.push(job.id);
    await Bun.sleep(Math.random() * 3);
    await unlocked(stats, () =>
      store.write(async (tx) => {
        const now = store.now();
        return tx.recordAttempt({
          jobId: job.id,
          attemptNo: attempt.attempt_no,
          workerId,
          now,
          attemptState: "succeeded",
          exitCode: 0,
          signal: null,
          error: null,
          failureReason: null,
          jobState: "done",
          events: [{ event: "succeeded", workerId, detail: null }],
          attempts: 0,
          crashes: 0,
          nextRunAt: now,
        });
      }),
    );
  }
  await store.close();
  return { id, claimed, locked: stats.locked };
});
