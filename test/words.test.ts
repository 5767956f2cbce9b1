/**
 * Words that add up (README "States and counters"): a job's attempts and
 * budgets read the same in `show`, triage's card and the worker's lines, and
 * the JUnit report names its count as the JSON does (`attempts_total`: every
 * attempt started; JSON `attempts` counts the failures charged to
 * --max-retries).
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { attemptRowsText, attemptsText, humanDuration } from "../src/ui/text.ts";
import { useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue();

test("show counts attempts and the retry budget so that the numbers read naturally", async () => {
  await q.setConfig("backoff-cap", "0");
  const id = await q.addJob("--max-retries", "3", "--", "false");
  await q.run(["work", "--once"]);
  expect((await q.run(["show", String(id)])).stdout).toContain(
    "attempts      1 attempt: 1 failed, 1 of 3 retries used\n",
  );
  await q.run(["work", "--drain"]);
  const show = await q.run(["show", String(id)]);
  expect(show.stdout).toContain("attempts      4 attempts: 4 failed, retry budget 3 used up\n");
  expect(show.stdout).not.toContain("4 of 3");
  // A dead job has no next run to show; a queued one has.
  expect(show.stdout).not.toContain("next run");
  const queued = await q.addJob("--", "true");
  expect((await q.run(["show", String(queued)])).stdout).toMatch(/^next run +\S+ \(.* ago\)$/m);
  const json = (await q.json(["show", String(id)])).env.data.job;
  expect([json.attempts, json.attempts_total]).toEqual([4, 4]);
  // A command that cannot start is dead with its budget untouched, and says so.
  const nope = await q.addJob("--max-retries", "3", "--", "spoolctl-no-such-program");
  await q.run(["work", "--drain"]);
  expect((await q.run(["show", String(nope)])).stdout).toContain(
    "attempts      1 attempt: 1 failed, dead without a retry (the command cannot start)\n",
  );
});

test("show counts the attempts its table lists: after a retry 8 failed rows read 8 failed, the budget since the retry", async () => {
  await q.setConfig("backoff-cap", "0");
  const id = await q.addJob("--max-retries", "3", "--", "false");
  await q.run(["work", "--drain"]);
  expect((await q.run(["retry", String(id)])).code).toBe(0);
  await q.run(["work", "--drain"]);
  const show = (await q.run(["show", String(id)])).stdout;
  const rows = show.split("\n").filter((l) => /^\d+ +failed +/.test(l));
  expect(rows).toHaveLength(8);
  // Was "8 attempts: 4 failed, retry budget 3 used up" beside eight failed rows.
  expect(show).toContain("attempts      8 attempts: 8 failed, retry budget 3 used up since the last retry\n");
  expect(
    attemptRowsText({ state: "queued", attempts: 1, crashes: 0, max_retries: 1, max_crashes: null }, [
      { state: "failed" },
      { state: "timed_out" },
      { state: "abandoned" },
    ]),
  ).toBe("3 attempts: 1 failed, 1 timed out, 1 abandoned, 1 of 1 retry used since the last retry");
});

test("the phrases: budgets of 0 and 1, crash budgets named only when they matter", () => {
  const job = (
    attempts: number,
    max_retries: number,
    crashes = 0,
    max_crashes: number | null = null,
    state = "dead",
  ) => ({ state, attempts, crashes, max_retries, max_crashes });
  expect(attemptsText(job(1, 0), 1)).toBe("1 attempt: 1 failed, no retries allowed");
  expect(attemptsText(job(2, 1), 2)).toBe("2 attempts: 2 failed, retry budget 1 used up"); // was "2 failed of 1 retries"
  expect(attemptsText(job(1, 1, 0, null, "queued"), 1)).toBe("1 attempt: 1 failed, 1 of 1 retry used");
  expect(attemptsText(job(0, 3, 2, 1), 2)).toBe(
    "2 attempts: 0 failed, 0 of 3 retries used; 2 lost to a worker crash, crash budget 1 used up",
  );
});

test("JUnit's attempts_total is JSON's attempts_total; JUnit has no 'attempts' of another meaning", async () => {
  await q.setConfig("backoff-cap", "0");
  const id = await q.addJob("--max-retries", "1", "--", "false");
  await q.run(["work", "--drain"]);
  const file = join(q.dir, "junit.xml");
  expect((await q.run(["report", "--junit", file])).code).toBe(0);
  const xml = readFileSync(file, "utf8");
  const json = (await q.json(["report"])).env.data;
  const total = json.cases.find((c: any) => c.id === id).attempts_total;
  expect(total).toBe(2);
  expect(xml).toContain(`<property name="attempts_total" value="${total}"/>`);
  expect(xml).not.toContain('name="attempts"');
});

test("durations carry into the next unit: 479.6 s reads 8m00s, never 7m60s", () => {
  const cases: [number, string][] = [
    [0.4, "0.4s"],
    [9.96, "10s"],
    [59.4, "59s"],
    [59.7, "1m00s"],
    [185, "3m05s"],
    [479.6, "8m00s"],
    [474, "7m54s"],
    [3599.7, "1h00m"],
    [7800, "2h10m"],
    [86399.9, "1d0h"],
    [3 * 86400 + 4 * 3600, "3d4h"],
  ];
  expect(cases.map(([s]) => [s, humanDuration(s)])).toEqual(cases);
  // No field ever reaches its unit's size, wherever the value falls.
  for (let tenths = 0; tenths < 90000; tenths += 7) expect(humanDuration(tenths / 10)).not.toMatch(/\D60[sm]$|^60s$/);
});
