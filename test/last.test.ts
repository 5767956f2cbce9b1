/**
 * `last` stands for the newest job wherever a job id is taken (README
 * "Looking at the queue"), resolved in one place (resolveJob), end to end
 * through the real CLI.
 */
import { expect, test } from "bun:test";
import { useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue();

test("output, show, wait, feedback, events --job, retry, rerun, cancel and delete take last", async () => {
  const first = await q.addJob("--", "sh", "-c", "echo first");
  const newest = await q.addJob("--max-retries", "0", "--", "sh", "-c", "echo newest; exit 4");
  expect((await q.run(["work", "--drain"])).code).toBe(0);

  expect((await q.run(["output", "last", "--stream", "stdout", "--raw"])).stdout).toBe("newest\n");
  expect((await q.json(["show", "last"])).env.data.job.id).toBe(newest);
  const waited = await q.json(["wait", "last"]);
  expect([waited.code, Object.keys(waited.env.data.jobs)]).toEqual([6, [String(newest)]]);
  expect((await q.json(["feedback", "last"])).env.data.job_id).toBe(newest);
  const events = (await q.json(["events", "--job", "last"])).env.data.events;
  expect(new Set(events.map((e: { job_id: number }) => e.job_id))).toEqual(new Set([newest]));
  expect((await q.json(["retry", "last"])).env.data.job_id).toBe(newest);
  expect((await q.json(["cancel", "last"])).env.data.job_id).toBe(newest);
  expect((await q.json(["rerun", "last"])).env.data.job_id).toBe(newest);
  expect((await q.json(["delete", "last", "--yes"])).env.data.job_ids).toEqual([newest]);
  // Now the newest job is the first one.
  expect((await q.json(["show", "last"])).env.data.job.id).toBe(first);
});

test("last on an empty queue: NOT_FOUND saying there is no job yet", async () => {
  const r = await q.json(["show", "last"]);
  expect(r.code).toBe(1);
  expect(r.env.errors[0].code).toBe("NOT_FOUND");
  expect(r.env.errors[0].message).toBe("no job yet: last names the newest job, and the queue has none");
  expect(r.env.errors[0].remediation).toContain("spoolctl add");
  expect((await q.run(["output", "last"])).stderr).toMatch(/^spoolctl: error: NOT_FOUND: no job yet/m);
});
