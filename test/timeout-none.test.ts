/**
 * `--timeout none` and `config set timeout none`: no time limit (README
 * "Adding jobs"), stored as timeout_seconds 0, end to end through the real
 * CLI: the job runs to its end (no timer fires, not even at once), the views
 * say none, and a wrong word is a clear error naming both spellings.
 */
import { expect, test } from "bun:test";
import { useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue();

test("add --timeout none: stored as 0, shown as none, and the job runs to its end", async () => {
  const id = await q.addJob("--timeout", "none", "--", "sh", "-c", "sleep 0.5; echo finished");
  expect((await q.job(id))?.timeout_seconds).toBe(0);
  expect((await q.json(["show", String(id)])).env.data.job.timeout_seconds).toBe(0);
  expect((await q.run(["show", String(id)])).stdout).toMatch(/^timeout +none$/m);
  expect((await q.run(["work", "--drain"])).code).toBe(0);
  const job = (await q.job(id))!;
  expect(job.state).toBe("done");
  expect((await q.run(["output", String(id), "--stream", "stdout", "--raw"])).stdout).toBe("finished\n");
  // Also NONE, and in add --from.
  const r = await q.json(["add", "--from", "-"], { stdin: '{"argv":["true"],"timeout":"NONE"}\n' });
  expect(r.code).toBe(0);
  expect((await q.job(r.env.data.jobs[0].job_id))?.timeout_seconds).toBe(0);
});

test("config set timeout none: new jobs get no time limit; get and show say none", async () => {
  const set = await q.run(["config", "set", "timeout", "none"]);
  expect(set.code).toBe(0);
  expect(set.stdout).toBe("timeout = none (was 300); applies to jobs added from now on\n");
  expect((await q.run(["config", "get", "timeout"])).stdout).toBe("none\n");
  expect((await q.json(["config", "get", "timeout"])).env.data.value).toBe(0);
  const id = await q.addJob("--", "true");
  expect((await q.job(id))?.timeout_seconds).toBe(0);
  expect((await q.run(["config", "set", "timeout", "10m"])).stdout).toBe(
    "timeout = 600 (was none); applies to jobs added from now on\n",
  );
});

test("retry --timeout none lifts a dead job's limit", async () => {
  const id = await q.addJob("--timeout", "0.2", "--max-retries", "0", "--", "sh", "-c", "sleep 1; echo late");
  await q.run(["work", "--drain"]);
  expect((await q.job(id))?.state).toBe("dead");
  const r = await q.run(["retry", String(id), "--timeout", "none"]);
  expect(r.code).toBe(0);
  expect(r.stdout).toBe(`Retried job ${id} (timeout 0.2s → none); now queued\n`);
  await q.run(["work", "--drain"]);
  expect((await q.job(id))?.state).toBe("done");
});

test("a wrong word is INVALID_INPUT naming both spellings; never a stack trace", async () => {
  for (const args of [
    ["add", "--json", "--timeout", "never", "--", "true"],
    ["retry", "1", "--json", "--timeout", "never"],
    ["config", "set", "timeout", "never", "--json"],
  ]) {
    const r = await q.run(args);
    const env = r.json;
    expect(r.code).toBe(1);
    expect(env.errors[0].code).toBe("INVALID_INPUT");
    expect(env.errors[0].message).toContain("or none (no time limit)");
  }
  const human = await q.run(["add", "--timeout", "never", "--", "true"]);
  expect(human.stderr).not.toContain("    at ");
});

test("feedback of a job whose limit was lifted never suggests --timeout 0s", async () => {
  const id = await q.addJob("--timeout", "0.2", "--max-retries", "0", "--", "sh", "-c", "sleep 1");
  await q.run(["work", "--drain"]);
  expect((await q.json(["feedback", String(id)])).env.data.remediation).toMatch(/--timeout 0\.4s$/);
  expect((await q.run(["retry", String(id), "--timeout", "none"])).code).toBe(0);
  expect((await q.run(["cancel", String(id)])).code).toBe(0);
  const fb = await q.json(["feedback", String(id)]);
  expect(fb.env.data.remediation).toMatch(new RegExp(`spoolctl retry --db \\S+ ${id}$`));
});
