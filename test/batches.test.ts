/**
 * Batches with one verdict and fail-fast (issue 20 items 2-3; docs/architecture.md
 * "Batches") through the real CLI and real workers; SPOOLCTL_TEST_DB runs it on PostgreSQL.
 */
import { beforeEach, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { addJob, gatedJob } from "./support/jobs.ts";
import { FAST_KNOBS, type TempQueue, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

setDefaultTimeout(120_000);

let workers: ReturnType<TempQueue["spawn"]>[] = [];
const q = useTempQueue({
  teardown: async () => {
    for (const w of workers) w.kill("SIGTERM");
    await Promise.all(workers.map((w) => w.exited));
  },
});
beforeEach(() => {
  workers = [];
});

/** A worker in the background, stopped after the test. */
function startWorker(...args: string[]) {
  const w = q.spawn(["work", "--poll-interval", "0.05", ...args], { env: FAST_KNOBS });
  workers.push(w);
  return w;
}

/** The batch as `batch show --json` reports it. */
async function batchOf(name: string) {
  const r = await q.json(["batch", "show", name]);
  expect(r.code).toBe(0);
  return r.env.data;
}

/** A waiter's exit code and JSON envelope. */
async function ended(waiter: ReturnType<TempQueue["spawn"]>) {
  const [stdout, code] = await Promise.all([new Response(waiter.stdout).text(), waiter.exited]);
  return { code, env: JSON.parse(stdout) };
}

test("wait --batch never exits before a late-added job ends, nor before the batch is sealed", async () => {
  const first = await addJob(q, "--batch", "ci-1", "--", "true");
  const waiter = q.spawn(["wait", "--batch", "ci-1", "--json", "--poll-interval", "0.05"]);
  startWorker();
  await waitFor("the first job done", async () => (await q.job(first))?.state === "done");
  // Every job it has ended, but the batch is open: its last job may not exist yet.
  const late = gatedJob(q, "late");
  const second = await addJob(q, "--batch", "ci-1", "--", ...late.argv);
  await waitFor("the late job running", async () => (await q.job(second))?.state === "running");
  expect(waiter.exitCode).toBeNull();
  // Sealed while the late job runs: still waiting for it.
  expect((await q.run(["batch", "seal", "ci-1"])).code).toBe(0);
  await waitFor("the waiter to see the seal", async () => (await batchOf("ci-1")).sealed);
  expect(waiter.exitCode).toBeNull();
  late.release();
  const { code, env } = await ended(waiter);
  expect(code).toBe(0);
  expect((await q.job(second))!.state).toBe("done");
  expect(env.data.batch).toMatchObject({
    name: "ci-1",
    sealed: true,
    total: 2,
    settled: true,
    all_succeeded: true,
    failed: false,
  });
  expect(env.data.counts).toEqual({ queued: 0, running: 0, done: 2, dead: 0, canceled: 0 });
  expect(Object.keys(env.data.jobs).map(Number).sort()).toEqual([first, second]);
});

test("a batch added with --seal on its last add, one job dead → wait exits 6; a sealed batch takes no job", async () => {
  await addJob(q, "--batch", "b", "--", "true");
  await addJob(q, "--batch", "b", "--seal", "--max-retries", "0", "--", "sh", "-c", "exit 3");
  const refused = await q.json(["add", "--batch", "b", "--json", "--", "true"]);
  expect([refused.code, refused.env.errors[0].code]).toEqual([5, "CONFLICT"]);
  startWorker();
  const r = await q.json(["wait", "--batch", "b"]);
  expect(r.code).toBe(6);
  expect(r.env.data.counts).toMatchObject({ done: 1, dead: 1 });
  expect(r.env.data.all_succeeded).toBe(false);
  // One field, one meaning: `failed` whenever the text says "failed", fail-fast or not.
  expect(r.env.data.batch).toMatchObject({ failed: true, failed_at: null, failed_job_id: null, all_succeeded: false });
  expect((await q.run(["batch", "show", "b"])).stdout).toContain("b: failed;");
  // list, status-like views and the ledger take --batch.
  const listed = await q.json(["list", "--batch", "b"]);
  expect(listed.env.data.jobs.map((j: { batch: string }) => j.batch)).toEqual(["b", "b"]);
  const events = await q.json(["events", "--batch", "b"]);
  expect(new Set(events.env.data.events.map((e: { job_id: number }) => e.job_id)).size).toBe(2);
  // One run's JUnit report; retry --all --batch runs the failed one again (and only it).
  await addJob(q, "--max-retries", "0", "--", "sh", "-c", "exit 4"); // dead, outside the batch
  const report = await q.json(["report", "--batch", "b", "--junit", join(q.dir, "junit.xml")]);
  expect(report.env.data.totals).toMatchObject({ jobs: 2, passed: 1, failed: 1 });
  await waitFor("the outsider dead", async () => (await q.jobs()).filter((j) => j.state === "dead").length === 2);
  const retried = await q.json(["retry", "--all", "--batch", "b"]);
  expect(retried.env.data.count).toBe(1);
  const again = await q.json(["wait", "--batch", "b"]);
  expect(again.code).toBe(6);
  expect((await q.jobs()).filter((j) => j.batch === "b" && j.last_attempt_no === 2).length).toBe(1);
});

test("an empty sealed batch ends at once with a warning; unknown batches and bad flags are clear errors", async () => {
  writeFileSync(join(q.dir, "none.ndjson"), "");
  const added = await q.json(["add", "--batch", "empty", "--from", join(q.dir, "none.ndjson")]);
  expect(added.code).toBe(0);
  const r = await q.json(["wait", "--batch", "empty"]);
  expect(r.code).toBe(0);
  expect(r.env.warnings.map((w: { code: string }) => w.code)).toEqual(["EMPTY_BATCH"]);
  const unknown = await q.json(["wait", "--batch", "nope"]);
  expect([unknown.code, unknown.env.errors[0].code]).toEqual([1, "NOT_FOUND"]);
  // A typo'd batch is NOT_FOUND wherever --batch selects, not an empty answer; a known empty one is empty.
  for (const argv of [
    ["list", "--batch", "nope"],
    ["list", "--group", "--batch", "nope"],
    ["report", "--batch", "nope"],
    ["events", "--batch", "nope"],
    ["retry", "--all", "--batch", "nope"],
  ]) {
    const r = await q.json(argv);
    expect([argv.join(" "), r.env.errors[0]?.code, r.env.errors[0]?.message]).toEqual([
      argv.join(" "),
      "NOT_FOUND",
      'no batch named "nope": no job was added to it',
    ]);
  }
  expect((await q.json(["list", "--batch", "empty"])).env.data.count).toBe(0);
  const bad = await q.json(["add", "--batch", "-x", "--json", "--", "true"]);
  expect(bad.env.errors[0].code).toBe("INVALID_INPUT");
  const loneSeal = await q.json(["add", "--seal", "--json", "--", "true"]);
  expect([loneSeal.code, loneSeal.env.errors[0].message]).toEqual([1, "--seal acts on a batch; give --batch NAME too"]);
  const both = await q.json(["wait", "1", "--batch", "x"]);
  expect(both.env.errors[0].code).toBe("INVALID_INPUT");
});

test("wait --batch says NO_WORKER when no live worker serves its jobs' lane, and TIMEOUT names the open seal", async () => {
  await addJob(q, "--batch", "idle", "--queue", "nobody", "--", "true");
  // NO_WORKER comes after a 2 s grace, looked for once a second: 10 s leaves a loaded machine room.
  const r = await q.run(["wait", "--batch", "idle", "--timeout", "10"]);
  expect(r.code).toBe(4);
  expect(r.stderr).toContain("NO_WORKER: no live worker serves lane nobody");
  expect(r.stderr).toContain("it is not sealed yet (spoolctl batch seal idle");
});

/** A --from batch: one job that fails at once (highest priority, so claimed first) and `n` slow ones. */
function failingBatch(n: number, slow: string[]): string {
  const lines = [JSON.stringify({ argv: ["sh", "-c", "exit 1"], max_retries: 0, priority: 10 })];
  for (let i = 0; i < n; i++) lines.push(JSON.stringify({ argv: slow, note: `slow ${i}` }));
  const file = join(q.dir, "batch.ndjson");
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

test("wait --batch --fail-fast: the first dead job cancels every queued job of the batch and the wait exits 6", async () => {
  const slow = gatedJob(q, "slow");
  expect((await q.run(["add", "--batch", "ff", "--from", failingBatch(6, slow.argv)])).code).toBe(0);
  const waiter = q.spawn(["wait", "--batch", "ff", "--fail-fast", "--json", "--poll-interval", "0.05"]);
  await waitFor("the waiter to set fail-fast", async () => (await batchOf("ff")).fail_fast === "queued");
  startWorker("--concurrency", "2");
  const { code, env } = await ended(waiter);
  const exitedAt = Date.now() / 1000;
  expect(code).toBe(6);
  expect(env.data.batch.failed).toBe(true);
  const queued = await q.json(["list", "--batch", "ff", "--state", "queued"]);
  expect(queued.env.data.jobs).toEqual([]);
  const jobs = (await q.jobs()).filter((j) => j.batch === "ff");
  const canceled = jobs.filter((j) => j.state === "canceled");
  // One slow job may have been claimed beside the failing one; every other one was canceled, none ran.
  expect(canceled.length).toBeGreaterThanOrEqual(5);
  for (const j of canceled) {
    expect(j.last_error).toContain("fail_fast");
    expect(j.last_attempt_no).toBe(0);
  }
  const dead = jobs.find((j) => j.state === "dead")!;
  console.log(`fail-fast: waiter exited ${(exitedAt - dead.finished_at!).toFixed(2)} s after the dead outcome`);
  slow.release();
});

test("fail-fast holds when the waiter dies: the queue keeps it (add --fail-fast=now stops running jobs too)", async () => {
  const slow = gatedJob(q, "slow");
  // Set at add: no waiter at all.
  expect((await q.run(["add", "--batch", "now", "--fail-fast=now", "--from", failingBatch(3, slow.argv)])).code).toBe(
    0,
  );
  // A waiter that sets --fail-fast and is killed before anything ran.
  const waiter = q.spawn(["wait", "--batch", "now", "--fail-fast", "--json"]);
  await waitFor("fail-fast on the batch", async () => (await batchOf("now")).fail_fast === "now");
  waiter.kill("SIGKILL");
  await waiter.exited;
  startWorker("--concurrency", "2");
  await waitFor("the batch settled", async () => (await batchOf("now")).settled, 60_000);
  // The slow job running beside the failing one was stopped as cancel --running does.
  await waitFor(
    "no job of the batch running",
    async () => (await q.jobs()).filter((j) => j.batch === "now" && j.state === "running").length === 0,
    60_000,
  );
  const jobs = (await q.jobs()).filter((j) => j.batch === "now");
  expect(jobs.filter((j) => j.state === "queued")).toEqual([]);
  expect(jobs.filter((j) => j.state === "done")).toEqual([]);
  expect(jobs.filter((j) => j.state === "dead").length).toBe(1);
  expect(jobs.filter((j) => j.state === "canceled").length).toBe(3);
  const r = await q.json(["wait", "--batch", "now"]);
  expect(r.code).toBe(6);
  slow.release();
});

test("wait --queue and --tag wait for the selection, jobs added while waiting included", async () => {
  const gate = gatedJob(q, "g");
  const a = await addJob(q, "--queue", "lane1", "--tag", "ci=1", "--", ...gate.argv);
  await addJob(q, "--queue", "other", "--", "sleep", "1000");
  const waiter = q.spawn(["wait", "--queue", "lane1", "--tag", "ci=1", "--json", "--poll-interval", "0.05"]);
  startWorker("--queue", "lane1");
  await waitFor("a running", async () => (await q.job(a))?.state === "running");
  const b = await addJob(q, "--queue", "lane1", "--tag", "ci=1", "--max-retries", "0", "--", "sh", "-c", "exit 2");
  gate.release();
  const { code, env } = await ended(waiter);
  expect(code).toBe(6);
  expect(env.data.jobs[String(b)].state).toBe("dead");
  expect(env.data.counts).toMatchObject({ done: 1, dead: 1 });
});
