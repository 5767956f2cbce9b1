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
  expect(lines).toContain("spoolctl: job 2 attempt 2 started again (previous: exit 1; 1 of 1 retry used): false");
  expect((await q.run(["wait", "1", "2", "3"])).code).toBe(6);
  // Nothing to do is said in as many words; --json prints the envelope alone.
  expect((await q.run(["work", "--drain"])).stderr).toBe("spoolctl: drained lane default: nothing to run\n");
  expect((await q.run(["work", "--drain", "--json"])).stderr).toBe("");
});

test("a job retried by hand says it runs again, without charge; a first attempt says nothing until it ends", async () => {
  await q.addJob("--max-retries", "0", "--", "sh", "-c", "exit 4");
  const first = await q.run(["work", "--once"]);
  expect(first.stderr).toMatch(/^spoolctl: job 1 attempt 1 failed: exit 4 \(\d+\.\ds\) -> dead\n$/);
  expect((await q.run(["retry", "1"])).code).toBe(0);
  const again = await q.run(["work", "--once"]);
  expect(again.stderr.split("\n")[0]).toBe(
    "spoolctl: job 1 attempt 2 started again (previous: exit 4; fresh budget): sh -c 'exit 4'",
  );
});

test("a looping worker says when it waits for jobs, once per idle spell", async () => {
  const w = q.spawn(["work", "--poll-interval", "0.2"]);
  workers.push(w);
  let stderr = "";
  const reader = (async () => {
    for await (const chunk of w.stderr) stderr += new TextDecoder().decode(chunk);
  })();
  const idle = "spoolctl: waiting for jobs in lane default; Ctrl-C to stop\n";
  await waitFor("the idle line", () => (stderr.includes(idle) ? true : null), 30_000, 50);
  await q.addJob("--", "true");
  await waitFor("the job and a second idle line", () => (stderr.split(idle).length === 3 ? true : null), 30_000, 50);
  expect(stderr).toMatch(
    /^spoolctl: waiting for jobs in lane default; Ctrl-C to stop\nspoolctl: job 1 attempt 1 succeeded \(\d+\.\ds\) -> done\nspoolctl: waiting for jobs in lane default; Ctrl-C to stop\n$/,
  );
  w.kill("SIGINT");
  expect(await w.exited).toBe(0);
  await reader;
});
