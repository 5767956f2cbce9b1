/**
 * pauseLane / resumeLane (docs/architecture.md "Lanes and slots"): a paused
 * lane starts nothing, by the claim's own statement, on every driver; a pause
 * with an end lifts itself by the claim's time; a pause outlives the process
 * that wrote it; and 8 claimant processes racing a pause take no job once the
 * pause has committed (judged by the ledger, whose ids follow commit order).
 */

import { expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { JobEvent } from "../../src/model/job.ts";
import { openQueue } from "../../src/store/index.ts";
import type { Store } from "../../src/store/store.ts";
import {
  attemptRecord,
  claim,
  claimOne,
  forEachDriver,
  insertJob,
  insertJobs,
  pollUntil,
  record,
} from "../support/store.ts";
import { childScript, raceChildren } from "./children.ts";

/** Every ledger row, oldest first. */
async function allEvents(store: Store): Promise<JobEvent[]> {
  const out: JobEvent[] = [];
  for (;;) {
    const page = await store.read(async (tx) => tx.listEvents({ afterId: out.at(-1)?.id ?? 0, limit: 500 }));
    if (page.length === 0) return out;
    out.push(...page);
  }
}

const pause = (store: Store, queue: string, until: number | null = null, reason: string | null = null) =>
  store.write(async (tx) => tx.pauseLane(queue, store.now(), until, reason));
const resume = (store: Store, queue: string) => store.write(async (tx) => tx.resumeLane(queue, store.now()));

forEachDriver("pauseLane", (q) => {
  test("a paused lane claims nothing, with or without slots; other lanes go on; resume lets it claim again", async () => {
    await insertJobs(q.store, [{ queue: "builds" }, { queue: "builds" }, { queue: "other" }]);
    const row = await pause(q.store, "builds", null, "deploy freeze");
    expect(row).toMatchObject({ queue: "builds", paused_until: null, pause_reason: "deploy freeze", slots: null });
    expect(row.paused_at).toBeGreaterThan(0);
    expect(await claim(q.store, { queue: "builds", limit: 5 })).toEqual([]);
    expect(await claim(q.store, { queue: "builds", limit: 5, slots: 4 })).toEqual([]);
    expect(await claim(q.store, { queue: "other" })).toHaveLength(1);
    const was = await resume(q.store, "builds");
    expect(was).toMatchObject({ queue: "builds", pause_reason: "deploy freeze" });
    expect(await claim(q.store, { queue: "builds", limit: 5 })).toHaveLength(2);
    // Resuming a lane that is not paused says so (null) and changes nothing.
    expect(await resume(q.store, "builds")).toBeNull();
    expect(await resume(q.store, "never-seen")).toBeNull();
  });

  test("a result's claim (writeAndClaim) takes nothing from a paused lane", async () => {
    const [a] = await insertJobs(q.store, [{ queue: "builds" }, { queue: "builds" }]);
    const first = await claimOne(q.store, { queue: "builds" });
    expect(first.job.id).toBe(a!.id);
    await pause(q.store, "builds");
    const rec = attemptRecord(first.job.id, 1, "w1", q.store.now());
    const { result, claimed } = await q.store.writeAndClaim(async (tx) => tx.recordAttempt(rec), {
      queue: "builds",
      workerId: "w1",
      workerPid: 4242,
      slots: null,
      limit: 1,
    });
    // The running job finished and was recorded; nothing new started.
    expect(result).toBe(true);
    expect(claimed ?? []).toEqual([]);
  });

  test("a pause with an end lifts itself by the claim's time, with no process to end it", async () => {
    await insertJobs(q.store, [{ queue: "builds" }, { queue: "builds" }]);
    const now = q.store.now();
    await pause(q.store, "builds", now + 60);
    expect(await claim(q.store, { queue: "builds", now: now + 59 })).toEqual([]);
    // A claim dated after the end takes a job: the guard compares paused_until with the claim's time.
    expect(await claim(q.store, { queue: "builds", now: now + 61 })).toHaveLength(1);
    // And in real time: a 1-second pause ends by itself.
    await pause(q.store, "builds", q.store.now() + 1);
    expect(await claim(q.store, { queue: "builds" })).toEqual([]);
    await pollUntil(
      "the 1 s pause to end",
      async () => (await claim(q.store, { queue: "builds" })).length === 1,
      15_000,
      50,
    );
    // An ended pause reads as not paused: resume finds nothing to end.
    expect(await resume(q.store, "builds")).toBeNull();
  });

  test("a pause outlives the process: a store opened again still claims nothing", async () => {
    await insertJob(q.store, { queue: "builds" });
    await pause(q.store, "builds", null, "maintenance");
    const again = await openQueue(q.location, { create: true });
    try {
      expect(await claim(again, { queue: "builds" })).toEqual([]);
      const lanes = await again.read(async (tx) => tx.listLanes());
      expect(lanes.find((l) => l.queue === "builds")).toMatchObject({
        pause_reason: "maintenance",
        paused_until: null,
      });
      await resume(again, "builds");
      expect(await claim(again, { queue: "builds" })).toHaveLength(1);
    } finally {
      await again.close();
    }
  });

  test("running jobs of a paused lane finish and are recorded", async () => {
    await insertJob(q.store, { queue: "builds" });
    const got = await claimOne(q.store, { queue: "builds" });
    await pause(q.store, "builds");
    expect(await record(q.store, attemptRecord(got.job.id, 1, "w1", q.store.now()))).toBe(true);
    expect((await q.store.read(async (tx) => tx.getJob(got.job.id)))?.state).toBe("done");
  });

  test("race: 8 claimant processes take no job of the lane once the pause has committed", async () => {
    const lane = "builds";
    await insertJobs(
      q.store,
      Array.from({ length: 400 }, () => ({ queue: lane })),
    );
    // The pause commits with a ledger row (on a job of another lane): every claim committed after it has a later id.
    const marker = await insertJob(q.store, { queue: "marker" });
    let markerEvent = 0;
    let triesAtPause: number[] = [];
    const tries = (dir: string, n: number) =>
      Array.from({ length: n }, (_, i) => {
        const f = join(dir, `tries-${i}`);
        return existsSync(f) ? Number(readFileSync(f, "utf8") || 0) : 0;
      });
    type Out = { id: string; claimed: number[]; tries: number };
    const results = await raceChildren<Out>(
      childScript("lane-claimant.ts"),
      q.location,
      Array.from({ length: 8 }, () => ["--queue", lane]),
      {
        async duringRace(_done, barrierDir) {
          const running = async () =>
            (await q.store.read(async (tx) => tx.listJobs({ queue: lane, states: ["done", "running"], limit: 30 })))
              .length;
          await pollUntil("the claimants to take 20 jobs", async () => (await running()) >= 20, 60_000, 5);
          markerEvent = await q.store.write(async (tx) => {
            await tx.pauseLane(lane, q.store.now(), null, "race");
            await tx.appendEvent(marker.id, "added", null, "pause marker", q.store.now());
            return (await tx.eventsOf(marker.id)).length;
          });
          triesAtPause = tries(barrierDir, 8);
          // Every claimant has sent at least 10 more claims since the pause committed.
          await pollUntil(
            "10 claims per claimant after the pause",
            () => tries(barrierDir, 8).every((t, i) => t >= triesAtPause[i]! + 10),
            60_000,
            5,
          );
          writeFileSync(join(barrierDir, "stop"), "");
        },
      },
    );
    expect(markerEvent).toBeGreaterThanOrEqual(1);
    const events = await allEvents(q.store);
    const pauseAt = events.find((e) => e.job_id === marker.id && e.detail === "pause marker")!.id;
    const claimsAfter = events.filter((e) => e.event === "claimed" && e.id > pauseAt && e.job_id !== marker.id);
    expect(claimsAfter).toEqual([]);
    const claimed = results.flatMap((r) => r.claimed);
    expect(claimed.length).toBeGreaterThanOrEqual(20);
    expect(new Set(claimed).size).toBe(claimed.length);
    expect(results.every((r) => r.tries >= 10)).toBe(true);
    // What the claimants report agrees with the store: the rest is still queued.
    const queued = await q.store.read(async (tx) => tx.listJobs({ queue: lane, states: ["queued"], limit: 1000 }));
    expect(queued.length).toBe(400 - claimed.length);
  }, 120_000);
});
