/**
 * The worker says what it does (README "Running jobs"): a line when a job runs
 * again (after a failure, a reap or a retry by hand) saying why and what is
 * left of its budget, a line when a looping worker goes idle, and one closing
 * line of `work --drain` counting how the attempts ended. A drain exits 0 even
 * when jobs died: the verdict is `wait`'s (exit 6).
 */
import { expect, test } from "bun:test";
import { type TempQueue, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const workers: ReturnType<TempQueue["spawn"]>[] = [];
const q = useTempQueue({
  teardown: async () => {
    for (const w of workers.splice(0)) {
      w.kill("SIGKILL");
      await w.exited;
    }
  },
});

test("work --drain ends with one line counting how the attempts ended, and exits 0 with dead jobs (wait has the verdict)", async () => {
  await q.addJob("--", "true");
  await q.addJob("--max-retries", "1", "--", "false");
  await q.addJob("--max-retries", "0", "--", "false");
  await q.setConfig("backoff-cap", "0");
  const r = await q.run(["work", "--drain"]);
  expect(r.code).toBe(0);
  const lines = r.stderr.trim().split("\n");
  expect(lines.at(-1)).toBe("spoolctl: drained lane default: 4 executed: 1 succeeded, 1 failed and retried, 2 dead");
  expect(lines).toContain(
    "spoolctl: job 2 attempt 2 started in lane default again (previous: exit 1; 1 of 1 retry used): false",
  );
  expect((await q.run(["wait", "1", "2", "3"])).code).toBe(6);
  // Nothing to do is said in as many words; --json prints the envelope alone.
  expect((await q.run(["work", "--drain"])).stderr).toBe("spoolctl: drained lane default: nothing to run\n");
  expect((await q.run(["work", "--drain", "--json"])).stderr).toBe("");
});

test("a job retried by hand says it runs again, without charge; a start says the job, name, lane and attempt", async () => {
  await q.addJob("--max-retries", "0", "--name", "unit tests", "--queue", "ci", "--", "sh", "-c", "exit 4");
  const first = await q.run(["work", "--once", "--queue", "ci"]);
  expect(first.stderr).toMatch(
    /^spoolctl: job 1 unit tests attempt 1 started in lane ci: sh -c 'exit 4'\nspoolctl: job 1 attempt 1 failed: exit 4 \(\d+\.\ds\) -> dead\n$/,
  );
  expect((await q.run(["retry", "1"])).code).toBe(0);
  const again = await q.run(["work", "--once", "--queue", "ci"]);
  expect(again.stderr.split("\n")[0]).toBe(
    "spoolctl: job 1 unit tests attempt 2 started in lane ci again (previous: exit 4; fresh budget): sh -c 'exit 4'",
  );
});

test("a looping worker says it waits for jobs once, when it first goes idle, not after every job", async () => {
  const w = q.spawn(["work", "--poll-interval", "0.2"]);
  workers.push(w);
  let stderr = "";
  const reader = (async () => {
    for await (const chunk of w.stderr) stderr += new TextDecoder().decode(chunk);
  })();
  const idle = "spoolctl: waiting for jobs in lane default; Ctrl-C to stop\n";
  await waitFor("the idle line", () => (stderr.includes(idle) ? true : null), 30_000, 50);
  await q.addJob("--", "true");
  await waitFor("job 1's end", () => (stderr.includes("job 1 attempt 1 succeeded") ? true : null), 30_000, 50);
  await q.addJob("--", "true");
  await waitFor("job 2's end", () => (stderr.includes("job 2 attempt 1 succeeded") ? true : null), 30_000, 50);
  // Idle again (its polls come every 0.2 s): job 3 runs, and still no second idle line.
  await q.addJob("--", "true");
  await waitFor("job 3's end", () => (stderr.includes("job 3 attempt 1 succeeded") ? true : null), 30_000, 50);
  expect(stderr.split(idle).length).toBe(2);
  expect(stderr.startsWith(idle)).toBe(true);
  w.kill("SIGINT");
  expect(await w.exited).toBe(0);
  await reader;
});

test("the drain summary names the dependents closed because a need died", async () => {
  await q.addJob("--name", "build", "--max-retries", "0", "--", "false");
  await q.addJob("--name", "deploy", "--needs", "build", "--", "true");
  await q.addJob("--needs", "2", "--", "true");
  const r = await q.run(["work", "--drain"]);
  expect(r.code).toBe(0);
  const lines = r.stderr.trim().split("\n");
  expect(lines.slice(-3)).toEqual([
    "spoolctl: drained lane default: 1 executed: 0 succeeded, 0 failed and retried, 1 dead",
    "spoolctl: job 2 deploy closed: needs job 1, dead",
    "spoolctl: job 3 closed: needs job 2, canceled",
  ]);
});
