/**
 * The kept dead counts (docs/architecture.md "Kept dead counts"): after any
 * sequence of deaths, retries, deletes, prunes and cancels the counts the
 * triggers keep equal a fresh GROUP BY of the dead jobs, by group and by
 * lane; `--failure-group` selects exactly a group's jobs; the same on both drivers.
 */
import { expect, test } from "bun:test";
import type { DeadGroupCount } from "../../src/model/metrics.ts";
import { MASK_VERSION, storedSignature } from "../../src/ops/failure-signature.ts";
import type { AttemptRecord } from "../../src/store/attempt-types.ts";
import type { Store } from "../../src/store/store.ts";
import { cancelJobs } from "../../src/store/verbs/cancel.ts";
import { deleteJobs } from "../../src/store/verbs/delete.ts";
import { pruneJobs } from "../../src/store/verbs/prune.ts";
import { retryJobs } from "../../src/store/verbs/retry.ts";
import { attemptRecord, claimOne, forEachDriver, insertJob, record } from "../support/store.ts";

/** Deterministic PRNG (mulberry32): a failing seed replays. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Ways a job's last attempt ends dead: exit codes, a signal, recorded, unrecorded and stale signatures. */
const DEATHS: Partial<AttemptRecord>[] = [
  {
    exitCode: 1,
    stderrLastLine: "connect to 10.0.0.1 refused",
    stderrSignature: storedSignature("connect to 10.0.0.1 refused"),
  },
  {
    exitCode: 1,
    stderrLastLine: "connect to 10.0.0.2 refused",
    stderrSignature: storedSignature("connect to 10.0.0.2 refused"),
  },
  { exitCode: 2, stderrLastLine: "disk full", stderrSignature: storedSignature("disk full") },
  { exitCode: 2, stderrLastLine: "not recorded", stderrSignature: null },
  { exitCode: 3, stderrLastLine: "old masking", stderrSignature: `${MASK_VERSION + 7}|old masking` },
  {
    attemptState: "timed_out",
    exitCode: null,
    signal: 15,
    failureReason: "timeout",
    stderrLastLine: "",
    stderrSignature: storedSignature(""),
  },
];

/** A group as both sides can name it: reason, exit, signal and the masked line, or `?` when not recorded by this masking. */
function groupName(reason: string | null, exit: number | null, signal: number | null, sig: string): string {
  return JSON.stringify([reason, exit, signal, sig]);
}

/** The kept counts, by group and by lane. */
async function kept(
  store: Store,
): Promise<{ groups: Map<string, number>; lanes: Map<string, number>; rows: DeadGroupCount[] }> {
  const rows = await store.read((tx) => tx.deadGroupCounts());
  const groups = new Map<string, number>();
  const lanes = new Map<string, number>();
  const prefix = `${MASK_VERSION}|`;
  for (const r of rows) {
    const sig = r.signature === "" ? "" : r.signature?.startsWith(prefix) ? r.signature.slice(prefix.length) : "?";
    const name = groupName(r.failure_reason, r.exit_code, r.signal, sig);
    groups.set(name, (groups.get(name) ?? 0) + r.n);
    lanes.set(r.queue, (lanes.get(r.queue) ?? 0) + r.n);
  }
  return { groups, lanes, rows };
}

/** The same from scratch: the GROUP BY of failureGroups, and the jobs counted by lane and state. */
async function recount(store: Store): Promise<{ groups: Map<string, number>; lanes: Map<string, number> }> {
  return store.read(async (tx) => {
    const groups = new Map<string, number>();
    for (const r of await tx.failureGroups({ states: ["dead"] }, MASK_VERSION)) {
      const name = groupName(r.failure_reason, r.exit_code, r.signal, r.stderr_signature ?? "?");
      groups.set(name, (groups.get(name) ?? 0) + r.count);
    }
    const lanes = new Map<string, number>();
    for (const c of await tx.countByStateAndLane()) if (c.state === "dead" && c.n > 0) lanes.set(c.queue, c.n);
    return { groups, lanes };
  });
}

async function expectExact(store: Store, step: string): Promise<void> {
  const k = await kept(store);
  const r = await recount(store);
  const sortedOf = (m: Map<string, number>) => [...m].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  expect({ step, groups: sortedOf(k.groups), lanes: sortedOf(k.lanes) }).toEqual({
    step,
    groups: sortedOf(r.groups),
    lanes: sortedOf(r.lanes),
  });
}

/** Runs the next due job of `queue` to `death` (dead), to success, or to a failure that retries. */
async function runOnce(
  store: Store,
  queue: string,
  end: "dead" | "done" | "retry",
  death: Partial<AttemptRecord>,
  at: number,
): Promise<void> {
  const { job, attempt } = await claimOne(store, { queue, workerId: "w1", now: at });
  const id = job.id;
  const failed = {
    attemptState: "failed" as const,
    error: "failed",
    failureReason: "process_exit" as const,
    attempts: attempt.attempt_no,
    events: [],
    ...death,
  };
  const rec =
    end === "done"
      ? attemptRecord(id, attempt.attempt_no, "w1", at)
      : attemptRecord(id, attempt.attempt_no, "w1", at, { ...failed, jobState: end === "dead" ? "dead" : "queued" });
  expect(await record(store, rec)).toBe(true);
}

forEachDriver("kept dead counts", (q) => {
  test("a random sequence of deaths, retries, deletes, prunes and cancels keeps the counts exact", async () => {
    const seed = 20261207;
    const rand = rng(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const base = q.store.now() - 10_000;
    let at = base;
    const done: string[] = [];
    for (let step = 0; step < 60; step++) {
      at += 10;
      const jobs = await q.store.read((tx) => tx.listJobs({ limit: 1000 }));
      const dead = jobs.filter((j) => j.state === "dead");
      const ended = jobs.filter((j) => ["dead", "done", "canceled"].includes(j.state));
      const r = rand();
      let what: string;
      if (r < 0.4 || jobs.length < 4) {
        const queue = pick(["default", "net"]);
        const job = await insertJob(q.store, { queue }, at);
        const end = pick(["dead", "dead", "done", "retry"] as const);
        await runOnce(q.store, queue, end, pick(DEATHS), at);
        // A retried failure runs again and dies another way: the group is the last attempt's.
        if (end === "retry") await runOnce(q.store, queue, "dead", pick(DEATHS), at + 1);
        what = `add ${job.id} → ${end}`;
      } else if (r < 0.55 && dead.length) {
        const ids = dead.filter(() => rand() < 0.4).map((j) => String(j.id));
        if (!ids.length) ids.push(String(pick(dead).id));
        await retryJobs(q.store, { refs: ids }, { force: false }, at);
        what = `retry ${ids.join(",")}`;
      } else if (r < 0.65) {
        const rows = (await kept(q.store)).rows;
        if (!rows.length) continue;
        const key = pick(rows).key;
        await retryJobs(q.store, { filter: { states: ["dead"], failureGroup: key } }, { force: false }, at);
        what = `retry --all --failure-group ${key}`;
      } else if (r < 0.75 && ended.length) {
        const ids = ended.filter(() => rand() < 0.3).map((j) => String(j.id));
        if (!ids.length) ids.push(String(pick(ended).id));
        await deleteJobs(q.store, ids);
        what = `delete ${ids.join(",")}`;
      } else if (r < 0.82) {
        const rows = (await kept(q.store)).rows;
        if (!rows.length) continue;
        const key = pick(rows).key;
        await deleteJobs(q.store, { filter: { states: ["dead"], failureGroup: key } });
        what = `delete --all --failure-group ${key}`;
      } else if (r < 0.9) {
        const olderThan = Math.floor(rand() * (at - base));
        await pruneJobs(q.store, { olderThan, states: ["dead", "done"], dryRun: false }, at);
        what = `prune older than ${olderThan}s`;
      } else {
        const queued = await insertJob(q.store, { queue: "net" }, at);
        await cancelJobs(q.store, [String(queued.id)], false, at);
        what = `cancel ${queued.id}`;
      }
      done.push(what.split(" ")[0]!);
      await expectExact(q.store, `seed ${seed} step ${step}: ${what}`);
    }
    // Every kind of change ran at least once.
    expect([...new Set(done)].sort()).toEqual(["add", "cancel", "delete", "prune", "retry"]);
  }, 300_000);

  test("--failure-group selects exactly the dead jobs of one kept group, and the counts follow", async () => {
    const t = q.store.now();
    const a = await insertJob(q.store, {}, t);
    await runOnce(q.store, "default", "dead", DEATHS[0]!, t);
    const b = await insertJob(q.store, { queue: "net" }, t);
    await runOnce(q.store, "net", "dead", DEATHS[0]!, t + 1);
    const c = await insertJob(q.store, {}, t);
    await runOnce(q.store, "default", "dead", DEATHS[2]!, t + 2);
    const rows = (await kept(q.store)).rows;
    const refused = rows.find((r) => r.signature === DEATHS[0]!.stderrSignature)!;
    expect(rows.filter((r) => r.key === refused.key).map((r) => [r.queue, r.n])).toEqual([
      ["default", 1],
      ["net", 1],
    ]);
    const spans = await q.store.read((tx) => tx.deadGroupSpans([refused.key, "no|such|group|"]));
    expect(spans.map((s) => s.newest_job_id)).toEqual([b.id]);
    const chosen = await q.store.read((tx) => tx.listJobs({ failureGroup: refused.key, limit: 10 }));
    expect(chosen.map((j) => j.id).sort((x, y) => x - y)).toEqual([a.id, b.id]);
    await retryJobs(q.store, { filter: { states: ["dead"], failureGroup: refused.key } }, { force: false }, t + 3);
    expect((await kept(q.store)).rows.map((r) => [r.key, r.n])).toEqual([
      [rows.find((r) => r.exit_code === 2)!.key, 1],
    ]);
    const left = await q.store.read((tx) =>
      tx.listJobs({ failureGroup: rows.find((r) => r.exit_code === 2)!.key, limit: 10 }),
    );
    expect(left.map((j) => j.id)).toEqual([c.id]);
    const kinds = await q.store.read((tx) => tx.deadJobKinds());
    expect(kinds.map((k) => ({ ...k, n: Number(k.n) }))).toEqual([
      { queue: "default", failure_reason: "process_exit", exit_code: 2, signal: null, n: 1 },
    ]);
  });
});
