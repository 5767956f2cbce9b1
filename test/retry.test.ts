/**
 * Retries, backoff and the dead letter (SPEC §4 "Retries"), end to end through
 * the real CLI. Backoff is checked through `next_run_at`, never by sleeping
 * through it: to run the next attempt at once, the test moves `next_run_at` to 0
 * directly in the database (dueNow: patchJobs, a test-only shortcut).
 */
import { expect, test } from "bun:test";
import type { Attempt, Job } from "../src/model/job.ts";
import { patchJobs } from "./support/queue-fixtures.ts";
import { useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue();

/** Ends a job's retry backoff now (test-only shortcut: the backoff would otherwise be slept through). */
const dueNow = (id: number) => patchJobs(q, [id], { next_run_at: 0 });

/** `add --json …` (the flag goes before `--`, which would otherwise make it part of the command). */
async function add(...args: string[]): Promise<number> {
  const r = await q.run(["add", "--json", ...args]);
  expect(r.code).toBe(0);
  return r.json.data.job_id as number;
}

async function job(id: number): Promise<Job> {
  return (await q.job(id))!;
}

async function attempt(id: number, no: number): Promise<Attempt> {
  return (await q.attempt(id, no))!;
}

function events(id: number): Promise<string[]> {
  return q.eventNames(id);
}

/** Runs one attempt of whatever is due (human mode, to see the worker line). */
async function runOnce(): Promise<{ code: number; stderr: string }> {
  const r = await q.run(["work", "--once"]);
  return { code: r.code, stderr: r.stderr };
}

test("a failing job is retried with backoff 2, 4, 8 … then dead", async () => {
  const id = await add("--max-retries", "3", "-c", "echo attempt-out; echo boom >&2; exit 3");

  const expectedBackoff = [2, 4, 8];
  for (let n = 1; n <= 3; n++) {
    const r = await runOnce();
    expect(r.code).toBe(0);
    // A re-run says why it runs again and what is left of the budget (README "Running jobs").
    const again =
      n === 1
        ? `spoolctl: job ${id} attempt 1 started in lane default: sh -c .*\\n`
        : `spoolctl: job ${id} attempt ${n} started in lane default again \\(previous: exit 3; ${n - 1} of 3 retries used\\): sh -c .*\\n`;
    expect(r.stderr).toMatch(
      new RegExp(
        `^${again}spoolctl: job ${id} attempt ${n} failed: exit 3 \\(\\d+\\.\\ds\\) -> queued, retry in ${expectedBackoff[n - 1]}s\\n$`,
      ),
    );

    const j = await job(id);
    expect(j.state).toBe("queued");
    expect(j.attempts).toBe(n);
    expect(j.last_exit_code).toBe(3);
    expect(j.last_error).toBe("exit 3");
    expect(j.locked_by).toBeNull();
    const a = await attempt(id, n);
    expect(a.state).toBe("failed");
    expect(a.failure_reason).toBe("process_exit");
    expect(a.exit_code).toBe(3);
    expect(a.finished_at).toBeGreaterThan(0);
    // The backoff is visible in next_run_at: finished_at + base^attempts.
    expect(j.next_run_at - a.finished_at!).toBeCloseTo(expectedBackoff[n - 1]!, 6);

    // show --json reports the same schedule, and the job as scheduled.
    const show = await q.json(["show", String(id)]);
    expect(show.code).toBe(0);
    expect(show.env.data.job.next_run_at).toBeCloseTo(j.next_run_at, 6);
    // `scheduled` is judged against the queue's clock when `show` ran: on a loaded machine a 2 s backoff may be over.
    if (show.env.data.job.next_run_at > Date.now() / 1000 + 0.5) expect(show.env.data.job.scheduled).toBe(true);
    expect(show.env.data.job.attempts).toBe(n);

    // While in backoff, the job is not claimable: a worker finds nothing to do (checked while
    // at least a second of the backoff is left; the 4 s and 8 s rounds always have it).
    if (j.next_run_at > Date.now() / 1000 + 1) {
      const idle = await q.json(["work", "--once"]);
      expect(idle.code).toBe(0);
      expect(idle.env.data.claimed).toBe(false);
      expect(idle.env.data.executed).toBe(0);
      expect((await job(id)).attempts).toBe(n);
    } else expect(n).toBe(1);

    await dueNow(id);
  }

  // Attempt 4 exhausts max_retries 3: dead, with a dead event and no further schedule.
  const last = await runOnce();
  expect(last.code).toBe(0);
  expect(last.stderr).toMatch(
    new RegExp(
      `^spoolctl: job ${id} attempt 4 started in lane default again \\(previous: exit 3; 3 of 3 retries used\\): sh -c .*\\nspoolctl: job ${id} attempt 4 failed: exit 3 \\(\\d+\\.\\ds\\) -> dead\\n$`,
    ),
  );
  const dead = await job(id);
  expect(dead.state).toBe("dead");
  expect(dead.attempts).toBe(4);
  expect(dead.finished_at).toBeGreaterThan(0);
  expect((await attempt(id, 4)).failure_reason).toBe("process_exit");

  expect(await events(id)).toEqual([
    "added",
    "claimed",
    "failed",
    "claimed",
    "failed",
    "claimed",
    "failed",
    "claimed",
    "failed",
    "dead",
  ]);
  const retryIn = (await q.events(id)).filter((e) => e.event === "failed").map((e) => JSON.parse(e.detail!).retry_in);
  expect(retryIn).toEqual([2, 4, 8, undefined]);

  const show = await q.json(["show", String(id)]);
  expect(show.env.data.job.state).toBe("dead");
  expect(show.env.data.job.scheduled).toBe(false);
  expect(show.env.data.attempts.map((a: any) => [a.attempt_no, a.state, a.failure_reason, a.exit_code])).toEqual([
    [1, "failed", "process_exit", 3],
    [2, "failed", "process_exit", 3],
    [3, "failed", "process_exit", 3],
    [4, "failed", "process_exit", 3],
  ]);
  expect(show.env.data.events.at(-1).event).toBe("dead");

  // Every attempt kept its own output files.
  const out = await q.run(["output", String(id), "--attempt", "2"]);
  expect(out.stdout).toBe(
    `=== job ${id} attempt 2 stdout ===\nattempt-out\n=== job ${id} attempt 2 stderr ===\nboom\n`,
  );

  // A dead job is never claimed again.
  const after = await q.json(["work", "--once"]);
  expect(after.env.data.claimed).toBe(false);
  expect((await q.attempts(id)).length).toBe(4);

  const status = await q.run(["status"]);
  expect(status.stdout.split("\n")[0]).toBe("canceled 0  dead 1  done 0  failed 0  queued 0  running 0");
});

test("backoff doubles up to the cap of 60: 2, 4, 8, 16, 32, 60, 60", async () => {
  const id = await add("--max-retries", "7", "--", "false");
  const seen: number[] = [];
  for (let n = 1; n <= 7; n++) {
    const r = await q.json(["work", "--once"]);
    expect(r.code).toBe(0);
    expect(r.env.data.failed).toBe(1);
    const j = await job(id);
    expect(j.state).toBe("queued");
    seen.push(Math.round((j.next_run_at - (await attempt(id, n)).finished_at!) * 1000) / 1000);
    await dueNow(id);
  }
  expect(seen).toEqual([2, 4, 8, 16, 32, 60, 60]);
  await q.json(["work", "--once"]);
  expect((await job(id)).state).toBe("dead");
  expect((await job(id)).attempts).toBe(8);
});

test("--max-retries 0 sends a failure straight to the dead letter", async () => {
  const id = await add("--max-retries", "0", "--", "sh", "-c", "exit 7");
  const r = await q.run(["work", "--drain"]);
  expect(r.code).toBe(0);
  expect(r.stderr).toMatch(
    /^spoolctl: job 1 attempt 1 started in lane default: sh -c 'exit 7'\nspoolctl: job 1 attempt 1 failed: exit 7 \(\d+\.\ds\) -> dead\nspoolctl: drained lane default: 1 executed: 0 succeeded, 0 failed and retried, 1 dead\n$/,
  );
  expect((await job(id)).state).toBe("dead");
  expect((await job(id)).last_exit_code).toBe(7);
  expect(await events(id)).toEqual(["added", "claimed", "failed", "dead"]);
});

test("backoff_base and backoff_cap settings apply to jobs already queued", async () => {
  const id = await add("--max-retries", "5", "--", "false");
  // Settings are read when a retry is scheduled (SPEC §6), so changing them after add counts.
  await q.setConfig("backoff_base", "3");
  await q.setConfig("backoff_cap", "20");
  const seen: number[] = [];
  for (let n = 1; n <= 4; n++) {
    await q.json(["work", "--once"]);
    seen.push(Math.round(((await job(id)).next_run_at - (await attempt(id, n)).finished_at!) * 1000) / 1000);
    await dueNow(id);
  }
  expect(seen).toEqual([3, 9, 20, 20]);
});

test("a job that fails once then succeeds ends done, with both attempts kept", async () => {
  const marker = `${q.dir}/marker`;
  const id = await add("-c", `if [ -e '${marker}' ]; then echo second; else touch '${marker}'; exit 1; fi`);
  await q.json(["work", "--once"]);
  expect((await job(id)).state).toBe("queued");
  await dueNow(id);
  const r = await q.run(["work", "--once"]);
  expect(r.stderr).toMatch(
    new RegExp(
      `^spoolctl: job ${id} attempt 2 started in lane default again \\(previous: exit 1; 1 of 3 retries used\\): sh -c .*\\nspoolctl: job ${id} attempt 2 succeeded \\(\\d+\\.\\ds\\) -> done\\n$`,
    ),
  );
  const j = await job(id);
  expect(j.state).toBe("done");
  expect(j.attempts).toBe(1); // failures charged to the budget
  expect(j.last_exit_code).toBe(0);
  expect((await q.attempts(id)).map((a) => a.state)).toEqual(["failed", "succeeded"]);
  expect(await events(id)).toEqual(["added", "claimed", "failed", "claimed", "succeeded"]);
  expect((await q.run(["output", String(id), "--stream", "stdout", "--raw"])).stdout).toBe("second\n");
});
