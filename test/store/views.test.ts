/**
 * The web view's screen reads (docs/architecture.md "The web view"):
 * finishedTimeline's buckets by outcome, needEdges both ways and needGraph's
 * walk and bound, lastEventId — the same on both drivers.
 */
import { expect, test } from "bun:test";
import { finishedTimeline, ledgerHead, needGraph } from "../../src/store/verbs/views.ts";
import { endedJob, forEachDriver, insertJob, newJob, sorted } from "../support/store.ts";

forEachDriver("web view reads", (q) => {
  test("finishedTimeline counts ended jobs by outcome in the bucket they ended in; older ones and live ones not", async () => {
    const done = await endedJob(q.store, "done");
    const dead = await endedJob(q.store, "dead");
    await insertJob(q.store); // queued: not ended
    const now = q.store.now();
    const timeline = await finishedTimeline(q.store, 3600, 60);
    expect(timeline.bucket_seconds).toBe(60);
    expect(timeline.buckets).toHaveLength(60);
    const last = timeline.buckets.at(-1)!;
    expect([last.done, last.dead, last.canceled]).toEqual([1, 1, 0]);
    expect(timeline.buckets.slice(0, -1).every((b) => b.done + b.dead + b.canceled === 0)).toBe(true);
    expect(timeline.buckets[0]!.start).toBeCloseTo(now - 3600, -1);
    // A job that ended two hours ago is outside the last hour.
    await q.store.write(async (tx) => {
      await tx.deleteJobs([dead]);
    });
    const day = await finishedTimeline(q.store, 86400, 48);
    expect(day.buckets.reduce((a, b) => a + b.done + b.dead, 0)).toBe(1);
    expect((await q.store.read((tx) => tx.finishedTimeline(now + 10, 60))).length).toBe(0);
    expect(done).toBeGreaterThan(0);
  });

  test("needEdges finds a job's needs and dependents; needGraph walks them to its depth and bound", async () => {
    const [a, b, c, d] = await q.store.write((tx) =>
      tx.addJobs(
        [newJob({ idempotency_key: "a" }), newJob({ idempotency_key: "b" }), newJob(), newJob()],
        q.store.now(),
        [
          undefined,
          { ids: [], earlier: [0], policy: "success" },
          { ids: [], earlier: [1], policy: "success" },
          { ids: [], earlier: [2], policy: "success" },
        ],
      ),
    );
    const edges = await q.store.read((tx) => tx.needEdges([b!.id]));
    expect(edges.map((e) => [Number(e.job_id), Number(e.need_id)]).sort()).toEqual(
      [
        [b!.id, a!.id],
        [c!.id, b!.id],
      ].sort(),
    );
    expect(await q.store.read((tx) => tx.needEdges([]))).toEqual([]);
    const near = await needGraph(q.store, [b!.id], 1, 100);
    expect(sorted(near.jobs.map((j) => j.id))).toEqual([a!.id, b!.id, c!.id]);
    expect(near.edges).toHaveLength(2);
    expect(near.truncated).toBe(false);
    const all = await needGraph(q.store, [a!.id], 5, 100);
    expect(sorted(all.jobs.map((j) => j.id))).toEqual([a!.id, b!.id, c!.id, d!.id]);
    expect(all.edges).toHaveLength(3);
    const bounded = await needGraph(q.store, [a!.id], 5, 2);
    expect([bounded.jobs.length, bounded.truncated]).toEqual([2, true]);
  });

  test("lastEventId is the newest ledger row's id, 0 on an empty ledger", async () => {
    expect(await ledgerHead(q.store)).toBe(0);
    const id = await endedJob(q.store, "done"); // claimed and recorded: ledger rows
    const first = await ledgerHead(q.store);
    const rows = await q.store.read((tx) => tx.eventsOf(id));
    expect(first).toBe(Math.max(...rows.map((r) => Number(r.id))));
    await endedJob(q.store, "dead");
    expect(await ledgerHead(q.store)).toBeGreaterThan(first);
  });
});
