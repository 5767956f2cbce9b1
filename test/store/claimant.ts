/**
 * A claimant for the race cases: opens the queue, waits at the barrier, then
 * calls `store.claimJobs` in a loop until the lane has no due job left.
 *
 *   bun test/store/claimant.ts DB_PATH SPOOL_DIR --barrier DIR --id N
 *       [--queue Q] [--worker ID] [--limit N] [--slots N] [--hold-ms MS] [--record]
 *
 * After every successful claim it reads `runningInLane` in a fresh read and
 * keeps the largest value seen. With `--hold-ms` it holds the jobs that long;
 * with `--record` it then records each one done (recordAttempt). Prints
 * `{ id, workerId, pid, claimed: [job ids], maxRunningSeen, locked, recordRefused }`.
 */
import type { ClaimedJob } from "../../src/store/attempt-types.ts";
import type { Store } from "../../src/store/store.ts";
import { barrier, childArgs, isLocked, openFromArgs, runChild } from "./child-support.ts";

/** How long a claimant may take to empty its lane (ms). */
const RUN_TIMEOUT_MS = 60_000;

/** Runs `fn`, retrying while the driver reports LOCKED (counted in `stats.locked`). */
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

async function finish(
  store: Store,
  stats: { locked: number; recordRefused: number },
  workerId: string,
  got: ClaimedJob[],
): Promise<void> {
  for (const { job, attempt } of got) {
    const now = store.now();
    const written = await unlocked(stats, () =>
      store.write(async (tx) =>
        tx.recordAttempt({
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
        }),
      ),
    );
    if (!written) stats.recordRefused++;
  }
}

runChild(async () => {
  const { location, values, id, barrierDir } = childArgs({
    queue: { type: "string" },
    worker: { type: "string" },
    limit: { type: "string" },
    slots: { type: "string" },
    "hold-ms": { type: "string" },
    record: { type: "boolean" },
  });
  const queue = (values.queue as string | undefined) ?? "default";
  const workerId = (values.worker as string | undefined) ?? `claimant-${id}`;
  const limit = Number(values.limit ?? 1);
  const slots = values.slots === undefined ? null : Number(values.slots);
  const holdMs = Number(values["hold-ms"] ?? 0);
  const store = await openFromArgs(location);
  await barrier(barrierDir, id);

  const claimed: number[] = [];
  const stats = { locked: 0, recordRefused: 0 };
  let maxRunningSeen = 0;
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  for (;;) {
    if (Date.now() > deadline)
      throw new Error(`lane ${queue} still had due jobs after ${RUN_TIMEOUT_MS} ms (claimed ${claimed.length})`);
    const got = await unlocked(stats, () =>
      store.claimJobs({ queue, workerId, workerPid: process.pid, slots, limit, now: store.now() }),
    );
    if (got.length === 0) {
      // Without slots an empty claim means an empty lane; with slots it may mean "all slots taken".
      if (slots === null) break;
      const due = await unlocked(stats, () =>
        store.read(async (tx) => ((await tx.nextDueAt(queue)) ?? Number.POSITIVE_INFINITY) <= store.now()),
      );
      if (!due) break;
      await Bun.sleep(2);
      continue;
    }
    claimed.push(...got.map((c) => c.job.id));
    const running = await unlocked(stats, () => store.read(async (tx) => (await tx.drainState(queue, 0)).running));
    maxRunningSeen = Math.max(maxRunningSeen, running);
    if (holdMs > 0) await Bun.sleep(holdMs);
    if (values.record) await finish(store, stats, workerId, got);
  }
  await store.close();
  return {
    id,
    workerId,
    pid: process.pid,
    claimed,
    maxRunningSeen,
    locked: stats.locked,
    recordRefused: stats.recordRefused,
  };
});
