/**
 * A lock holder for the claim-dating case: opens the queue, waits at the
 * barrier, then holds a write transaction that has read (PostgreSQL: locked
 * FOR UPDATE) job JOB for MS milliseconds; the file HELD appears once the lock
 * is held. SQLite's write transaction holds the whole database. With
 * `--rerun` it also reruns JOB in that transaction (dead → queued, the row
 * locked until it commits): the bulk cases' job that leaves dead meanwhile.
 *
 *   bun test/store/locker.ts DB_PATH SPOOL_DIR --barrier DIR --id N --job JOB --ms MS --held FILE [--rerun]
 *
 * Prints `{ id, held_ms }`.
 */
import { writeFileSync } from "node:fs";
import { barrier, childArgs, openFromArgs, runChild } from "./child-support.ts";

runChild(async () => {
  const { location, values, id, barrierDir } = childArgs({
    job: { type: "string" },
    ms: { type: "string" },
    held: { type: "string" },
    rerun: { type: "boolean" },
  });
  const [job, ms, held] = [Number(values.job), Number(values.ms), values.held as string];
  const store = await openFromArgs(location);
  await barrier(barrierDir, id);
  const t0 = performance.now();
  await store.write(async (tx) => {
    await tx.getJob(job);
    if (values.rerun) await tx.rerunJob(job, store.now(), store.now());
    writeFileSync(held, "");
    await Bun.sleep(ms);
  });
  const heldMs = performance.now() - t0;
  await store.close();
  return { id, held_ms: heldMs };
});
