/**
 * A retrier for the idempotency race of retry: opens the queue, waits at the
 * barrier, then retries job JOB through the `retry` operation (src/ops/retry.ts
 * retryJobs, one write transaction).
 *
 *   bun test/store/retrier.ts DB_PATH SPOOL_DIR --barrier DIR --id N --job JOB
 *
 * Prints `{ id, job_id, outcome }`: `retried`, or the error code that refused it.
 */
import { retryJobs } from "../../src/ops/retry.ts";
import { barrier, childArgs, isLocked, openFromArgs, runChild } from "./child-support.ts";

runChild(async () => {
  const { location, values, id, barrierDir } = childArgs({ job: { type: "string" } });
  const job = values.job as string | undefined;
  if (!job) throw new Error("--job is required");
  const store = await openFromArgs(location);
  await barrier(barrierDir, id);
  for (let locked = 0; ; locked++) {
    try {
      await retryJobs(store, { refs: [job] }, { force: false });
      await store.close();
      return { id, job_id: Number(job), outcome: "retried" };
    } catch (error) {
      if (isLocked(error) && locked < 20) continue;
      await store.close();
      const code = (error as { code?: string }).code;
      if (code === "IDEMPOTENCY_CONFLICT") return { id, job_id: Number(job), outcome: code };
      throw error;
    }
  }
});
