/**
 * Properties of `decideOutcome` (src/ops/outcome.ts) for any job, attempt end, settings and
 * moment. Each property is a rule of docs/architecture.md, named beside it:
 *
 * - "Attempt states": the attempt's state and failure reason are the table's pair for how the
 *   process ended.
 * - "Retries and backoff": job-owned failures (non-zero exit, signal, timeout, spawn failure)
 *   charge `attempts` by one, a reap `crashes` by one, an interrupt nothing; budget left →
 *   `queued`, spent → `dead` with a `dead` event after the outcome's own; `--max-retries N`
 *   allows N + 1 failing attempts; a spawn failure of the command itself is dead at once.
 * - "Job states": a requested cancel wins over any requeue (`canceled`, its event after the
 *   outcome's own) and never turns `done` or `dead` into `canceled`; an exit 0 is `done`.
 * - "Storage conditions": an attempt lost to a full disk is charged to neither budget; the
 *   job is dead at the third such loss (`DISK_LOSS_LIMIT`).
 * - "Job states" (transitions): a requeue is due at or after now, an interrupt due now.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import fc from "fast-check";
import type { AttemptState, FailureReason, Job } from "../../src/model/job.ts";
import { DISK_LOSS_LIMIT, decideOutcome, type ProcessEnd } from "../../src/ops/outcome.ts";
import { runs } from "../support/properties.ts";
import { now, processEnd, runningJob, settings } from "./arbitraries.ts";

// Milliseconds of CPU a property; on a loaded machine its wall time may outlast bun's 5 s default.
setDefaultTimeout(60_000);

/** Whether the end is a job-owned failure (docs "Retries and backoff"). */
function jobOwnedFailure(end: ProcessEnd): boolean {
  return (
    (end.kind === "exited" && end.code !== 0) ||
    end.kind === "signaled" ||
    end.kind === "timed_out" ||
    end.kind === "spawn_failed"
  );
}

/** The "Attempt states" table: how an attempt ended → its state and failure reason. */
function attemptRow(end: ProcessEnd): [AttemptState, FailureReason | null] {
  switch (end.kind) {
    case "exited":
      return end.code === 0 ? ["succeeded", null] : ["failed", "process_exit"];
    case "signaled":
      return ["failed", "process_exit"];
    case "timed_out":
      return ["timed_out", "timeout"];
    case "spawn_failed":
      return ["failed", "spawn_failed"];
    case "worker_crash":
      return ["abandoned", "worker_crash"];
    case "canceled":
    case "interrupted":
      return ["canceled", "canceled"];
    case "output_write_failed":
      return ["failed", "process_exit"]; // "Storage conditions": failure reason process_exit
  }
}

test("the attempt's state and failure reason are the 'Attempt states' table's pair", () => {
  fc.assert(
    fc.property(runningJob, processEnd, settings, now, (job, end, s, t) => {
      const o = decideOutcome(job, end, s, t);
      expect([o.attemptState, o.failureReason]).toEqual(attemptRow(end));
    }),
    runs(),
  );
});

test("budgets: a job-owned failure charges attempts by one, a reap crashes by one, anything else nothing", () => {
  fc.assert(
    fc.property(runningJob, processEnd, settings, now, (job, end, s, t) => {
      const o = decideOutcome(job, end, s, t);
      const charged = [o.attempts - job.attempts, o.crashes - job.crashes];
      if (jobOwnedFailure(end)) expect(charged).toEqual([1, 0]);
      else if (end.kind === "worker_crash") expect(charged).toEqual([0, 1]);
      else expect(charged).toEqual([0, 0]);
    }),
    runs(),
  );
});

test("after charging: budget left → queued (or canceled when asked), spent → dead, the dead event last", () => {
  fc.assert(
    fc.property(runningJob, processEnd, settings, now, (job, end, s, t) => {
      const o = decideOutcome(job, end, s, t);
      const permanentSpawn = end.kind === "spawn_failed" && end.permanent === true && s.retry_spawn_failures === 0;
      let spent: boolean | null = null;
      if (jobOwnedFailure(end)) spent = permanentSpawn || o.attempts > job.max_retries;
      if (end.kind === "worker_crash") spent = job.max_crashes !== null && o.crashes > job.max_crashes;
      if (spent === null) return; // not charged to a budget: the properties below
      const requeued = job.cancel_requested ? "canceled" : "queued";
      expect(o.jobState).toBe(spent ? "dead" : requeued);
      expect(o.events.includes("dead")).toBe(spent);
      if (spent) expect(o.events.at(-1)).toBe("dead");
    }),
    runs(),
  );
});

test("--max-retries N: a job whose every attempt fails is dead after exactly N + 1 attempts", () => {
  fc.assert(
    fc.property(
      runningJob,
      fc.array(processEnd.filter(jobOwnedFailure), { minLength: 1, maxLength: 40 }),
      settings,
      now,
      (start, ends, s, t) => {
        // Non-permanent failures only: a permanent spawn failure is dead at once (checked above).
        let job: Job = { ...start, attempts: 0, cancel_requested: false };
        let failed = 0;
        for (const end of ends) {
          const e = end.kind === "spawn_failed" ? { ...end, permanent: false } : end;
          const o = decideOutcome(job, e, s, t);
          failed++;
          if (o.jobState === "dead") {
            expect(failed).toBe(start.max_retries + 1);
            return;
          }
          expect(o.jobState).toBe("queued");
          job = { ...job, attempts: o.attempts, crashes: o.crashes, next_run_at: o.nextRunAt };
        }
        expect(failed).toBeLessThan(start.max_retries + 1); // ran out of ends before the budget
      },
    ),
    runs(),
  );
});

test("a spawn failure of the command itself is dead at once, unless retry_spawn_failures says retry by budget", () => {
  fc.assert(
    fc.property(runningJob, fc.string(), settings, now, (job, error, s, t) => {
      const o = decideOutcome(job, { kind: "spawn_failed", error, permanent: true }, s, t);
      if (s.retry_spawn_failures === 0) expect([o.jobState, o.events]).toEqual(["dead", ["failed", "dead"]]);
      else
        expect(o.jobState).toBe(o.attempts > job.max_retries ? "dead" : job.cancel_requested ? "canceled" : "queued");
    }),
    runs(),
  );
});

test("a requested cancel wins over a requeue, its event after the outcome's own, and never changes done or dead", () => {
  fc.assert(
    fc.property(runningJob, processEnd, settings, now, (job, end, s, t) => {
      const asked = decideOutcome({ ...job, cancel_requested: true }, end, s, t);
      const plain = decideOutcome({ ...job, cancel_requested: false }, end, s, t);
      expect(asked.jobState).not.toBe("queued");
      if (plain.jobState === "queued") {
        expect(asked.jobState).toBe("canceled");
        expect(asked.events).toEqual([...plain.events, "canceled"]);
        expect(asked.backoffSeconds).toBeNull();
      } else {
        expect(asked).toEqual(plain);
      }
    }),
    runs(),
  );
});

test("an exit 0 is done with a succeeded event, whatever was asked; nothing charged", () => {
  fc.assert(
    fc.property(runningJob, settings, now, (job, s, t) => {
      const o = decideOutcome(job, { kind: "exited", code: 0 }, s, t);
      expect([o.jobState, o.events, o.attempts, o.crashes]).toEqual(["done", ["succeeded"], job.attempts, job.crashes]);
    }),
    runs(),
  );
});

test("an interrupt is charged to nothing and due at once; a requeue is never due before now", () => {
  fc.assert(
    fc.property(runningJob, processEnd, settings, now, (job, end, s, t) => {
      const o = decideOutcome(job, end, s, t);
      if (o.jobState !== "queued") return;
      expect(o.nextRunAt).toBeGreaterThanOrEqual(t);
      if (end.kind === "interrupted") {
        expect([o.nextRunAt, o.backoffSeconds, o.events]).toEqual([t, null, ["interrupted"]]);
      }
    }),
    runs(),
  );
});

test("an attempt lost to a full disk: neither budget charged; dead at the third loss, queued before", () => {
  fc.assert(
    fc.property(
      runningJob,
      fc.integer({ min: 0, max: DISK_LOSS_LIMIT + 2 }),
      settings,
      now,
      (job, lostBefore, s, t) => {
        const end = {
          kind: "output_write_failed",
          code: 1,
          signal: null,
          error: "no space left on device",
          lostBefore,
        };
        const o = decideOutcome({ ...job, cancel_requested: false }, end as ProcessEnd, s, t);
        expect([o.attempts, o.crashes]).toEqual([job.attempts, job.crashes]);
        expect(o.jobState).toBe(lostBefore + 1 >= DISK_LOSS_LIMIT ? "dead" : "queued");
      },
    ),
    runs(),
  );
});
