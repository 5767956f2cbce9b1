/**
 * Query plans of the worker's hot path (Store.explainHotPath): every statement
 * the worker runs per job or per idle wake (the claim, nextDueAt, drainState,
 * the result, the heartbeat, the reaper's look-ups) is answered
 * from an index, never by a scan of the jobs table or a sort of the lane's
 * backlog (docs/architecture.md "The driver contract"). This checks the
 * plan, not a timing: a plan that walks every queued job is slow on 100,000
 * of them and fast on the handful a test holds.
 */
import { expect, test } from "bun:test";
import type { QueryPlan } from "../../src/store/store.ts";
import { forEachDriver, insertJobs } from "../support/store.ts";

/** The plan of `name`, as one text. */
function planOf(plans: QueryPlan[], name: string): string {
  const plan = plans.find((p) => p.name === name);
  if (!plan) throw new Error(`no plan named ${name} (have: ${plans.map((p) => p.name).join(", ")})`);
  return plan.plan.join("\n");
}

/** Statements whose plan must use the named index (per driver). */
const USES: Record<string, Record<string, string[]>> = {
  sqlite: {
    claimNext: ["idx_jobs_claimable"],
    nextDueAt: ["idx_jobs_due"],
    drainState: ["idx_jobs_due", "idx_jobs_backoff"],
    earliestSlot: ["idx_schedules_due"],
    settleAny: ["idx_job_needs_need"],
    settleMet: ["idx_job_needs_need"],
    settleFailed: ["idx_job_needs_need"],
  },
  postgres: {
    claimNext: ["idx_jobs_claimable"],
    claimNextSlotted: ["idx_jobs_claimable"],
    nextDueAt: ["idx_jobs_due"],
    drainState: ["idx_jobs_due", "idx_jobs_backoff"],
    earliestSlot: ["idx_schedules_due"],
    settleRound: ["idx_job_needs_need"],
  },
};

/** Every statement the worker's hot path runs, by the name the drivers give it. */
const HOT = {
  sqlite: [
    "claimNext",
    "claimTake",
    "nextDueAt",
    "drainState",
    "recordJob",
    "recordAttempt",
    "heartbeatJobs",
    "attemptProcess",
    "staleRunningJobs",
    "runningJobsByWorker",
    "getJob",
    "earliestSlot",
    "hooksOn",
    "settleAny",
    "settleMet",
    "settleFailed",
  ],
  postgres: [
    "claimNext",
    "claimNextSlotted",
    "nextDueAt",
    "drainState",
    "recordAttempt",
    "heartbeatJobs",
    "staleRunningJobs",
    "runningJobsByWorker",
    "getJobForUpdate",
    "earliestSlot",
    "hooksOn",
    "settleRound",
  ],
};

forEachDriver("hot-path query plans", (q, driver) => {
  test("every hot-path statement is answered from an index: no scan of jobs or attempts, no sort of the backlog", async () => {
    // A backlog in two lanes, some of it scheduled later, so that no plan is the trivial one of an empty table.
    const now = q.store.now();
    await insertJobs(
      q.store,
      Array.from({ length: 300 }, (_, i) => ({
        queue: i % 3 === 0 ? "other" : "default",
        priority: i % 4,
        next_run_at: now + (i % 5 === 0 ? 3600 : -i),
      })),
    );
    const plans = await q.store.explainHotPath();
    expect(plans.map((p) => p.name).sort()).toEqual([...HOT[driver.name]].sort());
    for (const { name, plan } of plans) {
      const text = plan.join("\n");
      if (driver.name === "sqlite") {
        // A walk of idx_schedules_due in order, stopped by LIMIT 1, is the first entry, not a scan.
        const scan = (l: string) =>
          /^SCAN (jobs|attempts)\b/.test(l) || (/^SCAN schedules\b/.test(l) && !/USING (COVERING )?INDEX/.test(l));
        expect({ name, scan: plan.filter(scan) }).toEqual({ name, scan: [] });
        expect({ name, sort: plan.filter((l) => l.includes("TEMP B-TREE")) }).toEqual({ name, sort: [] });
      } else {
        expect({ name, scan: plan.filter((l) => /Seq Scan on (jobs|attempts|schedules)\b/.test(l)) }).toEqual({
          name,
          scan: [],
        });
        // The claim sorts only the handful it claimed (its ledger rows, in claim order); the reads sort nothing.
        if (!name.startsWith("claim"))
          expect({ name, sort: plan.filter((l) => /\bSort\b/.test(l)) }).toEqual({ name, sort: [] });
      }
      for (const index of USES[driver.name]![name] ?? [])
        expect({ name, text }).toEqual({ name, text: expect.stringContaining(index) });
    }
    expect(planOf(plans, "nextDueAt")).not.toContain("idx_jobs_claimable");
    // A result's dependents are found from the needs' edges, never by walking jobs by state (the backlog).
    for (const name of driver.name === "sqlite" ? ["settleMet", "settleFailed"] : ["settleRound"])
      expect({ name, plan: planOf(plans, name) }).not.toEqual({
        name,
        plan: expect.stringMatching(/idx_jobs_(claimable|due|backoff)|idx_jobs_state_id \(state=\?\)/),
      });
  });
});
