/**
 * Helpers shared by the conformance cases: a queue per test for a driver, job
 * and record builders, and polling with a deadline.
 */
import { afterEach, beforeEach, describe, expect, setDefaultTimeout } from "bun:test";
import type { Job, NewJob } from "../../src/model/job.ts";
import type { AttemptRecord, ClaimedJob, ClaimRequest } from "../../src/store/attempt-types.ts";
import type { QueueLocation } from "../../src/store/location.ts";
import type { Store } from "../../src/store/store.ts";
import { DRIVERS, type DriverFixture, OPEN_TIMEOUT_MS, type OpenedQueue } from "../store/drivers.ts";

/** The queue of the running test (valid inside a test of {@link forEachDriver}). */
export interface QueueHandle {
  readonly store: Store;
  readonly location: QueueLocation;
  readonly driver: DriverFixture;
  /** Ages a job's lease by `seconds` (see {@link DriverFixture.backdateLease}). */
  backdateLease(jobId: number, seconds: number): Promise<void>;
}

/**
 * One `describe` block per driver, named `<driver>: <title>`, each test with a
 * fresh queue (opened before, closed and removed after).
 */
export function forEachDriver(title: string, body: (q: QueueHandle, driver: DriverFixture) => void): void {
  // A case against PostgreSQL pays a CREATE DATABASE and round trips, and
  // `bun test test/store/` runs without package.json's --timeout. Set here,
  // at each file's load: the setting is per file, and this module is loaded
  // once. (Hooks get their own timeouts below: setDefaultTimeout does not
  // reach them in Bun 1.4.5.)
  setDefaultTimeout(60_000);
  for (const driver of DRIVERS) {
    describe(`${driver.name}: ${title}`, () => {
      let opened: OpenedQueue | null = null;
      beforeEach(async () => {
        opened = await driver.open();
      }, OPEN_TIMEOUT_MS);
      afterEach(async () => {
        const o = opened;
        opened = null;
        await o?.cleanup();
      }, OPEN_TIMEOUT_MS);
      const handle: QueueHandle = {
        get store() {
          if (!opened) throw new Error("no queue open (used outside a test?)");
          return opened.store;
        },
        get location() {
          if (!opened) throw new Error("no queue open (used outside a test?)");
          return opened.location;
        },
        driver,
        backdateLease(jobId, seconds) {
          if (!opened) throw new Error("no queue open (used outside a test?)");
          return driver.backdateLease(opened.location, jobId, seconds);
        },
      };
      body(handle, driver);
    });
  }
}

/** A new job with test defaults: due long ago, lane `default`. */
export function newJob(over: Partial<NewJob> = {}): NewJob {
  return {
    argv: ["true"],
    priority: 0,
    queue: "default",
    next_run_at: 0,
    timeout_seconds: 300,
    max_retries: 3,
    max_crashes: null,
    idempotency_key: null,
    tags: {},
    note: null,
    cwd: null,
    env: {},
    ...over,
  };
}

/** Inserts jobs in one write, in order; returns the stored rows. */
export async function insertJobs(store: Store, jobs: Partial<NewJob>[], now = store.now()): Promise<Job[]> {
  return store.write(async (tx) => {
    const out: Job[] = [];
    for (const j of jobs) out.push(await tx.insertJob(newJob(j), now));
    return out;
  });
}

/** Inserts one job. */
export async function insertJob(store: Store, over: Partial<NewJob> = {}, now = store.now()): Promise<Job> {
  return (await insertJobs(store, [over], now))[0]!;
}

/** `store.claimJobs` with test defaults (lane `default`, worker w1, one job, no slots, now). */
export function claim(store: Store, over: Partial<ClaimRequest> = {}): Promise<ClaimedJob[]> {
  return store.claimJobs({
    queue: "default",
    workerId: "w1",
    workerPid: 4242,
    slots: null,
    limit: 1,
    now: store.now(),
    ...over,
  });
}

/** Claims exactly one job, failing the test when none is claimed. */
export async function claimOne(store: Store, over: Partial<ClaimRequest> = {}): Promise<ClaimedJob> {
  const got = await claim(store, { ...over, limit: 1 });
  if (got.length !== 1) throw new Error(`expected to claim one job, got ${got.length}`);
  return got[0]!;
}

/** An {@link AttemptRecord}: by default "succeeded → done" with a `succeeded` event. */
export function attemptRecord(
  jobId: number,
  attemptNo: number,
  workerId: string,
  now: number,
  over: Partial<AttemptRecord> = {},
): AttemptRecord {
  return {
    jobId,
    attemptNo,
    workerId,
    now,
    attemptState: "succeeded",
    exitCode: 0,
    signal: null,
    error: null,
    failureReason: null,
    jobState: "done",
    events: [{ event: "succeeded", workerId, detail: JSON.stringify({ attempt: attemptNo }) }],
    attempts: 0,
    crashes: 0,
    nextRunAt: now,
    ...over,
  };
}

/** Records an attempt in its own write; returns what recordAttempt returned. */
export function record(store: Store, rec: AttemptRecord): Promise<boolean> {
  return store.write(async (tx) => tx.recordAttempt(rec));
}

/** Reads a job, failing when it does not exist. */
export async function jobOf(store: Store, id: number): Promise<Job> {
  const job = await store.read(async (tx) => tx.getJob(id));
  if (!job) throw new Error(`job ${id} does not exist`);
  return job;
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function pollUntil<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000,
  everyMs = 10,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await check();
    if (got !== undefined && got !== false) return got;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(everyMs);
  }
}

/**
 * How far (seconds) a lease written by the driver may be from `store.now()`:
 * a driver may write leases with the database's clock rather than the
 * claim's `now` (docs/architecture.md "Clocks").
 */
export const CLOCK_SLACK = 5;

/** Sorted copy of numbers. */
export const sorted = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);

/**
 * A job taken to `done` or `dead` after one attempt claimed by worker `w1`
 * (3 retries and 1 crash charged); resolves with its id.
 */
export async function endedJob(store: Store, jobState: "dead" | "done", over: Partial<NewJob> = {}): Promise<number> {
  const job = await insertJob(store, over);
  const { attempt } = await claimOne(store, { workerId: "w1" });
  expect(attempt.job_id).toBe(job.id);
  const rec = attemptRecord(job.id, 1, "w1", store.now(), {
    attemptState: jobState === "done" ? "succeeded" : "failed",
    exitCode: jobState === "done" ? 0 : 1,
    jobState,
    attempts: 3,
    crashes: 1,
  });
  expect(await record(store, rec)).toBe(true);
  return job.id;
}

/**
 * What `retry --force` does to a running job's attempt 1 (docs/architecture.md "Retry"): the
 * attempt closed `abandoned`, the job requeued from running, due at `dueAt` (the hold-off),
 * in one write. Whether the requeue took.
 */
export function forceRetried(store: Store, jobId: number, now: number, dueAt: number): Promise<boolean> {
  return store.write(async (tx) => {
    await tx.closeAttempt({ jobId, attemptNo: 1, state: "abandoned", failureReason: null, error: "forced", now });
    return tx.requeueJob(jobId, "running", dueAt);
  });
}
