/**
 * failureGroups and the triage filters of listJobs (finishedSince,
 * failureReasons, commandGlob): dead and canceled jobs grouped by exact
 * failure in one statement (docs/architecture.md "Triage").
 */
import { expect, test } from "bun:test";
import type { FailureReason, JobFilter, NewJob } from "../../src/model/job.ts";
import type { AttemptRecord } from "../../src/store/attempt-types.ts";
import type { Store } from "../../src/store/store.ts";
import { attemptRecord, claimOne, forEachDriver, insertJob, record, sorted } from "../support/store.ts";

/** A job that ran once and died as told; returns its id. */
async function deadJob(store: Store, over: Partial<NewJob>, how: Partial<AttemptRecord>, at: number): Promise<number> {
  const job = await insertJob(store, over);
  const { attempt } = await claimOne(store, { queue: job.queue, workerId: "w1" });
  const rec = attemptRecord(job.id, attempt.attempt_no, "w1", at, {
    attemptState: "failed",
    exitCode: 3,
    signal: null,
    error: "exited with code 3",
    failureReason: "process_exit",
    jobState: "dead",
    attempts: 1,
    events: [],
    ...how,
  });
  expect(await record(store, rec)).toBe(true);
  return job.id;
}

/** A queued job canceled before it ran. */
async function canceledJob(store: Store, over: Partial<NewJob>, at: number): Promise<number> {
  const job = await insertJob(store, over);
  expect(await store.write((tx) => tx.cancelQueuedJob(job.id, at))).toBe(true);
  return job.id;
}

const timeout = {
  attemptState: "timed_out",
  exitCode: null,
  signal: 15,
  error: "timed out",
  failureReason: "timeout" as FailureReason,
} as const;

forEachDriver("failureGroups", (q) => {
  test("groups by state, reason, exit code, signal and exact stderr line; counts, lanes, first/last seen, ids newest first", async () => {
    const t = q.store.now();
    const a1 = await deadJob(q.store, { argv: ["curl", "h1"] }, { stderrLastLine: "connect to host 1" }, t - 30);
    const a2 = await deadJob(
      q.store,
      { argv: ["curl", "h1"], queue: "net" },
      { stderrLastLine: "connect to host 1" },
      t - 10,
    );
    const b = await deadJob(q.store, { argv: ["curl", "h2"] }, { stderrLastLine: "connect to host 2" }, t - 20);
    const c = await deadJob(q.store, {}, { ...timeout, stderrLastLine: "" }, t - 5);
    const d = await deadJob(q.store, {}, { stderrLastLine: "connect to host 1", exitCode: 4 }, t - 5);
    const e = await canceledJob(q.store, {}, t - 1);
    await insertJob(q.store); // queued: never grouped
    const groups = await q.store.read((tx) => tx.failureGroups({}, 1));
    const byLine = (line: string | null, exit: number | null, state = "dead") =>
      groups.find((g) => g.stderr_last_line === line && g.exit_code === exit && g.state === state);
    expect(groups).toHaveLength(5);
    expect(byLine("connect to host 1", 3)).toEqual({
      state: "dead",
      failure_reason: "process_exit",
      exit_code: 3,
      signal: null,
      stderr_signature: null,
      stderr_last_line: "connect to host 1",
      count: 2,
      first_seen: t - 30,
      last_seen: t - 10,
      lanes: ["default", "net"],
      job_ids: [a2, a1],
    });
    expect(byLine("connect to host 2", 3)).toMatchObject({ count: 1, job_ids: [b], lanes: ["default"] });
    expect(byLine("connect to host 1", 4)).toMatchObject({ count: 1, job_ids: [d] });
    expect(byLine("", null)).toMatchObject({ failure_reason: "timeout", signal: 15, count: 1, job_ids: [c] });
    // Canceled before it ran: reason canceled, no stderr ("").
    expect(groups.find((g) => g.state === "canceled")).toMatchObject({
      failure_reason: "canceled",
      exit_code: null,
      signal: null,
      stderr_signature: "",
      stderr_last_line: null,
      count: 1,
      job_ids: [e],
      first_seen: t - 1,
    });
  });

  test("signatures of the asked mask version group together whatever the raw lines; another version's rows fall back to the raw line", async () => {
    const t = q.store.now();
    const a = await deadJob(
      q.store,
      {},
      { stderrLastLine: "connect to host 1", stderrSignature: "1|connect to host <n>" },
      t - 3,
    );
    const b = await deadJob(
      q.store,
      {},
      { stderrLastLine: "connect to host 2", stderrSignature: "1|connect to host <n>" },
      t - 2,
    );
    const old = await deadJob(
      q.store,
      {},
      { stderrLastLine: "connect to host 3", stderrSignature: "0|connect to host #" },
      t - 1,
    );
    const groups = await q.store.read((tx) => tx.failureGroups({}, 1));
    expect(groups).toHaveLength(2);
    expect(groups.find((g) => g.stderr_signature !== null)).toMatchObject({
      stderr_signature: "connect to host <n>",
      stderr_last_line: null,
      count: 2,
      job_ids: [b, a],
      first_seen: t - 3,
      last_seen: t - 2,
    });
    expect(groups.find((g) => g.stderr_signature === null)).toMatchObject({
      stderr_last_line: "connect to host 3",
      count: 1,
      job_ids: [old],
    });
    // Asked for version 0, the old row is the one with a signature.
    const v0 = await q.store.read((tx) => tx.failureGroups({}, 0));
    expect(v0.find((g) => g.stderr_signature !== null)).toMatchObject({
      stderr_signature: "connect to host #",
      job_ids: [old],
    });
  });

  test("an attempt recorded without its stderr line is a group of its own (line null), so the reader can read it", async () => {
    const t = q.store.now();
    const x = await deadJob(q.store, {}, {}, t);
    const y = await deadJob(q.store, {}, {}, t);
    const groups = await q.store.read((tx) => tx.failureGroups({}, 1));
    expect(groups.map((g) => [g.stderr_signature, g.stderr_last_line, g.job_ids]).sort()).toEqual(
      [
        [null, null, [x]],
        [null, null, [y]],
      ].sort(),
    );
  });

  test("filters: states, lane, tags, finished since, failure reasons, command glob; the same in listJobs", async () => {
    const t = q.store.now();
    const old = await deadJob(
      q.store,
      { argv: ["make", "build"], tags: { team: "a" } },
      { stderrLastLine: "x" },
      t - 7200,
    );
    const fresh = await deadJob(q.store, { argv: ["make", "test"], queue: "ci" }, { stderrLastLine: "x" }, t - 60);
    const slow = await deadJob(
      q.store,
      { argv: ["curl", "-s", "http://x/a b"], tags: { team: "a" } },
      { ...timeout, stderrLastLine: "" },
      t - 30,
    );
    const canceled = await canceledJob(q.store, { argv: ["make", "docs"] }, t - 10);
    const ids = async (filter: Omit<JobFilter, "limit">) => {
      const groups = await q.store.read((tx) => tx.failureGroups(filter, 1));
      const listed = await q.store.read((tx) =>
        tx.listJobs({ ...filter, states: filter.states ?? ["dead", "canceled"], limit: 100 }),
      );
      const fromGroups = sorted(groups.flatMap((g) => g.job_ids));
      expect(sorted(listed.map((j) => j.id))).toEqual(fromGroups); // listJobs selects the same jobs
      return fromGroups;
    };
    expect(await ids({})).toEqual(sorted([old, fresh, slow, canceled]));
    expect(await ids({ states: ["dead"] })).toEqual(sorted([old, fresh, slow]));
    expect(await ids({ states: ["canceled"] })).toEqual([canceled]);
    expect(await ids({ queue: "ci" })).toEqual([fresh]);
    expect(await ids({ tags: { team: "a" } })).toEqual(sorted([old, slow]));
    expect(await ids({ finishedSince: t - 3600 })).toEqual(sorted([fresh, slow, canceled]));
    expect(await ids({ failureReasons: ["timeout"] })).toEqual([slow]);
    expect(await ids({ failureReasons: ["canceled", "process_exit"] })).toEqual(sorted([old, fresh, canceled]));
    expect(await ids({ commandGlob: "make *" })).toEqual(sorted([old, fresh, canceled]));
    expect(await ids({ commandGlob: "make t?st" })).toEqual([fresh]);
    expect(await ids({ commandGlob: "make [bd]*" })).toEqual(sorted([old, canceled]));
    expect(await ids({ commandGlob: "make [!bd]*" })).toEqual([fresh]);
    expect(await ids({ commandGlob: "*a b" })).toEqual([slow]); // argv joined by single spaces
    expect(await ids({ commandGlob: "make" })).toEqual([]); // the whole command line must match
    expect(await ids({ commandGlob: "curl -s http://x/(a|b)*" })).toEqual([]); // regex characters are literal
    expect(await ids({ commandGlob: "*build", tags: { team: "a" }, failureReasons: ["process_exit"] })).toEqual([old]);
  });
});
