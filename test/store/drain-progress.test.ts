/**
 * The `drainProgress` verb (src/store/verbs/lane-reads.ts): the `left` of a
 * drain's progress line is what holds the drain, counted as the worker's exit
 * counts it (`drainLeft` over each lane's `drainState`, docs/architecture.md
 * "Drain"), on both drivers.
 */
import { expect, test } from "bun:test";
import { drainSettled } from "../../src/store/reader.ts";
import { drainProgress } from "../../src/store/verbs/lane-reads.ts";
import { claimOne, forceRetried, forEachDriver, insertJob } from "../support/store.ts";

forEachDriver("drainProgress", (q) => {
  test("a user-delayed job is not left; a forced retry's hold-off is, until the drain may end", async () => {
    const now = q.store.now();
    expect(await drainProgress(q.store, ["default"])).toEqual({ left: 0, running: 0, paused: [] });
    // Delayed by the user, never ran: the drain does not wait for it, so neither does the line.
    await insertJob(q.store, { next_run_at: now + 3600 });
    expect(await drainProgress(q.store, ["default"])).toEqual({ left: 0, running: 0, paused: [] });
    const job = await insertJob(q.store);
    await claimOne(q.store, { workerId: "w1", now });
    expect(await drainProgress(q.store, ["default"])).toEqual({ left: 1, running: 1, paused: [] });
    // retry --force of the running job: requeued, due after a hold-off; the drain waits, and the line says so.
    expect(await forceRetried(q.store, job.id, now, now + 30)).toBe(true);
    const state = await q.store.read(async (tx) => tx.drainState("default", now));
    expect(drainSettled(state)).toBe(false);
    expect(await drainProgress(q.store, ["default"])).toEqual({ left: 1, running: 0, paused: [] });
    expect(await drainProgress(q.store, "all")).toEqual({ left: 1, running: 0, paused: [] });
  });

  test("a paused lane's queued jobs are not left (the drain does not wait for them); the lane is named", async () => {
    const now = q.store.now();
    await insertJob(q.store, { queue: "held" });
    await insertJob(q.store, { queue: "open" });
    expect(await drainProgress(q.store, ["held", "open"])).toEqual({ left: 2, running: 0, paused: [] });
    await q.store.write(async (tx) => tx.pauseLane("held", now, null, "maintenance"));
    const state = await q.store.read(async (tx) => tx.drainState("held", now));
    expect(drainSettled(state, true)).toBe(true);
    expect(await drainProgress(q.store, ["held", "open"])).toEqual({ left: 1, running: 0, paused: ["held"] });
    expect(await drainProgress(q.store, ["open"])).toEqual({ left: 1, running: 0, paused: [] });
    expect(await drainProgress(q.store, "all")).toEqual({ left: 1, running: 0, paused: ["held"] });
  });
});
