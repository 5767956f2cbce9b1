/**
 * The shared store suite (River's habit): every driver behind `src/store/store.ts`
 * must pass it. SQLite is the only driver today; a PostgreSQL driver joins
 * DRIVERS and runs the same cases.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NewJob } from "../src/store/model.ts";
import { openSqliteStore } from "../src/store/sqlite/open.ts";
import type { Store } from "../src/store/store.ts";

interface Driver {
  name: string;
  /** Opens a second connection to the same queue when called twice with one dir. */
  open(dir: string): Store;
}

const DRIVERS: Driver[] = [
  { name: "sqlite", open: (dir) => openSqliteStore({ path: join(dir, "q.db"), spoolDir: join(dir, "q.spool"), create: true }) },
];

function job(over: Partial<NewJob> = {}): NewJob {
  return {
    argv: ["true"], priority: 0, queue: "default", next_run_at: 0, timeout_seconds: 300, max_retries: 3, max_crashes: null,
    idempotency_key: null, tags: {}, note: null, cwd: null, env: {}, ...over,
  };
}

const claimant = (workerId: string, over: Partial<{ queue: string; slots: number | null; now: number }> = {}) => ({
  queue: "default", workerId, workerPid: 1, slots: null, now: 1000, ...over,
});

for (const driver of DRIVERS) {
  describe(`store driver: ${driver.name}`, () => {
    let dir: string;
    let store: Store;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), "spoolctl-store-"));
      store = driver.open(dir);
    });
    afterEach(() => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    });

    test("claim order: priority DESC, next_run_at ASC, id ASC, only due jobs of the lane", () => {
      const ids = store.write((tx) => [
        tx.insertJob(job({ priority: 0, next_run_at: 10 }), 0).id, // a
        tx.insertJob(job({ priority: 5, next_run_at: 20 }), 0).id, // b
        tx.insertJob(job({ priority: 5, next_run_at: 10 }), 0).id, // c
        tx.insertJob(job({ priority: 9, next_run_at: 5000 }), 0).id, // not due
        tx.insertJob(job({ priority: 99, queue: "other" }), 0).id, // other lane
        tx.insertJob(job({ priority: 0, next_run_at: 10 }), 0).id, // d (after a by id)
      ]);
      const order: number[] = [];
      for (;;) {
        const claimed = store.write((tx) => tx.claimNext(claimant("w1")));
        if (!claimed) break;
        order.push(claimed.id);
      }
      expect(order).toEqual([ids[2]!, ids[1]!, ids[0]!, ids[5]!]);
    });

    test("a claim takes the job once: two connections never get the same job", () => {
      const other = driver.open(dir);
      try {
        store.write((tx) => {
          for (let i = 0; i < 50; i++) tx.insertJob(job(), 0);
        });
        const seen = new Set<number>();
        for (let i = 0; i < 60; i++) {
          const s = i % 2 ? store : other;
          const claimed = s.write((tx) => tx.claimNext(claimant(`w${i % 2}`)));
          if (!claimed) continue;
          expect(seen.has(claimed.id)).toBe(false);
          seen.add(claimed.id);
          expect(claimed.state).toBe("running");
          expect(claimed.last_attempt_no).toBe(1);
        }
        expect(seen.size).toBe(50);
      } finally {
        other.close();
      }
    });

    test("slots: no claim while the lane runs that many jobs, counted fleet-wide", () => {
      store.write((tx) => {
        for (let i = 0; i < 3; i++) tx.insertJob(job(), 0);
      });
      expect(store.write((tx) => tx.claimNext(claimant("w1", { slots: 2 })))).not.toBeNull();
      expect(store.write((tx) => tx.claimNext(claimant("w2", { slots: 2 })))).not.toBeNull();
      expect(store.write((tx) => tx.claimNext(claimant("w3", { slots: 2 })))).toBeNull();
      expect(store.read((tx) => tx.runningInLane("default"))).toBe(2);
    });

    test("owner and attempt guard: a late write from a worker that lost the job changes nothing", () => {
      const id = store.write((tx) => tx.insertJob(job(), 0).id);
      const claimed = store.write((tx) => tx.claimNext(claimant("w1")))!;
      const record = (workerId: string, attemptNo: number) =>
        store.write((tx) =>
          tx.recordAttempt({
            jobId: id, attemptNo, workerId, now: 1001, attemptState: "succeeded", exitCode: 0, signal: null, error: null,
            failureReason: null, jobState: "done", attempts: 0, crashes: 0, nextRunAt: 0,
          }),
        );
      expect(store.write((tx) => tx.heartbeatJob(id, 1, "intruder", 1001))).toBeNull();
      expect(record("intruder", claimed.last_attempt_no)).toBe(false);
      expect(record("w1", claimed.last_attempt_no + 1)).toBe(false);
      expect(store.read((tx) => tx.getJob(id))!.state).toBe("running");
      expect(store.write((tx) => tx.heartbeatJob(id, 1, "w1", 1002))).toEqual({ cancelRequested: false });
      expect(record("w1", claimed.last_attempt_no)).toBe(true);
      expect(store.read((tx) => tx.getJob(id))!.state).toBe("done");
      expect(record("w1", claimed.last_attempt_no)).toBe(false);
    });

    test("laneSettled: user delays do not hold a drain; running jobs and retry backoff do", () => {
      const now = 1000;
      store.write((tx) => tx.insertJob(job({ next_run_at: now + 3600 }), 0));
      expect(store.read((tx) => tx.laneSettled("default", now))).toBe(true);
      const id = store.write((tx) => tx.insertJob(job({ next_run_at: now - 1 }), 0).id);
      expect(store.read((tx) => tx.laneSettled("default", now))).toBe(false);
      store.write((tx) => tx.claimNext(claimant("w1", { now })));
      expect(store.read((tx) => tx.laneSettled("default", now))).toBe(false);
      store.write((tx) =>
        tx.recordAttempt({
          jobId: id, attemptNo: 1, workerId: "w1", now, attemptState: "failed", exitCode: 1, signal: null, error: "exit 1",
          failureReason: "process_exit", jobState: "queued", attempts: 1, crashes: 0, nextRunAt: now + 2,
        }),
      );
      expect(store.read((tx) => tx.laneSettled("default", now))).toBe(false);
      expect(store.read((tx) => tx.laneSettled("other-lane", now))).toBe(true);
    });

    test("idempotency look-ups see only active jobs, newest first", () => {
      const a = store.write((tx) => tx.insertJob(job({ idempotency_key: "k" }), 0));
      expect(store.read((tx) => tx.findActiveJobByKey("k"))!.id).toBe(a.id);
      store.write((tx) => tx.claimNext(claimant("w1")));
      store.write((tx) =>
        tx.recordAttempt({
          jobId: a.id, attemptNo: 1, workerId: "w1", now: 1001, attemptState: "succeeded", exitCode: 0, signal: null, error: null,
          failureReason: null, jobState: "done", attempts: 0, crashes: 0, nextRunAt: 0,
        }),
      );
      expect(store.read((tx) => tx.findActiveJobByKey("k"))).toBeNull();
      expect(store.read((tx) => tx.findLatestJobByKey("k"))!.id).toBe(a.id);
    });

    test("lane counts follow every transition, lane change and delete", () => {
      const counts = () =>
        Object.fromEntries(store.read((tx) => tx.countByStateAndLane()).map((c) => [`${c.queue}/${c.state}`, c.n]));
      const a = store.write((tx) => tx.insertJob(job(), 0).id);
      store.write((tx) => tx.insertJob(job({ queue: "b" }), 0));
      expect(counts()).toEqual({ "default/queued": 1, "b/queued": 1 });
      store.write((tx) => tx.claimNext(claimant("w1")));
      expect(counts()).toEqual({ "default/running": 1, "b/queued": 1 });
      store.write((tx) =>
        tx.recordAttempt({
          jobId: a, attemptNo: 1, workerId: "w1", now: 1001, attemptState: "succeeded", exitCode: 0, signal: null, error: null,
          failureReason: null, jobState: "done", attempts: 0, crashes: 0, nextRunAt: 0,
        }),
      );
      expect(counts()).toEqual({ "default/done": 1, "b/queued": 1 });
      store.write((tx) => tx.deleteJobs([a]));
      expect(counts()).toEqual({ "b/queued": 1 });
    });

    test("a failed write transaction leaves nothing behind", () => {
      expect(() =>
        store.write((tx) => {
          tx.insertJob(job(), 0);
          throw new Error("boom");
        }),
      ).toThrow("boom");
      expect(store.read((tx) => tx.listJobs({ limit: 10 }))).toHaveLength(0);
    });
  });
}
