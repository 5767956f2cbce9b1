/**
 * Lane slots: a fleet-wide ceiling of running jobs per lane, counted inside the
 * claim transaction; and a race of 8 claimant processes against slots = 2.
 */
import { expect, test } from "bun:test";
import type { JobEvent } from "../../src/model/job.ts";
import type { Store } from "../../src/store/store.ts";
import { attemptRecord, claim, claimOne, forEachDriver, insertJobs, record, sorted } from "../support/store.ts";
import { childScript, raceChildren } from "./children.ts";

/** Every ledger row, oldest first, paged through listEvents. */
async function allEvents(store: Store): Promise<JobEvent[]> {
  const out: JobEvent[] = [];
  for (;;) {
    const page = await store.read(async (tx) => tx.listEvents({ afterId: out.at(-1)?.id ?? 0, limit: 100 }));
    if (page.length === 0) return out;
    out.push(...page);
  }
}

forEachDriver("slots", (q) => {
  test("no claim while the lane runs `slots` jobs, whichever workers run them", async () => {
    await insertJobs(q.store, [{}, {}, {}]);
    expect(await claim(q.store, { workerId: "w1", slots: 2 })).toHaveLength(1);
    expect(await claim(q.store, { workerId: "w2", slots: 2 })).toHaveLength(1);
    expect(await claim(q.store, { workerId: "w3", slots: 2 })).toEqual([]);
    expect(await claim(q.store, { workerId: "w1", slots: 2, limit: 5 })).toEqual([]);
    expect(await q.store.read(async (tx) => (await tx.drainState("default", 0)).running)).toBe(2);
    // A larger ceiling lets the third through.
    expect(await claim(q.store, { workerId: "w3", slots: 3 })).toHaveLength(1);
  });

  test("a claim of several jobs stops at the ceiling, and a finished job frees its slot", async () => {
    await insertJobs(q.store, [{}, {}, {}, {}, {}]);
    const first = await claim(q.store, { workerId: "w1", slots: 3, limit: 5 });
    expect(first).toHaveLength(3);
    expect(await claim(q.store, { workerId: "w2", slots: 3, limit: 5 })).toEqual([]);
    const done = first[0]!;
    expect(await record(q.store, attemptRecord(done.job.id, done.attempt.attempt_no, "w1", q.store.now()))).toBe(true);
    const next = await claim(q.store, { workerId: "w2", slots: 3, limit: 5 });
    expect(next).toHaveLength(1);
    expect(await q.store.read(async (tx) => (await tx.drainState("default", 0)).running)).toBe(3);
  });

  test("slots count the lane's own running jobs only", async () => {
    await insertJobs(q.store, [{ queue: "a" }, { queue: "a" }, { queue: "b" }, { queue: "b" }]);
    expect(await claim(q.store, { queue: "a", slots: 2, limit: 2 })).toHaveLength(2);
    expect(await claim(q.store, { queue: "b", slots: 1, limit: 2 })).toHaveLength(1);
    expect(await claim(q.store, { queue: "b", slots: 1 })).toEqual([]);
    expect(
      await q.store.read(async (tx) => [
        await (await tx.drainState("a", 0)).running,
        await (await tx.drainState("b", 0)).running,
      ]),
    ).toEqual([2, 1]);
  });

  test("slots null is no ceiling", async () => {
    await insertJobs(
      q.store,
      Array.from({ length: 6 }, () => ({})),
    );
    expect(await claim(q.store, { slots: null, limit: 6 })).toHaveLength(6);
  });

  test("a lane already over its ceiling (slots lowered) claims nothing", async () => {
    await insertJobs(q.store, [{}, {}, {}, {}]);
    await claimOne(q.store, { slots: null });
    await claimOne(q.store, { slots: null });
    await claimOne(q.store, { slots: null });
    expect(await claim(q.store, { slots: 2 })).toEqual([]);
    expect(await claim(q.store, { slots: 0 })).toEqual([]);
  });

  test("race: 8 claimant processes with slots = 2 on a lane of 40 jobs never run more than 2 at once", async () => {
    const lane = "builds";
    const jobs = await insertJobs(
      q.store,
      Array.from({ length: 40 }, () => ({ queue: lane })),
    );
    let observedMax = 0;
    let observations = 0;
    type Out = { workerId: string; claimed: number[]; maxRunningSeen: number; recordRefused: number };
    const results = await raceChildren<Out>(
      childScript("claimant.ts"),
      q.location,
      Array.from({ length: 8 }, (_, i) => [
        "--queue",
        lane,
        "--worker",
        `slot-${i}`,
        "--slots",
        "2",
        "--limit",
        String(1 + (i % 2)),
        "--hold-ms",
        "20",
        "--record",
      ]),
      {
        // An observer in this process, reading the lane while the children race.
        async duringRace(done) {
          while (!done()) {
            observedMax = Math.max(
              observedMax,
              await q.store.read(async (tx) => (await tx.drainState(lane, 0)).running),
            );
            observations++;
            await Bun.sleep(3);
          }
        },
      },
    );
    for (const r of results) {
      expect(r.maxRunningSeen).toBeLessThanOrEqual(2);
      expect(r.recordRefused).toBe(0);
    }
    expect(Math.max(...results.map((r) => r.maxRunningSeen))).toBeGreaterThanOrEqual(1);
    expect(observations).toBeGreaterThan(0);
    expect(observedMax).toBeLessThanOrEqual(2);
    const all = results.flatMap((r) => r.claimed);
    expect(all).toHaveLength(40);
    expect(sorted(all)).toEqual(jobs.map((j) => j.id));
    // From the driver: every job done once, and replaying the ledger in id order
    // (claimed +1, succeeded -1) never has more than 2 running.
    const done = await q.store.read(async (tx) => tx.listJobs({ queue: lane, states: ["done"], limit: 100 }));
    expect(done).toHaveLength(40);
    let running = 0;
    let maxRunning = 0;
    for (const e of await allEvents(q.store)) {
      if (e.event === "claimed") running++;
      if (e.event === "succeeded") running--;
      maxRunning = Math.max(maxRunning, running);
    }
    expect(running).toBe(0);
    expect(maxRunning).toBeGreaterThanOrEqual(1);
    expect(maxRunning).toBeLessThanOrEqual(2);
    expect(await q.store.read(async (tx) => tx.historyCounts(all))).toEqual({ attempts: 40, events: 80 });
  }, 120_000);
});
