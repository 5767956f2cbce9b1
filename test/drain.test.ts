/**
 * `work --drain` (SPEC §4 "Drain"): stop when the lane is settled — nothing
 * running, nothing due, no retry backoff pending. Jobs delayed by the user and
 * never run do not hold a drain open.
 */
import { expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Job } from "../src/model/job.ts";
import { patchJobs } from "./support/queue-fixtures.ts";
import { useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue();

const add = (...args: string[]) => q.addJob(...args);

async function job(id: number): Promise<Job> {
  return (await q.job(id))!;
}

/** A short retry backoff for the whole queue (a queue-wide setting, SPEC §6). */
function shortBackoff(cap: string): Promise<void> {
  return q.setConfig("backoff_cap", cap);
}

test("drain exits while a job delayed by the user stays queued", async () => {
  const delayed = await add("--after", "1h", "--", "true");
  const at = await add("--at", String(Math.floor(Date.now() / 1000) + 86400), "--", "true");
  const now = await add("--", "echo", "now");
  const r = await q.json(["work", "--drain"]);
  expect(r.code).toBe(0);
  expect(r.env.ok).toBe(true);
  expect(r.env.data.drained).toBe(true);
  expect(r.env.data.executed).toBe(1);
  expect(r.env.data.job_ids).toEqual([now]);
  for (const id of [delayed, at]) {
    expect((await job(id)).state).toBe("queued");
    expect((await job(id)).last_attempt_no).toBe(0);
    expect((await job(id)).next_run_at).toBeGreaterThan(Date.now() / 1000 + 3000);
  }
  for (const id of [delayed, at]) expect(await q.attempts(id)).toEqual([]);
});

test("drain on a lane with only delayed jobs, or nothing at all, exits at once", async () => {
  const empty = await q.json(["work", "--drain"]);
  expect(empty.code).toBe(0);
  expect(empty.env.data).toMatchObject({ drained: true, executed: 0, claimed: false });

  await add("--after", "2h", "--", "true");
  const r = await q.json(["work", "--drain"]);
  expect(r.code).toBe(0);
  expect(r.env.data).toMatchObject({ drained: true, executed: 0, claimed: false });
});

test("drain waits out a retry backoff, then runs the retry", async () => {
  const marker = join(q.dir, "marker");
  const id = await add("-c", `if [ -e '${marker}' ]; then echo ok; else touch '${marker}'; echo first >&2; exit 1; fi`);
  await shortBackoff("1"); // the queue exists now
  const r = await q.run(["work", "--drain"]);
  expect(r.code).toBe(0);
  const lines = r.stderr.trim().split("\n");
  expect(lines).toHaveLength(5);
  lines.shift(); // attempt 1's start line
  expect(lines[0]).toMatch(
    new RegExp(`^spoolctl: job ${id} attempt 1 failed: exit 1 \\(\\d+\\.\\ds\\) -> queued, retry in 1s$`),
  );
  expect(lines[1]).toMatch(
    new RegExp(
      `^spoolctl: job ${id} attempt 2 started in lane default again \\(previous: exit 1; 1 of 3 retries used\\): sh -c `,
    ),
  );
  expect(lines[2]).toMatch(new RegExp(`^spoolctl: job ${id} attempt 2 succeeded \\(\\d+\\.\\ds\\) -> done$`));
  expect(lines[3]).toBe("spoolctl: drained lane default: 2 executed: 1 succeeded, 1 failed and retried, 0 dead");
  const j = await job(id);
  expect(j.state).toBe("done");
  expect(j.attempts).toBe(1);
  expect(j.last_attempt_no).toBe(2);
  // The retry ran no sooner than its backoff allowed.
  const attempts = await q.attempts(id);
  expect(attempts[1]!.started_at).toBeGreaterThanOrEqual(attempts[0]!.finished_at! + 1);
});

test("drain runs a failing job through its whole budget to the dead letter", async () => {
  const id = await add("--max-retries", "2", "--", "false");
  await shortBackoff("0.2"); // the queue exists now
  const r = await q.json(["work", "--drain"]);
  expect(r.code).toBe(0);
  expect(r.env.data).toMatchObject({ drained: true, executed: 3, succeeded: 0, failed: 3 });
  expect((await job(id)).state).toBe("dead");
  expect((await job(id)).attempts).toBe(3);
});

test("drain waits for a job running on another worker, and for its retry", async () => {
  const release = join(q.dir, "release");
  const marker = join(q.dir, "marker");
  // Attempt 1 blocks until released, then fails; attempt 2 succeeds.
  const id = await add(
    "-c",
    `if [ -e '${marker}' ]; then exit 0; fi; touch '${marker}'; while [ ! -e '${release}' ]; do sleep 0.05; done; exit 1`,
  );
  await shortBackoff("1"); // the queue exists now
  const first = q.spawn(["work", "--once", "--worker-id", "first"]);
  let drainer: ReturnType<typeof q.spawn> | undefined;
  try {
    await waitFor(
      "attempt 1 to run on the first worker",
      async () => (await job(id)).state === "running" && existsSync(marker),
    );
    drainer = q.spawn(["work", "--drain", "--json", "--worker-id", "drainer"]);
    // The drainer has nothing to claim, but a job of its lane is running: it must
    // stay. It registers itself when it starts; release the job after that.
    await waitFor("the drainer to register", async () => (await q.worker("drainer")) !== null);
    writeFileSync(release, "");
    expect(await first.exited).toBe(0);
    expect(await drainer.exited).toBe(0);
  } finally {
    writeFileSync(release, "");
    first.kill();
    drainer?.kill();
  }
  const summary = JSON.parse(await new Response(drainer!.stdout).text());
  expect(summary.data).toMatchObject({ drained: true, executed: 1, succeeded: 1, job_ids: [id] });
  const attempts = (await q.attempts(id)).map(({ attempt_no, worker_id, state }) => ({ attempt_no, worker_id, state }));
  expect(attempts).toEqual([
    { attempt_no: 1, worker_id: "first", state: "failed" },
    { attempt_no: 2, worker_id: "drainer", state: "succeeded" },
  ]);
  expect((await job(id)).state).toBe("done");
});

test("drain settles only its own lane", async () => {
  const other = await add("--queue", "other", "--", "true");
  const mine = await add("--queue", "mine", "--", "true");
  const r = await q.json(["work", "--queue", "mine", "--drain"]);
  expect(r.code).toBe(0);
  expect(r.env.data.job_ids).toEqual([mine]);
  expect((await job(other)).state).toBe("queued");
});

test("a delayed job that comes due while draining is run", async () => {
  // Added with a delay, then made due by moving its time close: a drain that
  // starts before it is due does not wait for it, but one that finds it due runs it.
  const id = await add("--after", "1h", "--", "true");
  await patchJobs(q, [id], { next_run_at: Date.now() / 1000 - 1 }); // test-only: an hour passes
  const r = await q.json(["work", "--drain"]);
  expect(r.env.data.job_ids).toEqual([id]);
  expect((await job(id)).state).toBe("done");
});

test("--at in the past clamps to now: the job is due and drained", async () => {
  const before = Date.now() / 1000;
  const id = await add("--at", "2001-09-09T01:46:40Z", "--", "true");
  expect((await job(id)).next_run_at).toBeGreaterThanOrEqual(before - 1);
  const r = await q.json(["work", "--drain"]);
  expect(r.env.data.job_ids).toEqual([id]);
  expect((await job(id)).state).toBe("done");
});
