/**
 * Properties of the retry backoff, as `decideOutcome` (src/ops/outcome.ts) schedules it, for any
 * job, failure, settings within `config set`'s bounds and moment. The rules are
 * docs/architecture.md "Retries and backoff" (and "Storage conditions" for a full disk):
 *
 * - a requeue after a charged failure is due `min(backoff_cap, backoff_base ^ n)` seconds after
 *   now, n the new count of the budget charged (`attempts` for a job-owned failure, `crashes`
 *   for a reap, the disk losses for a full disk);
 * - so the delay never exceeds the cap, and never shrinks as failures add up;
 * - with the defaults (base 2, cap 60) the delays are 2, 4, 8, 16, 32, 60, 60 … seconds;
 * - `backoff_base`/`backoff_cap` are read when the retry is scheduled: the same failure under
 *   other settings is due after those settings' delay.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import fc from "fast-check";
import type { Job } from "../../src/model/job.ts";
import { type QueueSettings, settingsFrom } from "../../src/model/settings.ts";
import { decideOutcome, type ProcessEnd } from "../../src/ops/outcome.ts";
import { runs } from "../support/properties.ts";
import { now, runningJob, settings } from "./arbitraries.ts";

// Milliseconds of CPU a property; on a loaded machine its wall time may outlast bun's 5 s default.
setDefaultTimeout(60_000);

/** The documented delay: min(cap, base ^ n). */
const documented = (s: QueueSettings, n: number) => Math.min(s.backoff_cap, s.backoff_base ** n);

/** A job with room for any number of failures of either kind, nothing charged yet. */
const roomy = runningJob.map(
  (j): Job => ({ ...j, attempts: 0, crashes: 0, max_retries: 1000, max_crashes: null, cancel_requested: false }),
);

const failure: fc.Arbitrary<ProcessEnd> = fc.oneof(
  fc.record({ kind: fc.constant("exited" as const), code: fc.integer({ min: 1, max: 255 }) }),
  fc.record({ kind: fc.constant("signaled" as const), signal: fc.integer({ min: 1, max: 64 }) }),
  fc.constant({ kind: "timed_out" as const, code: null, signal: 9 }),
  fc.constant({ kind: "spawn_failed" as const, error: "cwd gone" }),
  fc.constant({ kind: "worker_crash" as const, error: "lease lost" }),
);

/** n failures in a row of `roomy` job `job`; the delays they were given. */
function delaysOf(job: Job, ends: ProcessEnd[], s: QueueSettings, t: number): number[] {
  const delays: number[] = [];
  let j = job;
  for (const end of ends) {
    const o = decideOutcome(j, end, s, t);
    expect(o.jobState).toBe("queued");
    expect(o.nextRunAt).toBe(t + o.backoffSeconds!);
    delays.push(o.backoffSeconds!);
    j = { ...j, attempts: o.attempts, crashes: o.crashes };
  }
  return delays;
}

test("a requeue is due min(backoff_cap, backoff_base ^ n) after now, n the new count of the budget charged", () => {
  fc.assert(
    fc.property(runningJob, failure, settings, now, (job, end, s, t) => {
      const o = decideOutcome({ ...job, cancel_requested: false }, end, s, t);
      if (o.jobState !== "queued") return;
      const n = end.kind === "worker_crash" ? o.crashes : o.attempts;
      expect(o.backoffSeconds).toBe(documented(s, n));
      expect(o.nextRunAt).toBe(t + documented(s, n));
    }),
    runs(),
  );
});

test("the delay never exceeds the cap and never shrinks as failures of one budget add up", () => {
  fc.assert(
    fc.property(roomy, fc.array(failure, { minLength: 1, maxLength: 30 }), settings, now, (job, ends, s, t) => {
      const delays = delaysOf(job, ends, s, t);
      for (const d of delays) expect(d).toBeLessThanOrEqual(s.backoff_cap);
      // Per budget: job-owned failures and reaps count on their own.
      for (const crash of [true, false]) {
        const own = delays.filter((_, i) => (ends[i]!.kind === "worker_crash") === crash);
        for (let i = 1; i < own.length; i++) expect(own[i]!).toBeGreaterThanOrEqual(own[i - 1]!);
      }
    }),
    runs(),
  );
});

test("defaults: 2, 4, 8, 16, 32, 60, 60 … seconds, for job-owned failures and reaps alike", () => {
  const defaults = settingsFrom({}); // nothing set: the defaults
  fc.assert(
    fc.property(roomy, failure, fc.integer({ min: 1, max: 30 }), now, (job, end, n, t) => {
      const delays = delaysOf(job, Array(n).fill(end), defaults, t);
      expect(delays).toEqual([2, 4, 8, 16, 32, 60, 60, 60].concat(Array(30).fill(60)).slice(0, n));
    }),
    runs(100),
  );
});

test("the settings are read when the retry is scheduled: the same failure under other settings gets their delay", () => {
  fc.assert(
    fc.property(runningJob, failure, settings, settings, now, (job, end, a, b, t) => {
      const j = { ...job, cancel_requested: false };
      const oa = decideOutcome(j, end, a, t);
      const ob = decideOutcome(j, end, b, t);
      if (oa.jobState !== "queued") return;
      expect(ob.jobState).toBe("queued"); // the budget does not depend on the settings
      const n = end.kind === "worker_crash" ? oa.crashes : oa.attempts;
      expect([oa.backoffSeconds, ob.backoffSeconds]).toEqual([documented(a, n), documented(b, n)]);
    }),
    runs(),
  );
});

test("a full disk's loss is backed off by its own count: min(cap, base ^ losses)", () => {
  fc.assert(
    fc.property(roomy, fc.integer({ min: 0, max: 1 }), settings, now, (job, lostBefore, s, t) => {
      const end: ProcessEnd = { kind: "output_write_failed", code: 1, signal: null, error: "full", lostBefore };
      const o = decideOutcome(job, end, s, t);
      expect([o.jobState, o.backoffSeconds]).toEqual(["queued", documented(s, lostBefore + 1)]);
    }),
    runs(),
  );
});
