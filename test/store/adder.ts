/**
 * An adder for the idempotency race: opens the queue, waits at the barrier,
 * then adds `echo hi` with idempotency key KEY through the `add` operation
 * (src/store/verbs/add.ts addJobs, one write transaction).
 *
 *   bun test/store/adder.ts DB_PATH SPOOL_DIR --barrier DIR --id N --key KEY
 *
 * Prints `{ id, job_id, deduplicated, locked }`.
 */
import { validateAddInput } from "../../src/ops/job-spec.ts";
import { addJobs } from "../../src/store/verbs/add.ts";
import { barrier, childArgs, isLocked, openFromArgs, runChild } from "./child-support.ts";

runChild(async () => {
  const { location, values, id, barrierDir } = childArgs({ key: { type: "string" } });
  const key = values.key as string | undefined;
  if (!key) throw new Error("--key is required");
  const spec = validateAddInput({ argv: ["echo", "hi"], key }, (name) => `--${name}`, process.cwd());
  const store = await openFromArgs(location);
  await barrier(barrierDir, id);
  let locked = 0;
  for (;;) {
    try {
      const { jobs } = await addJobs(store, [spec]);
      await store.close();
      return { id, job_id: jobs[0]!.job_id, deduplicated: jobs[0]!.deduplicated, locked };
    } catch (error) {
      if (!isLocked(error) || locked > 20) throw error;
      locked++;
    }
  }
});
