/**
 * An opener for the migration race: waits at the barrier first, then opens
 * (creating and migrating) each fresh queue it is given, in order, so that
 * every child opens each fresh queue at about the same moment. Several queues
 * per run make the race happen many times for one process start; with
 * `--parties P` the P children meet again before each queue, so no child runs
 * ahead to a queue the others have not reached.
 *
 *   bun test/store/opener.ts DB_PATH SPOOL_DIR [DB_PATH SPOOL_DIR …] --barrier DIR --id N [--parties P]
 *
 * After each open it writes a setting `opened_by_<id>` (the migrated schema is
 * usable from this process). A failed open is reported and the next queue is
 * tried. Prints `{ id, opened: [{ queueId, exists, driver } | { error }] }`, one
 * entry per queue.
 */
import { barrier, childArgs, openFromArgs, rendezvous, runChild } from "./child-support.ts";

type Opened = { queueId: string; exists: boolean; driver: string } | { error: string };

runChild(async () => {
  const { locations, values, id, barrierDir } = childArgs({ parties: { type: "string" } });
  const parties = values.parties === undefined ? 0 : Number(values.parties);
  // The barrier comes before the opens here: the opens themselves are what races.
  await barrier(barrierDir, id);
  const opened: Opened[] = [];
  for (const [round, location] of locations.entries()) {
    if (parties > 0) await rendezvous(barrierDir, round, id, parties);
    const started = performance.now();
    try {
      const store = await openFromArgs(location);
      opened.push({ queueId: store.queueId, exists: store.exists, driver: store.driver });
      await store.write(async (tx) => tx.setSetting(`opened_by_${id}`, JSON.stringify(process.pid)));
      await store.close();
    } catch (error) {
      const e = error as { code?: unknown; message?: unknown };
      opened.push({
        error: `${String(e.code ?? "")} after ${Math.round(performance.now() - started)} ms: ${String(e.message ?? error)}`,
      });
    }
  }
  return { id, opened };
});
