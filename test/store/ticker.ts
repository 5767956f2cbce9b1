/**
 * A ticker for the race of the due-slot pass: opens the queue, waits at the barrier, then
 * runs `--passes` passes (src/ops/schedules.ts tickSchedules, as a worker's loop does),
 * each retried while the queue is locked.
 *
 *   bun test/store/ticker.ts DB_PATH SPOOL_DIR --barrier DIR --id N [--passes K]
 *
 * Prints `{ id, fired }`: the job ids its passes added.
 */
import { tickSchedules } from "../../src/store/verbs/schedules.ts";
import { barrier, childArgs, isLocked, openFromArgs, runChild } from "./child-support.ts";

runChild(async () => {
  const { location, values, id, barrierDir } = childArgs({ passes: { type: "string" } });
  const passes = Number(values.passes ?? "1");
  const store = await openFromArgs(location);
  await barrier(barrierDir, id);
  const fired: number[] = [];
  for (let i = 0; i < passes; i++) {
    for (let locked = 0; ; locked++) {
      try {
        const { outcomes } = await tickSchedules(store);
        for (const o of outcomes) if (o.job_id !== null) fired.push(o.job_id);
        break;
      } catch (error) {
        if (!isLocked(error) || locked >= 20) throw error;
      }
    }
  }
  await store.close();
  return { id, fired };
});
