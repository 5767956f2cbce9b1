/**
 * A ledger writer for the commit-order race: opens the queue, adds one job of
 * its own, waits at the barrier, then runs `--writes N` write transactions,
 * each appending 1-3 events to its job. Every other transaction reads its
 * events back inside the transaction (on PostgreSQL that numbers them early:
 * the counter's row lock is then held across a pause, the widest window for a
 * commit-order inversion); the others pause with their events still unwritten.
 * Pauses come from a seeded generator (`--seed S`), so a run can be repeated.
 *
 *   bun test/store/event-writer.ts DB_PATH SPOOL_DIR --barrier DIR --id N --writes N --seed S
 *
 * Prints `{ id, ids, written }`: the ids read inside transactions, and how many
 * events it wrote.
 */
import { barrier, childArgs, isLocked, openFromArgs, runChild } from "./child-support.ts";

runChild(async () => {
  const { location, values, id, barrierDir } = childArgs({ writes: { type: "string" }, seed: { type: "string" } });
  const writes = Number(values.writes ?? 0);
  let seed = Number(values.seed ?? 1);
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const store = await openFromArgs(location);
  const job = await store.write(async (tx) =>
    tx.insertJob(
      {
        argv: ["true"],
        priority: 0,
        queue: "events",
        next_run_at: 0,
        timeout_seconds: 1,
        max_retries: 0,
        max_crashes: null,
        idempotency_key: null,
        tags: {},
        note: null,
        cwd: null,
        env: {},
      },
      store.now(),
    ),
  );
  await barrier(barrierDir, id);
  const ids: number[] = [];
  let written = 0;
  let locked = 0;
  for (let i = 0; i < writes; i++) {
    const count = 1 + Math.floor(random() * 3);
    const pause = random() * 8;
    const readInside = i % 2 === 0;
    for (;;) {
      try {
        const got = await store.write(async (tx) => {
          for (let k = 0; k < count; k++)
            await tx.appendEvent(job.id, "added", `writer-${id}`, `${i}.${k}`, store.now());
          if (!readInside) {
            await Bun.sleep(pause); // the widening window: the transaction stays open
            return [];
          }
          const mine = (await tx.eventsOf(job.id)).filter((e) => e.detail?.startsWith(`${i}.`));
          await Bun.sleep(pause);
          return mine.map((e) => e.id);
        });
        ids.push(...got);
        written += count;
        break;
      } catch (error) {
        // A write that waited out its lock was rolled back whole: run it again.
        if (!isLocked(error) || ++locked > 20) throw error;
      }
    }
  }
  await store.close();
  return { id, ids, written };
});
