/**
 * setHeld and the `holdJobs` operation (docs/architecture.md "Holding a
 * job"): a held job stays queued but no claim takes it — the claim, a
 * result's claim, a claim of many — until it is released; drains and the
 * worker's next-due time leave it out; its dependents wait; hold refuses a job
 * that is not queued, all or none; and 8 claimant processes racing a hold
 * never take a job once its hold has committed.
 */

import { expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SpoolError } from "../../src/contract/errors.ts";
import type { Store } from "../../src/store/store.ts";
import { cancelJobs } from "../../src/store/verbs/cancel.ts";
import { holdJobs } from "../../src/store/verbs/hold.ts";
import { retryJobs } from "../../src/store/verbs/retry.ts";
import {
  attemptRecord,
  claim,
  claimOne,
  forEachDriver,
  insertJob,
  insertJobs,
  jobOf,
  newJob,
  pollUntil,
} from "../support/store.ts";
import { childScript, raceChildren } from "./children.ts";

/** The ledger rows of job `id`, by name (insertJob writes no `added` row). */
const eventsOf = async (store: Store, id: number) =>
  (await store.read(async (tx) => tx.eventsOf(id))).filter((e) => e.event !== "added");

forEachDriver("setHeld", (q) => {
  test("a held job is passed over by every claim until released; the others run in order", async () => {
    const [a, b, c] = await insertJobs(q.store, [{ priority: 9 }, { priority: 5 }, {}]);
    expect(await holdJobs(q.store, [String(a!.id), String(c!.id)], true)).toEqual([
      { job_id: a!.id, held: true, changed: true },
      { job_id: c!.id, held: true, changed: true },
    ]);
    expect(await jobOf(q.store, a!.id)).toMatchObject({ state: "queued", held: true });
    // The highest priority is held: the claim takes b, then nothing (limit 5 finds no other).
    expect((await claim(q.store, { limit: 5 })).map((x) => x.job.id)).toEqual([b!.id]);
    expect(await claim(q.store, { limit: 5 })).toEqual([]);
    // A result's claim takes nothing held either.
    const rec = attemptRecord(b!.id, 1, "w1", q.store.now());
    const { claimed } = await q.store.writeAndClaim(async (tx) => tx.recordAttempt(rec), {
      queue: "default",
      workerId: "w1",
      workerPid: 4242,
      slots: null,
      limit: 3,
    });
    expect(claimed ?? []).toEqual([]);
    // Release one: it is claimable again; the other stays held.
    expect(await holdJobs(q.store, [String(a!.id)], false)).toEqual([{ job_id: a!.id, held: false, changed: true }]);
    expect((await claimOne(q.store)).job.id).toBe(a!.id);
    expect(await claim(q.store)).toEqual([]);
    expect((await eventsOf(q.store, a!.id)).map((e) => e.event)).toEqual(["held", "released", "claimed"]);
  });

  test("holding a held job (or releasing a free one) changes nothing and writes no row", async () => {
    const a = await insertJob(q.store);
    await holdJobs(q.store, [String(a.id)], true);
    expect(await holdJobs(q.store, [String(a.id)], true)).toEqual([{ job_id: a.id, held: true, changed: false }]);
    const b = await insertJob(q.store);
    expect(await holdJobs(q.store, [String(b.id)], false)).toEqual([{ job_id: b.id, held: false, changed: false }]);
    expect((await eventsOf(q.store, a.id)).map((e) => e.event)).toEqual(["held"]);
    expect((await eventsOf(q.store, b.id)).map((e) => e.event)).toEqual([]);
  });

  test("hold refuses a running or finished job with CONFLICT, all or none", async () => {
    const [a, b] = await insertJobs(q.store, [{}, {}]);
    const running = await claimOne(q.store);
    expect(running.job.id).toBe(a!.id);
    const err = await holdJobs(q.store, [String(b!.id), String(a!.id)], true).catch((e) => e);
    expect(err).toBeInstanceOf(SpoolError);
    expect(err.code).toBe("CONFLICT");
    expect(err.message).toContain(`job ${a!.id} is running`);
    // b was named first but nothing changed: one transaction.
    expect((await jobOf(q.store, b!.id)).held).toBe(false);
    const missing = await holdJobs(q.store, ["999"], true).catch((e) => e);
    expect(missing.code).toBe("NOT_FOUND");
  });

  test("a held job that leaves queued drops the flag: canceled and retried, it runs", async () => {
    const a = await insertJob(q.store);
    await holdJobs(q.store, [String(a.id)], true);
    await cancelJobs(q.store, [String(a.id)], false);
    expect(await jobOf(q.store, a.id)).toMatchObject({ state: "canceled", held: false });
    await retryJobs(q.store, { refs: [String(a.id)] }, { force: false });
    expect(await jobOf(q.store, a.id)).toMatchObject({ state: "queued", held: false });
    expect((await claimOne(q.store)).job.id).toBe(a.id);
  });

  test("the driver's guard: setHeld leaves a job that is no longer queued alone", async () => {
    const [a, b] = await insertJobs(q.store, [{}, {}]);
    await claimOne(q.store);
    expect(await q.store.write(async (tx) => tx.setHeld([a!.id, b!.id], true))).toEqual([b!.id]);
    expect((await jobOf(q.store, a!.id)).held).toBe(false);
  });

  test("a drain, the next-due time and the counts leave held jobs out; --all selects by the flag", async () => {
    const now = q.store.now();
    const [a, b] = await insertJobs(q.store, [{ queue: "ci" }, { queue: "ci", next_run_at: now + 60 }]);
    await holdJobs(q.store, [String(a!.id), String(b!.id)], true);
    const state = await q.store.read(async (tx) => tx.drainState("ci", q.store.now()));
    expect(state).toEqual({ running: 0, waiting: 0 });
    expect(await q.store.read(async (tx) => tx.nextDueAt("ci"))).toBeNull();
    expect(await q.store.read(async (tx) => tx.countHeldByLane())).toEqual([{ queue: "ci", n: 2 }]);
    const c = await insertJob(q.store, { queue: "ci" });
    expect((await q.store.read(async (tx) => tx.drainState("ci", q.store.now()))).waiting).toBe(1);
    const held = await q.store.read(async (tx) => tx.listJobs({ states: ["queued"], held: true, limit: 10 }));
    expect(held.map((j) => j.id)).toEqual([b!.id, a!.id]);
    const free = await q.store.read(async (tx) => tx.listJobs({ states: ["queued"], held: false, limit: 10 }));
    expect(free.map((j) => j.id)).toEqual([c.id]);
    // --all: every held job of the lane released in one go.
    const out = await holdJobs(q.store, { filter: { queue: "ci", states: ["queued"], held: true } }, false);
    expect(out.map((j) => j.job_id).sort()).toEqual([a!.id, b!.id]);
    expect(await q.store.read(async (tx) => tx.countHeldByLane())).toEqual([]);
  });

  test("a held job's dependents wait; released, the chain runs", async () => {
    const need = await insertJob(q.store);
    const [dep] = await q.store.write(async (tx) =>
      tx.addJobs([newJob({ argv: ["true"] })], q.store.now(), [{ ids: [need.id], earlier: [], policy: "success" }]),
    );
    await holdJobs(q.store, [String(need.id)], true);
    expect(await claim(q.store, { limit: 5 })).toEqual([]);
    await holdJobs(q.store, [String(need.id)], false);
    const got = await claimOne(q.store);
    expect(got.job.id).toBe(need.id);
    expect((await jobOf(q.store, dep!.id)).needs_left).toBe(1);
  });

  test("race: 8 claimant processes never take a job once its hold has committed", async () => {
    const lane = "builds";
    const ids = (
      await insertJobs(
        q.store,
        Array.from({ length: 4000 }, () => ({ queue: lane })),
      )
    ).map((j) => j.id);
    // The later half, which claims in id order reach last: however fast the claimants are, most
    // of it is still queued when the hold commits, while they go on claiming beside it.
    const laterHalf = ids.slice(2000);
    const tries = (dir: string, n: number) =>
      Array.from({ length: n }, (_, i) => {
        const f = join(dir, `tries-${i}`);
        return existsSync(f) ? Number(readFileSync(f, "utf8") || 0) : 0;
      });
    let held: number[] = [];
    let conflicts = 0;
    type Out = { id: string; claimed: number[]; tries: number };
    const results = await raceChildren<Out>(
      childScript("lane-claimant.ts"),
      q.location,
      Array.from({ length: 8 }, () => ["--queue", lane]),
      {
        async duringRace(_done, barrierDir) {
          const started = async () =>
            (await q.store.read(async (tx) => tx.listJobs({ queue: lane, states: ["done", "running"], limit: 30 })))
              .length;
          await pollUntil("the claimants to take 20 jobs", async () => (await started()) >= 20, 60_000, 5);
          // Hold every job still queued, while the claimants claim: a claim that wins a job first makes
          // the hold CONFLICT (nothing held), and it is tried again.
          for (;;) {
            try {
              const out = await holdJobs(
                q.store,
                { filter: { queue: lane, states: ["queued"], held: false, ids: laterHalf } },
                true,
              );
              held = out.filter((j) => j.changed).map((j) => j.job_id);
              break;
            } catch (error) {
              if (!(error instanceof SpoolError) || error.code !== "CONFLICT") throw error;
              conflicts++;
            }
          }
          const atHold = tries(barrierDir, 8);
          await pollUntil(
            "10 claims per claimant after the hold",
            () => tries(barrierDir, 8).every((t, i) => t >= atHold[i]! + 10),
            60_000,
            5,
          );
          writeFileSync(join(barrierDir, "stop"), "");
        },
      },
    );
    const claimed = results.flatMap((r) => r.claimed);
    expect(claimed.length).toBeGreaterThanOrEqual(20);
    expect(held.length).toBeGreaterThan(0);
    expect(new Set(claimed).size).toBe(claimed.length);
    // No held job was claimed, ever: each is still queued with no `claimed` row.
    const heldSet = new Set(held);
    expect(claimed.filter((id) => heldSet.has(id))).toEqual([]);
    for (const id of held.slice(0, 50)) {
      expect(await jobOf(q.store, id)).toMatchObject({ state: "queued", held: true, last_attempt_no: 0 });
      expect((await eventsOf(q.store, id)).map((e) => e.event)).toEqual(["held"]);
    }
    expect(conflicts).toBeGreaterThanOrEqual(0);
  }, 120_000);
});
