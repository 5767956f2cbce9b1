/**
 * `wait` over a selection is a verdict (issue 30 item 2; docs/contract.md "Exit
 * codes and codes", docs/architecture.md "Batches"): a lane/tag wait judges
 * every job it selects, those that ended before it began included, and a
 * selection matching no job is NOT_FOUND with a guess. Through the real CLI
 * and real workers; SPOOLCTL_TEST_DB runs it on PostgreSQL.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { addJob, drain } from "./support/jobs.ts";
import { useTempQueue } from "./support/temp-queue.ts";

setDefaultTimeout(120_000);

const q = useTempQueue();

test("wait --queue after a drain judges the lane's ended jobs: a dead one exits 6, in text and JSON", async () => {
  await addJob(q, "--queue", "checks", "--max-retries", "0", "--", "sh", "-c", "exit 1");
  await addJob(q, "--queue", "checks", "--", "true");
  await drain(q, "--queue", "checks");
  const text = await q.run(["wait", "--queue", "checks"]);
  expect(text.code).toBe(6);
  expect(text.stdout.trim()).toBe("2 jobs ended: 1 done, 1 dead");
  const json = await q.json(["wait", "--queue", "checks"]);
  expect(json.code).toBe(6);
  expect(json.env.ok).toBe(true);
  expect(json.env.data.all_succeeded).toBe(false);
  expect(json.env.data.counts).toMatchObject({ done: 1, dead: 1, queued: 0, running: 0, canceled: 0 });
  expect(
    Object.values(json.env.data.jobs)
      .map((j: any) => j.state)
      .sort(),
  ).toEqual(["dead", "done"]);
});

test("wait --tag judges ended jobs too: all done exits 0, a canceled one exits 6", async () => {
  await addJob(q, "--tag", "run=1", "--", "true");
  await addJob(q, "--tag", "run=1", "--", "true");
  const later = await addJob(q, "--tag", "run=2", "--after", "1h", "--", "true");
  await drain(q);
  const green = await q.json(["wait", "--tag", "run=1"]);
  expect(green.code).toBe(0);
  expect(green.env.data).toMatchObject({ all_succeeded: true, counts: { done: 2 } });
  expect((await q.run(["cancel", String(later)])).code).toBe(0);
  const red = await q.run(["wait", "--tag", "run=2"]);
  expect(red.code).toBe(6);
  expect(red.stdout.trim()).toBe("1 job ended: 1 canceled");
});

test("a selection that matches no job is NOT_FOUND, with the lane or tag that exists as did_you_mean", async () => {
  await addJob(q, "--queue", "checks", "--tag", "run=4711", "--", "true");
  await drain(q, "--queue", "checks");
  const lane = await q.json(["wait", "--queue", "chekcs"]);
  expect(lane.code).toBe(1);
  expect(lane.env.ok).toBe(false);
  expect(lane.env.errors[0]).toMatchObject({ code: "NOT_FOUND", did_you_mean: "--queue checks" });
  const tag = await q.json(["wait", "--tag", "run=nope"]);
  expect(tag.code).toBe(1);
  expect(tag.env.errors[0]).toMatchObject({ code: "NOT_FOUND", did_you_mean: "--tag run=4711" });
  // Both exist, but no job has both: nothing to guess, still NOT_FOUND.
  await addJob(q, "--queue", "other", "--", "true");
  const both = await q.json(["wait", "--queue", "other", "--tag", "run=4711"]);
  expect(both.code).toBe(1);
  expect(both.env.errors[0].code).toBe("NOT_FOUND");
  // In text, the guess is in the one error line on stderr.
  const text = await q.run(["wait", "--queue", "chekcs"]);
  expect(text.code).toBe(1);
  expect(text.stderr).toContain("NOT_FOUND");
  expect(text.stderr).toContain("did you mean --queue checks?");
  expect(text.stdout).toBe("");
});

test("wait --queue on a lane with jobs still queued waits, then judges them with the ended ones", async () => {
  await addJob(q, "--queue", "mixed", "--", "true");
  await drain(q, "--queue", "mixed");
  await addJob(q, "--queue", "mixed", "--max-retries", "0", "--", "false");
  // Queued, no worker: the wait times out rather than judging early.
  const early = await q.json(["wait", "--queue", "mixed", "--timeout", "0.5"]);
  expect(early.code).toBe(4);
  expect(early.env.errors[0].code).toBe("TIMEOUT");
  await drain(q, "--queue", "mixed");
  const r = await q.json(["wait", "--queue", "mixed"]);
  expect(r.code).toBe(6);
  expect(r.env.data.counts).toMatchObject({ done: 1, dead: 1 });
});
