/**
 * metricCounts and deadJobKinds: the counters the schema's triggers keep
 * (docs/architecture.md "Metrics") after a claim, results, a cancel and a
 * delete, the same on both drivers.
 */
import { expect, test } from "bun:test";
import type { MetricCount } from "../../src/model/metrics.ts";
import { attemptRecord, claim, forEachDriver, insertJobs, record } from "../support/store.ts";

function total(rows: MetricCount[], metric: string, label?: string): number {
  return rows
    .filter((r) => r.metric === metric && (label === undefined || r.label === label))
    .reduce((a, r) => a + r.n, 0);
}

forEachDriver("metric counts", (q) => {
  test("finished, retries, crashes, wait and run observations; kept after the jobs are deleted", async () => {
    const now = q.store.now();
    const [ok, flaky, canceled] = await insertJobs(q.store, [{ priority: 3 }, { priority: 2 }, { priority: 1 }], now);
    await q.store.write(async (tx) => tx.cancelQueuedJob(canceled!.id, now));
    expect(await claim(q.store, { limit: 2, now: now + 1 })).toHaveLength(2);
    expect(await record(q.store, attemptRecord(ok!.id, 1, "w1", now + 3))).toBe(true);
    const retry = attemptRecord(flaky!.id, 1, "w1", now + 2, {
      attemptState: "failed",
      exitCode: 1,
      failureReason: "process_exit",
      jobState: "queued",
      attempts: 1,
      crashes: 1,
      events: [{ event: "failed", workerId: "w1", detail: null }],
    });
    expect(await record(q.store, retry)).toBe(true);
    const rows = await q.store.read((tx) => tx.metricCounts());
    expect(total(rows, "finished", "done")).toBe(1);
    expect(total(rows, "finished", "canceled")).toBe(1);
    expect(total(rows, "retries")).toBe(1);
    expect(total(rows, "crashes")).toBe(1);
    expect(total(rows, "wait")).toBe(2);
    expect(total(rows, "run", "succeeded")).toBe(1);
    expect(total(rows, "run", "failed")).toBe(1);
    const succeeded = rows.find((r) => r.metric === "run" && r.label === "succeeded")!;
    expect(succeeded.scope).toBe("default");
    expect(succeeded.sum).toBeCloseTo(2, 3);
    expect(succeeded.bucket).toBe(8); // 2 s: the bucket whose bound is 2.5 s
    await q.store.write(async (tx) => tx.deleteJobs([ok!.id, canceled!.id]));
    const after = await q.store.read((tx) => tx.metricCounts());
    expect(total(after, "finished")).toBe(2);
  });

  test("deadJobKinds groups dead jobs by their last attempt's failure", async () => {
    const now = q.store.now();
    const jobs = await insertJobs(q.store, [{}, {}, {}], now);
    expect(await claim(q.store, { limit: 3, now })).toHaveLength(3);
    for (const [i, job] of jobs.entries()) {
      const rec = attemptRecord(job.id, 1, "w1", now + 1, {
        attemptState: "failed",
        exitCode: i === 2 ? 2 : 1,
        failureReason: "process_exit",
        jobState: "dead",
        attempts: 1,
        events: [{ event: "dead", workerId: "w1", detail: null }],
      });
      expect(await record(q.store, rec)).toBe(true);
    }
    const kinds = (await q.store.read((tx) => tx.deadJobKinds())).map((k) => ({ ...k, n: Number(k.n) }));
    kinds.sort((a, b) => (a.exit_code ?? 0) - (b.exit_code ?? 0));
    expect(kinds).toEqual([
      { queue: "default", failure_reason: "process_exit", exit_code: 1, signal: null, n: 2 },
      { queue: "default", failure_reason: "process_exit", exit_code: 2, signal: null, n: 1 },
    ]);
  });
});
