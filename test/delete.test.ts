/**
 * `delete ID…` end to end through the real CLI (README "Operating the
 * queue"): jobs that are not running go with their attempts, events and
 * output files (and shipped output rows on PostgreSQL); off a terminal it
 * needs --yes (SAFETY_BLOCK, exit 2); a running job is refused with the
 * cancel command. The confirm at a terminal is in test/delete-tty.test.ts.
 */
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { gatedJob } from "./support/jobs.ts";
import { startWorker, stopProcessesOf } from "./support/processes.ts";
import { useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue({ teardown: stopProcessesOf });

test("without --yes off a terminal: SAFETY_BLOCK (exit 2) counting what would go; nothing deleted", async () => {
  const id = await q.addJob("--", "true");
  const r = await q.json(["delete", String(id)]);
  expect(r.code).toBe(2);
  expect(r.env.ok).toBe(false);
  expect(r.env.errors[0].code).toBe("SAFETY_BLOCK");
  expect(r.env.errors[0].message).toContain("1 job with 0 attempts, 1 event");
  expect(r.env.errors[0].remediation).toMatch(new RegExp(`^spoolctl delete --db \\S+ ${id} --yes$`));
  const human = await q.run(["delete", String(id)]);
  expect(human.code).toBe(2);
  expect(human.stderr).toMatch(/^spoolctl: error: SAFETY_BLOCK: delete removes 1 job/);
  expect((await q.job(id))?.state).toBe("queued");
});

test("a done, a dead and a queued job go with their attempts, events and output files", async () => {
  const done = await q.addJob("--", "sh", "-c", "echo kept-until-deleted");
  const dead = await q.addJob("--max-retries", "0", "--", "sh", "-c", "echo boom >&2; exit 3");
  expect((await q.run(["work", "--drain"])).code).toBe(0);
  const queued = await q.addJob("--", "true");
  const keep = await q.addJob("--", "true");
  const files = [...(await q.attempts(done)), ...(await q.attempts(dead))].flatMap((a) => [
    a.stdout_path,
    a.stderr_path,
  ]);
  expect(files.length).toBe(4);
  if (!q.location().dbPath.startsWith("postgres")) for (const f of files) expect(existsSync(f)).toBe(true);

  const r = await q.json(["delete", String(done), String(dead), String(queued), "--yes"]);
  expect(r.code).toBe(0);
  expect(r.env.data).toMatchObject({
    count: 3,
    job_ids: [done, dead, queued],
    deleted_attempts: 2,
    irreversible: true,
  });
  expect(r.env.data.deleted_events).toBeGreaterThanOrEqual(7);
  for (const id of [done, dead, queued]) {
    expect(await q.job(id)).toBeNull();
    expect(await q.attempts(id)).toEqual([]);
    expect(await q.events(id)).toEqual([]);
  }
  for (const f of files) expect(existsSync(f)).toBe(false);
  expect((await q.job(keep))?.state).toBe("queued");
  // Gone means gone: output and show say NOT_FOUND.
  const out = await q.json(["output", String(done)]);
  expect([out.code, out.env.errors[0].code]).toEqual([1, "NOT_FOUND"]);
  const human = await q.run(["delete", String(keep), "--yes"]);
  expect(human.stdout).toBe(`Deleted job ${keep} with 0 attempts and 1 event\n`);
});

test("a running job is refused (CONFLICT) pointing at cancel --running --yes; nothing deleted", async () => {
  const gate = gatedJob(q, "long");
  const running = await q.addJob("--", ...gate.argv);
  const other = await q.addJob("--queue", "elsewhere", "--", "true");
  startWorker(q, []);
  await waitFor("the job to run", () => gate.pid() !== null, 30_000);
  const r = await q.json(["delete", String(other), String(running), "--yes"]);
  expect(r.code).toBe(5);
  expect(r.env.errors[0].code).toBe("CONFLICT");
  expect(r.env.errors[0].message).toBe(
    `job ${running} is running; only queued, done, dead or canceled jobs can be deleted`,
  );
  expect(r.env.errors[0].remediation).toMatch(
    new RegExp(`^cancel it first: spoolctl cancel --db \\S+ ${running} --running --yes$`),
  );
  expect((await q.job(other))?.state).toBe("queued");
  expect((await q.job(running))?.state).toBe("running");
  gate.release();
});

test("unknown ids and a missing id are clear errors with valid envelopes", async () => {
  const missing = await q.json(["delete", "77", "--yes"]);
  expect([missing.code, missing.env.errors[0].code]).toEqual([1, "NOT_FOUND"]);
  const none = await q.json(["delete"]);
  expect([none.code, none.env.errors[0].code]).toEqual([1, "MISSING_REQUIRED"]);
  expect((await q.run(["delete"])).stderr).not.toContain("    at ");
});
