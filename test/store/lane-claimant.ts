/**
 * A claimant for the pause race (pause-lane.test.ts): opens the queue, waits
 * at the barrier, then claims one job of its lane at a time, and records each
 * one done, until the parent writes `stop` in the barrier folder. Every 5 tries
 * it writes how many claims it has tried to `tries-<id>`, so that the parent
 * can wait for claims sent after a pause without sleeping.
 *
 *   bun test/store/lane-claimant.ts DB_PATH SPOOL_DIR --barrier DIR --id N [--queue Q]
 *
 * Prints `{ id, claimed: [job ids], tries, locked }`.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { barrier, childArgs, isLocked, openFromArgs, runChild } from "./child-support.ts";

/** How long a claimant runs at most (ms). */
const RUN_TIMEOUT_MS = 60_000;

runChild(async () => {
  const { location, values, id, barrierDir } = childArgs({ queue: { type: "string" } });
  if (!barrierDir) throw new Error("--barrier is required");
  const queue = (values.queue as string | undefined) ?? "default";
  const workerId = `lane-claimant-${id}`;
  const store = await openFromArgs(location);
  await barrier(barrierDir, id);
  const claimed: number[] = [];
  let tries = 0;
  let locked = 0;
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  while (!existsSync(join(barrierDir, "stop"))) {
    if (Date.now() > deadline) throw new Error(`no stop signal within ${RUN_TIMEOUT_MS} ms`);
    tries++;
    if (tries % 5 === 0) writeFileSync(join(barrierDir, `tries-${id}`), String(tries));
    try {
      const got = await store.claimJobs({ queue, workerId, workerPid: process.pid, slots: null, limit: 1 });
      for (const { job, attempt } of got) {
        claimed.push(job.id);
        const now = store.now();
        await store.write(async (tx) =>
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
        );
      }
      if (got.length === 0) await Bun.sleep(1);
    } catch (error) {
      if (!isLocked(error)) throw error;
      locked++;
    }
  }
  await store.close();
  return { id, claimed, tries, locked };
});
