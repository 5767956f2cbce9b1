/**
 * `rerun ID` end to end through the real CLI (README "Fixing failures"): a
 * finished job runs again as a new attempt of the same job, its history kept;
 * `retry` on a done job points at it; the key rule holds.
 */
import { expect, test } from "bun:test";
import { useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue();

test("a done job reruns as attempt 2 of the same job; attempts, output and events are kept", async () => {
  const id = await q.addJob("--", "sh", "-c", "echo run-$(date +%N)");
  expect((await q.run(["work", "--drain"])).code).toBe(0);
  const first = await q.run(["output", String(id)]);

  // retry refuses a done job and now names rerun.
  const refused = await q.json(["retry", String(id)]);
  expect(refused.code).toBe(5);
  expect(refused.env.errors[0].code).toBe("CONFLICT");
  expect(refused.env.errors[0].remediation).toMatch(new RegExp(`spoolctl rerun --db \\S+ ${id}$`));

  const r = await q.json(["rerun", String(id)]);
  expect(r.code).toBe(0);
  expect(r.env.ok).toBe(true);
  expect(r.env.data).toEqual({ job_id: id, state: "queued", from: "done", next_attempt_no: 2 });
  expect((await q.job(id))!.state).toBe("queued");

  expect((await q.run(["work", "--drain"])).code).toBe(0);
  const job = (await q.job(id))!;
  expect([job.state, job.last_attempt_no]).toEqual(["done", 2]);
  expect((await q.attempts(id)).map((a) => [a.attempt_no, a.state])).toEqual([
    [1, "succeeded"],
    [2, "succeeded"],
  ]);
  // Attempt 1's output is still there beside attempt 2's.
  expect((await q.run(["output", String(id), "--attempt", "1"])).stdout).toBe(first.stdout);
  const events = await q.events(id);
  const rerun = events.find((e) => e.event === "retried")!;
  expect(JSON.parse(rerun.detail!)).toEqual({ from: "done", rerun: true });
  expect(events.map((e) => e.event).filter((e) => e === "claimed").length).toBe(2);
});

test("human text; dead and canceled jobs rerun too; queued ones are refused with a next step", async () => {
  const dead = await q.addJob("--max-retries", "0", "--", "false");
  await q.run(["work", "--drain"]);
  const human = await q.run(["rerun", String(dead)]);
  expect(human.code).toBe(0);
  expect(human.stdout).toBe(`Rerunning job ${dead} (was dead); now queued for attempt 2\n`);

  const refused = await q.json(["rerun", String(dead)]);
  expect(refused.code).toBe(5);
  expect(refused.env.ok).toBe(false);
  expect(refused.env.errors[0].code).toBe("CONFLICT");
  expect(refused.env.errors[0].message).toContain(`job ${dead} is queued`);
  expect(refused.env.errors[0].remediation).toContain("spoolctl wait --db ");

  await q.run(["cancel", String(dead)]);
  expect((await q.json(["rerun", String(dead)])).env.data.from).toBe("canceled");

  const missing = await q.json(["rerun", "999"]);
  expect([missing.code, missing.env.errors[0].code]).toEqual([1, "NOT_FOUND"]);
});

test("another active job holding the key: IDEMPOTENCY_CONFLICT (exit 5) naming it; nothing changed", async () => {
  const a = await q.addJob("--key", "nightly", "--", "true");
  await q.run(["work", "--drain"]);
  const b = await q.addJob("--key", "nightly", "--", "true"); // the key is free again: a new job holds it
  const r = await q.json(["rerun", String(a)]);
  expect(r.code).toBe(5);
  expect(r.env.errors[0].code).toBe("IDEMPOTENCY_CONFLICT");
  expect(r.env.errors[0].message).toContain(`active job ${b}`);
  expect(r.env.errors[0].remediation).toMatch(
    new RegExp(`spoolctl wait --db \\S+ ${b}\\).*spoolctl rerun --db \\S+ ${a}$`),
  );
  expect((await q.job(a))!.state).toBe("done");
  const human = await q.run(["rerun", String(a)]);
  expect(human.stderr).toMatch(/^spoolctl: error: IDEMPOTENCY_CONFLICT: .*\n/);
  expect(human.stderr).not.toContain("    at ");
});

test("a queued job scheduled for later: retry and rerun name its time and how to run it now", async () => {
  const id = await q.addJob("--after", "1h", "--", "true");
  const due = new Date((await q.job(id))!.next_run_at * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
  for (const verb of ["rerun", "retry"]) {
    const r = await q.json([verb, String(id)]);
    expect([verb, r.code, r.env.errors[0].code]).toEqual([verb, 5, "CONFLICT"]);
    // A drain would not run it before its time: the hint is the cancel-and-rerun, not 'work --drain'.
    expect(r.env.errors[0].remediation).toContain(`it is scheduled for ${due}`);
    expect(r.env.errors[0].remediation).toMatch(new RegExp(`spoolctl cancel --db \\S+ ${id}, then spoolctl rerun`));
    expect(r.env.errors[0].remediation).not.toContain("--drain");
  }
  // The hint works: canceled, then rerun, it runs now.
  expect((await q.run(["cancel", String(id)])).code).toBe(0);
  expect((await q.run(["rerun", String(id)])).code).toBe(0);
  expect((await q.run(["work", "--drain"])).code).toBe(0);
  expect((await q.job(id))!.state).toBe("done");
});
