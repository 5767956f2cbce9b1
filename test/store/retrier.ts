/**
 * A retrier for the races of retry and rerun: opens the queue, waits at the
 * barrier, then retries job JOB through the `retry` operation (src/ops/retry.ts
 * retryJobs, one write transaction), or with `--rerun` reruns it through the
 * `rerun` operation (src/ops/rerun.ts, one write transaction).
 *
 *   bun test/store/retrier.ts DB_PATH SPOOL_DIR --barrier DIR --id N --job JOB [--rerun]
 *
 * Prints `{ id, job_id, outcome }`: `retried` (or `rerun`), or the error code
 * that refused it (`IDEMPOTENCY_CONFLICT`; `CONFLICT` for a rerun that found
 * the job queued already).
 */
import { rerunJob } from "../../src/store/verbs/rerun.ts";
import { retryJobs } from "../../src/store/verbs/retry.ts";
import { barrier, childArgs, isLocked, openFromArgs, runChild } from "./child-support.ts";

runChild(async () => {
  const { location, values, id, barrierDir } = childArgs({ job: { type: "string" }, rerun: { type: "boolean" } });
  const job = values.job as string | undefined;
  if (!job) throw new Error("--job is required");
  const rerun = values.rerun === true;
  const store = await openFromArgs(location);
  await barrier(barrierDir, id);
  for (let locked = 0; ; locked++) {
    try {
      if (rerun) await rerunJob(store, job);
      else await retryJobs(store, { refs: [job] }, { force: false });
      await store.close();
      return { id, job_id: Number(job), outcome: rerun ? "rerun" : "retried" };
    } catch (error) {
      if (isLocked(error) && locked < 20) continue;
      await store.close();
      const code = (error as { code?: string }).code;
      if (code === "IDEMPOTENCY_CONFLICT" || (rerun && code === "CONFLICT"))
        return { id, job_id: Number(job), outcome: code };
      throw error;
    }
  }
});
