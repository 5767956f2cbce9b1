/**
 * The recurring operations (`tx.recurring`, src/store/recurring.ts; docs/architecture.md
 * "Recurring jobs", "Hooks") on both drivers: the due-slot pass fires a slot once whatever
 * races it (real processes at a barrier), records skipped and missed slots, and outcome hooks
 * are added in the transaction that ends a job, from every path that ends one.
 */
import { expect, test } from "bun:test";
import type { Job } from "../../src/model/job.ts";
import type { Hook, Schedule } from "../../src/model/recurring.ts";
import { planSlots } from "../../src/ops/schedule-time.ts";
import type { Store } from "../../src/store/store.ts";
import { tickSchedules } from "../../src/store/verbs/schedules.ts";
import { attemptRecord, claimOne, forEachDriver, insertJob, jobOf } from "../support/store.ts";
import { childScript, raceChildren } from "./children.ts";

const TEMPLATE = {
  argv: ["true"],
  priority: 0,
  queue: "default",
  timeout_seconds: 60,
  max_retries: 0,
  max_crashes: null,
  tags: {},
  note: null,
  cwd: null,
  env: {},
};

function schedule(over: Partial<Schedule>): Schedule {
  return {
    name: "s",
    cron: null,
    every_seconds: 10,
    tz: null,
    job: TEMPLATE,
    queue: "default",
    catch_up: "last",
    overlap: "skip",
    paused: false,
    next_slot: 0,
    last_slot: null,
    last_job_id: null,
    created_at: 0,
    ...over,
  };
}

function hook(over: Partial<Hook>): Hook {
  return {
    name: "h",
    on_outcome: "dead",
    match_queue: null,
    match_tag_key: null,
    match_tag_value: null,
    job: { ...TEMPLATE, queue: "hooks" },
    created_at: 0,
    ...over,
  };
}

/** Jobs whose key starts with `prefix`, oldest first. */
async function keyed(store: Store, prefix: string): Promise<Job[]> {
  const jobs = await store.read(async (tx) => tx.listJobs({ limit: 1000 }));
  return jobs.filter((j) => j.idempotency_key?.startsWith(prefix)).sort((a, b) => a.id - b.id);
}

forEachDriver("recurring: the due-slot pass", (q) => {
  test("a due slot fires one job keyed sched:NAME:<slot>; a second pass at the same time fires nothing", async () => {
    const now = Math.floor(q.store.now());
    const slot = now - (now % 10); // a whole multiple of 10, due
    expect(await q.store.write(async (tx) => tx.recurring.addSchedule(schedule({ next_slot: slot })))).toBe(true);
    expect(await q.store.write(async (tx) => tx.recurring.addSchedule(schedule({ next_slot: slot })))).toBe(false);
    const first = await q.store.write(async (tx) => tx.recurring.fireDue(now, planSlots, 10));
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ schedule: "s", slot, outcome: "fired" });
    const job = await jobOf(q.store, first[0]!.job_id!);
    expect(job.idempotency_key).toBe(`sched:s:${new Date(slot * 1000).toISOString().replace(".000Z", "Z")}`);
    expect(job.state).toBe("queued");
    expect(await q.store.write(async (tx) => tx.recurring.fireDue(now, planSlots, 10))).toEqual([]);
    const [s] = await q.store.read(async (tx) => tx.recurring.listSchedules());
    expect(s).toMatchObject({ next_slot: slot + 10, last_slot: slot, last_job_id: job.id, last_job_state: "queued" });
    expect(await q.store.read(async (tx) => tx.recurring.earliestSlot())).toBe(slot + 10);
  });

  test("the guard: a pass that read an old next slot changes nothing", async () => {
    await q.store.write(async (tx) => tx.recurring.addSchedule(schedule({ next_slot: 100 })));
    // Another pass advanced it first: the plan made from the stale read (next_slot 100) is refused.
    await q.store.write(async (tx) => tx.recurring.fireDue(105, planSlots, 10));
    const stale = await q.store.write(async (tx) =>
      tx.recurring.fireDue(105, (s, now, active) => planSlots({ ...s, next_slot: 100 }, now, active), 10),
    );
    // The schedule's next slot is 110 now, not due at 105: nothing read, nothing fired.
    expect(stale).toEqual([]);
    expect(await keyed(q.store, "sched:s:")).toHaveLength(1);
  });

  test("a slot while the last job is active is recorded as skipped (--overlap skip)", async () => {
    await q.store.write(async (tx) => tx.recurring.addSchedule(schedule({ next_slot: 100 })));
    await q.store.write(async (tx) => tx.recurring.fireDue(100, planSlots, 10));
    const skipped = await q.store.write(async (tx) => tx.recurring.fireDue(110, planSlots, 10));
    expect(skipped).toEqual([{ schedule: "s", slot: 110, outcome: "skipped", job_id: null }]);
    const slots = await q.store.read(async (tx) => tx.recurring.slotsOf("s", 10));
    expect(slots.map((r) => [r.slot, r.outcome])).toEqual([
      [110, "skipped"],
      [100, "fired"],
    ]);
  });

  test("missed slots are one row with their count; paused schedules are not due; run-now adds a manual job", async () => {
    await q.store.write(async (tx) => tx.recurring.addSchedule(schedule({ next_slot: 100 })));
    const out = await q.store.write(async (tx) => tx.recurring.fireDue(145, planSlots, 10));
    expect(out).toEqual([
      { schedule: "s", slot: 140, outcome: "fired", job_id: expect.any(Number) },
      { schedule: "s", slot: 100, outcome: "missed", job_id: null, count: 4 },
    ]);
    expect(await q.store.write(async (tx) => tx.recurring.setPaused("s", true, 0))).toBe(true);
    expect(await q.store.write(async (tx) => tx.recurring.setPaused("s", true, 0))).toBe(false);
    expect(await q.store.read(async (tx) => tx.recurring.earliestSlot())).toBeNull();
    expect(await q.store.write(async (tx) => tx.recurring.fireDue(500, planSlots, 10))).toEqual([]);
    const manual = await q.store.write(async (tx) => tx.recurring.fireNow("s", 501.5));
    expect(manual!.job.idempotency_key).toBe("sched:s:manual:1970-01-01T00:08:21Z");
    expect(await q.store.write(async (tx) => tx.recurring.fireNow("nope", 501))).toBeNull();
    expect(await q.store.write(async (tx) => tx.recurring.setPaused("s", false, 510))).toBe(true);
    expect(await q.store.read(async (tx) => tx.recurring.earliestSlot())).toBe(510);
    expect(await q.store.write(async (tx) => tx.recurring.removeSchedule("s"))).toBe(true);
    expect(await q.store.read(async (tx) => tx.recurring.slotsOf("s", 10))).toEqual([]);
  });

  test("passes of 6 processes at once, 5 passes each, over a due schedule: one job per slot", async () => {
    const now = Math.floor(q.store.now());
    // Due now and one slot a second after: the passes span at least two slots.
    await q.store.write(async (tx) =>
      tx.recurring.addSchedule(
        schedule({ every_seconds: 1, next_slot: now - 3, catch_up: "all:10", overlap: "allow" }),
      ),
    );
    const results = await raceChildren<{ fired: number[] }>(
      childScript("ticker.ts"),
      q.location,
      Array.from({ length: 6 }, () => ["--passes", "5"]),
    );
    const fired = results.flatMap((r) => r.fired);
    const jobs = await keyed(q.store, "sched:s:");
    expect(fired.sort((a, b) => a - b)).toEqual(jobs.map((j) => j.id));
    const keys = jobs.map((j) => j.idempotency_key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(jobs.length).toBeGreaterThanOrEqual(4); // now-3 … now, all caught up
    // No slot between the first and the last is missing.
    const slots = keys.map((k) => Date.parse(k!.slice("sched:s:".length)) / 1000);
    for (let i = 1; i < slots.length; i++) expect(slots[i]! - slots[i - 1]!).toBe(1);
    const again = await tickSchedules(q.store);
    expect(again.outcomes.filter((o) => o.slot <= slots.at(-1)!)).toEqual([]);
  });
});

/** A job of lane `over.queue` taken to `state` after one attempt (worker w1); its id. */
async function ended(store: Store, state: "dead" | "done", over: Partial<Job> = {}): Promise<number> {
  const job = await insertJob(store, over);
  const { attempt } = await claimOne(store, { workerId: "w1", queue: job.queue });
  const rec = attemptRecord(job.id, attempt.attempt_no, "w1", store.now(), {
    attemptState: state === "done" ? "succeeded" : "failed",
    exitCode: state === "done" ? 0 : 1,
    jobState: state,
  });
  expect(await store.write(async (tx) => tx.recordAttempt(rec))).toBe(true);
  return job.id;
}

forEachDriver("recurring: outcome hooks", (q) => {
  test("a job ending dead adds the hook's job in the same transaction, values in its environment", async () => {
    await q.store.write(async (tx) =>
      tx.recurring.addHook(hook({ job: { ...TEMPLATE, queue: "hooks", env: { A: "1" } } })),
    );
    expect(await q.store.write(async (tx) => tx.recurring.addHook(hook({})))).toBe(false);
    const id = await ended(q.store, "dead", { queue: "work", tags: { team: "x" } });
    const [h] = await keyed(q.store, "hook:");
    expect(h!.idempotency_key).toBe(`hook:h:${id}:1:dead`);
    expect(h!.queue).toBe("hooks");
    expect(h!.argv).toEqual(["true"]);
    expect(h!.env).toMatchObject({
      A: "1",
      SPOOLCTL_HOOK_JOB_ID: String(id),
      SPOOLCTL_HOOK_STATE: "dead",
      SPOOLCTL_HOOK_EXIT_CODE: "1",
      SPOOLCTL_HOOK_LANE: "work",
    });
    expect(h!.env.SPOOLCTL_HOOK_OUTPUT_FILE).toEndWith(`${id}.1.stdout`);
    expect((await q.store.read(async (tx) => tx.eventsOf(h!.id))).map((e) => e.event)).toEqual(["added"]);
  });

  test("done and canceled hooks; lane and tag filters; a hook's own job triggers none", async () => {
    await q.store.write(async (tx) => tx.recurring.addHook(hook({ name: "ok", on_outcome: "done", match_queue: "a" })));
    await q.store.write(async (tx) =>
      tx.recurring.addHook(hook({ name: "cx", on_outcome: "canceled", match_tag_key: "k", match_tag_value: "v" })),
    );
    await q.store.write(async (tx) => tx.recurring.addHook(hook({ name: "all", on_outcome: "dead" })));
    await ended(q.store, "done", { queue: "b" }); // wrong lane
    const done = await ended(q.store, "done", { queue: "a" });
    const untagged = await insertJob(q.store);
    const tagged = await insertJob(q.store, { tags: { k: "v" } });
    for (const j of [untagged, tagged]) await q.store.write(async (tx) => tx.cancelQueuedJob(j.id, q.store.now()));
    const hooks = await keyed(q.store, "hook:");
    expect(hooks.map((j) => j.idempotency_key)).toEqual([`hook:ok:${done}:1:done`, `hook:cx:${tagged.id}:0:canceled`]);
    // The hooks' own jobs end dead: hook "all" (any dead job) is not triggered by them.
    for (const h of hooks) {
      const { job } = await claimOne(q.store, { workerId: "hw", queue: "hooks" });
      expect(job.id).toBe(h.id);
      const rec = attemptRecord(h.id, 1, "hw", q.store.now(), {
        attemptState: "failed",
        exitCode: 1,
        jobState: "dead",
      });
      expect(await q.store.write(async (tx) => tx.recordAttempt(rec))).toBe(true);
    }
    expect(await keyed(q.store, "hook:")).toHaveLength(2);
    expect(await q.store.write(async (tx) => tx.recurring.removeHook("all"))).toBe(true);
    expect((await q.store.read(async (tx) => tx.recurring.listHooks())).map((h) => h.name)).toEqual(["cx", "ok"]);
  });
});
