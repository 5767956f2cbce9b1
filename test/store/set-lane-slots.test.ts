/**
 * setLaneSlots / listLanes (docs/architecture.md "Lanes and slots"): a lane's
 * own slot ceiling is read by every claim and wins over the claimant's
 * `slots`, whichever way it disagrees; cleared, the claimant's applies again.
 */
import { expect, test } from "bun:test";
import type { Store } from "../../src/store/store.ts";
import { attemptRecord, claim, forEachDriver, insertJobs } from "../support/store.ts";

const setSlots = (store: Store, queue: string, slots: number | null) =>
  store.write(async (tx) => tx.setLaneSlots(queue, slots));
const running = (store: Store, queue: string) => store.read(async (tx) => (await tx.drainState(queue, 0)).running);

forEachDriver("setLaneSlots", (q) => {
  test("the lane's slots win over a claimant without slots, with more, and with fewer", async () => {
    await insertJobs(
      q.store,
      Array.from({ length: 8 }, () => ({ queue: "builds" })),
    );
    expect(await setSlots(q.store, "builds", 2)).toMatchObject({ queue: "builds", slots: 2, paused_at: null });
    expect(await claim(q.store, { queue: "builds", limit: 5 })).toHaveLength(2);
    expect(await claim(q.store, { queue: "builds", limit: 5, slots: 6 })).toEqual([]);
    expect(await running(q.store, "builds")).toBe(2);
    // Raised: a claimant that asks for 1 slot still gets the lane's 4.
    await setSlots(q.store, "builds", 4);
    expect(await claim(q.store, { queue: "builds", limit: 5, slots: 1 })).toHaveLength(2);
    expect(await running(q.store, "builds")).toBe(4);
    // Cleared: the claimant's own ceiling applies again, and none at all without one.
    await setSlots(q.store, "builds", null);
    expect(await claim(q.store, { queue: "builds", limit: 5, slots: 4 })).toEqual([]);
    expect(await claim(q.store, { queue: "builds", limit: 5 })).toHaveLength(4);
  });

  test("a result's claim (writeAndClaim) keeps to the lane's slots", async () => {
    await insertJobs(q.store, [{ queue: "builds" }, { queue: "builds" }, { queue: "builds" }]);
    await setSlots(q.store, "builds", 2);
    const [a, b] = await claim(q.store, { queue: "builds", limit: 5 });
    expect(b).toBeDefined();
    await setSlots(q.store, "builds", 1);
    // One job ends: 1 running, at the lowered ceiling of 1, so its result claims nothing.
    const req = { queue: "builds", workerId: "w1", workerPid: 4242, slots: null, limit: 1 };
    const first = await q.store.writeAndClaim(
      async (tx) => tx.recordAttempt(attemptRecord(a!.job.id, 1, "w1", q.store.now())),
      req,
    );
    expect(first.result).toBe(true);
    expect(first.claimed ?? []).toEqual([]);
    expect(await claim(q.store, { queue: "builds" })).toEqual([]);
    // The second ends: its result's claim takes the last job.
    const second = await q.store.writeAndClaim(
      async (tx) => tx.recordAttempt(attemptRecord(b!.job.id, 1, "w1", q.store.now())),
      req,
    );
    const next = second.claimed ?? (await claim(q.store, { queue: "builds" }));
    expect(next).toHaveLength(1);
  });

  test("listLanes lists each lane's slots and pause", async () => {
    await setSlots(q.store, "b", 3);
    await q.store.write(async (tx) => tx.pauseLane("a", q.store.now(), null, "why"));
    const lanes = await q.store.read(async (tx) => tx.listLanes());
    const byName = Object.fromEntries(lanes.map((l) => [l.queue, l]));
    expect(byName.a).toMatchObject({ slots: null, pause_reason: "why", paused_until: null });
    expect(byName.b).toMatchObject({ slots: 3, paused_at: null });
  });
});
