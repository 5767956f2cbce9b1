/**
 * addJobs, the batch insert behind `add`, `add --from` and `enqueue`: jobs in
 * order with their `added` events, in one statement on PostgreSQL; and
 * findActiveJobsByKeys, the one look-up of every key an add or a retry needs.
 */
import { expect, test } from "bun:test";
import type { JobSpec } from "../../src/ops/job-spec.ts";
import { addJobs } from "../../src/store/verbs/add.ts";
import { attemptRecord, claimOne, forEachDriver, insertJob, newJob, record } from "../support/store.ts";

/** A job spec as `add` validates it: defaults for everything but argv and key. */
const spec = (argv: string[], key: string | null): JobSpec => ({
  ...newJob({ argv, idempotency_key: key }),
  timeout_seconds: null,
  max_retries: null,
  delay: null,
});

forEachDriver("addJobs", (q) => {
  test("inserts jobs in order, queued, each with one `added` event, ids ascending", async () => {
    const now = q.store.now();
    const specs = Array.from({ length: 50 }, (_, i) =>
      newJob({ argv: ["echo", String(i)], queue: i % 2 ? "odd" : "even", idempotency_key: i % 5 ? null : `k${i}` }),
    );
    const stored = await q.store.write(async (tx) => tx.addJobs(specs, now));
    expect(stored.map((j) => j.argv[1])).toEqual(specs.map((_, i) => String(i)));
    expect(stored.map((j) => j.id)).toEqual([...stored.map((j) => j.id)].sort((a, b) => a - b));
    expect(new Set(stored.map((j) => j.state))).toEqual(new Set(["queued"]));
    expect(stored.map((j) => j.queue)).toEqual(specs.map((s) => s.queue));
    expect(stored.map((j) => j.idempotency_key)).toEqual(specs.map((s) => s.idempotency_key));
    expect(stored[0]!.created_at).toBe(now);
    const events = await q.store.read(async (tx) => tx.listEvents({ afterId: 0, limit: 1000 }));
    expect(events.map((e) => [e.job_id, e.event])).toEqual(stored.map((j) => [j.id, "added"]));
    expect(await q.store.write(async (tx) => tx.addJobs([], now))).toEqual([]);
  });

  test("a batch with a key an active job holds is refused whole by the store", async () => {
    await insertJob(q.store, { idempotency_key: "held" });
    await expect(
      q.store.write(async (tx) => tx.addJobs([newJob(), newJob({ idempotency_key: "held" })], q.store.now())),
    ).rejects.toThrow(/unique|duplicate|conflict|idempotency/i);
    expect(await q.store.read(async (tx) => tx.listJobs({ limit: 10 }))).toHaveLength(1);
  });

  test("findActiveJobsByKeys: the queued or running holder of each key; finished jobs hold none", async () => {
    const a = await insertJob(q.store, { idempotency_key: "a" });
    const b = await insertJob(q.store, { idempotency_key: "b" });
    await insertJob(q.store, { idempotency_key: null });
    const { attempt } = await claimOne(q.store, { workerId: "w1" });
    expect(attempt.job_id).toBe(a.id);
    const found = await q.store.read(async (tx) => tx.findActiveJobsByKeys(["a", "b", "c", "a"]));
    expect([...found.entries()].map(([k, j]) => [k, j.id, j.state]).sort()).toEqual([
      ["a", a.id, "running"],
      ["b", b.id, "queued"],
    ]);
    expect(await record(q.store, attemptRecord(a.id, 1, "w1", q.store.now()))).toBe(true);
    expect([...(await q.store.read(async (tx) => tx.findActiveJobsByKeys(["a", "b"]))).keys()]).toEqual(["b"]);
    expect((await q.store.read(async (tx) => tx.findActiveJobsByKeys([]))).size).toBe(0);
  });

  test("addJobs (the operation): one key twice in one add reuses the first; a key of an active job reuses it", async () => {
    const held = await insertJob(q.store, { idempotency_key: "held", argv: ["echo", "held"] });
    const specs = [
      spec(["echo", "one"], "dup"),
      spec(["echo", "held"], "held"),
      spec(["echo", "one"], "dup"),
      spec(["echo", "free"], null),
    ];
    const { jobs } = await addJobs(q.store, specs, q.store.now(), ["line 1", "line 2", "line 3", "line 4"]);
    expect(jobs.map((j) => j.deduplicated)).toEqual([false, true, true, false]);
    expect(jobs[1]!.job_id).toBe(held.id);
    expect(jobs[2]!.job_id).toBe(jobs[0]!.job_id);
    expect(await q.store.read(async (tx) => tx.listJobs({ limit: 10 }))).toHaveLength(3);
    // A different payload under one key in one add: refused, naming both lines, nothing added.
    await expect(
      addJobs(q.store, [spec(["echo", "x"], "new"), spec(["echo", "y"], "new")], q.store.now(), ["line 1", "line 2"]),
    ).rejects.toThrow(/line 2: key "new" is already used by line 1/);
    expect(await q.store.read(async (tx) => tx.listJobs({ limit: 10 }))).toHaveLength(3);
  });
});
