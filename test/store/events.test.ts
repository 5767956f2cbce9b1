/**
 * The ledger: appendEvent, eventsOf, and listEvents paging by cursor. Ledger
 * ids are the cursor of `events --follow`, so they must strictly increase in
 * the order rows are written, and never be reused (not even after a prune);
 * with writer processes racing, a reader paging by cursor sees each id once.
 */
import { expect, test } from "bun:test";
import type { JobEvent } from "../../src/model/job.ts";
import { openQueue } from "../../src/store/index.ts";
import type { Store } from "../../src/store/store.ts";
import { attemptRecord, claimOne, forEachDriver, insertJob, insertJobs, record } from "../support/store.ts";
import { childScript, raceChildren } from "./children.ts";

async function ledger(store: Store): Promise<JobEvent[]> {
  return store.read(async (tx) => tx.listEvents({ afterId: 0, limit: 10_000 }));
}

function expectIncreasing(ids: number[]): void {
  for (let i = 1; i < ids.length; i++) expect(ids[i]!).toBeGreaterThan(ids[i - 1]!);
}

forEachDriver("events (ledger)", (q) => {
  test("appendEvent writes one row with its job, time, name, worker and detail; eventsOf lists a job's rows oldest first", async () => {
    const [a, b] = await insertJobs(q.store, [{}, {}]);
    const t = q.store.now();
    await q.store.write(async (tx) => {
      await tx.appendEvent(a!.id, "added", null, null, t);
      await tx.appendEvent(b!.id, "added", null, '{"x":1}', t + 1);
      await tx.appendEvent(a!.id, "cancel_requested", "op-1", "because", t + 2);
    });
    const events = await q.store.read(async (tx) => tx.eventsOf(a!.id));
    expect(events.map(({ id: _, ...rest }) => rest)).toEqual([
      { job_id: a!.id, at: t, event: "added", worker_id: null, detail: null },
      { job_id: a!.id, at: t + 2, event: "cancel_requested", worker_id: "op-1", detail: "because" },
    ]);
    expect(await q.store.read(async (tx) => tx.eventsOf(b!.id))).toEqual([
      { id: expect.any(Number), job_id: b!.id, at: t + 1, event: "added", worker_id: null, detail: '{"x":1}' },
    ]);
    expect(await q.store.read(async (tx) => tx.eventsOf(b!.id + 1000))).toEqual([]);
  });

  test("ledger ids strictly increase in write order: within a write, across writes, jobs, claims, records and connections", async () => {
    const other = await openQueue(q.location, { create: true });
    try {
      const [a, b] = await insertJobs(q.store, [{ priority: 1 }, {}]);
      const t = q.store.now();
      await q.store.write(async (tx) => {
        for (let i = 0; i < 5; i++) await tx.appendEvent(i % 2 ? a!.id : b!.id, "added", null, String(i), t);
      });
      await other.write(async (tx) => tx.appendEvent(b!.id, "cancel_requested", null, "other connection", t));
      await claimOne(q.store, { workerId: "w1" });
      await record(
        other,
        attemptRecord(a!.id, 1, "w1", t, { events: [{ event: "succeeded", workerId: "w1", detail: "by other" }] }),
      );
      await q.store.write(async (tx) => tx.appendEvent(a!.id, "retried", null, "last", t));
      const all = await ledger(q.store);
      expect(all.map((e) => e.event)).toEqual([
        "added",
        "added",
        "added",
        "added",
        "added",
        "cancel_requested",
        "claimed",
        "succeeded",
        "retried",
      ]);
      expect(all.map((e) => e.detail)).toEqual([
        "0",
        "1",
        "2",
        "3",
        "4",
        "other connection",
        all[6]!.detail,
        "by other",
        "last",
      ]);
      expectIncreasing(all.map((e) => e.id));
      expect(await ledger(other)).toEqual(all);
    } finally {
      await other.close();
    }
  });

  test("listEvents pages by cursor: afterId and limit, optionally one job's rows", async () => {
    const [a, b] = await insertJobs(q.store, [{}, {}]);
    const t = q.store.now();
    await q.store.write(async (tx) => {
      for (let i = 0; i < 23; i++) await tx.appendEvent(i % 3 === 0 ? a!.id : b!.id, "added", null, String(i), t + i);
    });
    const all = await ledger(q.store);
    expect(all).toHaveLength(23);
    expectIncreasing(all.map((e) => e.id));
    // Paging by 5 from cursor 0 returns the whole ledger, in order, with no row twice.
    const paged: JobEvent[] = [];
    for (let cursor = 0; ; ) {
      const page = await q.store.read(async (tx) => tx.listEvents({ afterId: cursor, limit: 5 }));
      expect(page.length).toBeLessThanOrEqual(5);
      if (page.length === 0) break;
      for (const e of page) expect(e.id).toBeGreaterThan(cursor);
      paged.push(...page);
      cursor = page.at(-1)!.id;
    }
    expect(paged).toEqual(all);
    // A cursor in the middle.
    const mid = all[10]!.id;
    expect((await q.store.read(async (tx) => tx.listEvents({ afterId: mid, limit: 3 }))).map((e) => e.detail)).toEqual([
      "11",
      "12",
      "13",
    ]);
    // One job's rows.
    const ofA = await q.store.read(async (tx) => tx.listEvents({ afterId: 0, jobId: a!.id, limit: 100 }));
    expect(ofA.map((e) => e.detail)).toEqual(["0", "3", "6", "9", "12", "15", "18", "21"]);
    const ofAPage = await q.store.read(async (tx) => tx.listEvents({ afterId: ofA[2]!.id, jobId: a!.id, limit: 2 }));
    expect(ofAPage.map((e) => e.detail)).toEqual(["9", "12"]);
    expect(await q.store.read(async (tx) => tx.listEvents({ afterId: all.at(-1)!.id, limit: 10 }))).toEqual([]);
    expect(await q.store.read(async (tx) => tx.eventsOf(a!.id))).toEqual(ofA);
  });

  test("a rolled-back write leaves no ledger row, and later ids still increase", async () => {
    const job = await insertJob(q.store);
    await q.store.write(async (tx) => tx.appendEvent(job.id, "added", null, "kept", q.store.now()));
    const before = await ledger(q.store);
    await expect(
      q.store.write(async (tx) => {
        await tx.appendEvent(job.id, "retried", null, "lost", q.store.now());
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await ledger(q.store)).toEqual(before);
    await q.store.write(async (tx) => tx.appendEvent(job.id, "retried", null, "after", q.store.now()));
    const after = await ledger(q.store);
    expect(after.map((e) => e.detail)).toEqual(["kept", "after"]);
    expectIncreasing(after.map((e) => e.id));
  });

  test("ledger ids are never reused, even after the newest job and its rows are deleted", async () => {
    const [a] = await insertJobs(q.store, [{}]);
    await q.store.write(async (tx) => {
      for (let i = 0; i < 3; i++) await tx.appendEvent(a!.id, "added", null, null, q.store.now());
    });
    const highest = (await ledger(q.store)).at(-1)!.id;
    await q.store.write(async (tx) => tx.cancelQueuedJob(a!.id, q.store.now()));
    expect((await q.store.write(async (tx) => tx.deleteJobs([a!.id]))).events).toBe(3);
    expect(await ledger(q.store)).toEqual([]);
    const b = await insertJob(q.store);
    await q.store.write(async (tx) => tx.appendEvent(b.id, "added", null, null, q.store.now()));
    const [next] = await ledger(q.store);
    expect(next!.id).toBeGreaterThan(highest);
  });
});

forEachDriver("events: commit order under racing writers", (q) => {
  test("ledger ids in commit order: 4 writer processes, a reader paging by cursor sees every id exactly once", async () => {
    const PER_WRITER = 60;
    const seen: number[] = [];
    const results = await raceChildren<{ id: string; ids: number[]; written: number }>(
      childScript("event-writer.ts"),
      q.location,
      [1, 2, 3, 4].map((seed) => ["--writes", String(PER_WRITER), "--seed", String(seed)]),
      {
        // The reader pages by cursor while the writers commit; one more full read once they are done.
        async duringRace(done) {
          let cursor = 0;
          for (;;) {
            const last = done();
            for (;;) {
              const page = await q.store.read(async (tx) => tx.listEvents({ afterId: cursor, limit: 7 }));
              for (const e of page) seen.push(e.id);
              if (page.length > 0) cursor = page[page.length - 1]!.id;
              if (page.length < 7) break;
            }
            if (last) break;
            await Bun.sleep(Math.random() * 3); // jitter between reads, not a wait for a state
          }
        },
      },
    );
    const total = results.reduce((n, r) => n + r.written, 0);
    expect(total).toBeGreaterThanOrEqual(4 * PER_WRITER);
    // Every id exactly once, in increasing order, none skipped: 1..total (the writers' jobs were inserted without events).
    expect(seen).toEqual(Array.from({ length: seen.length }, (_, i) => i + 1));
    expect(seen.length).toBe(total);
    // Ids a writer read inside its transaction are the final ones.
    const insideIds = results.flatMap((r) => r.ids);
    expect(insideIds.length).toBeGreaterThan(0);
    expect(insideIds.every((id) => id > 0 && seen.includes(id))).toBe(true);
  }, 120_000);
});
