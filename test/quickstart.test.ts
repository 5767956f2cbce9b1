/** The README quickstart, end to end through the real CLI (issue 2). */
import { expect, test } from "bun:test";
import { statSync } from "node:fs";
import { useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue();

test("add → status → work --drain → output, with the seed's exact lines", async () => {
  expect((await q.run(["add", "--db", q.db, "--", "echo", "hello from spoolctl"])).stdout).toBe("Added job 1\n");
  expect((await q.run(["add", "--db", q.db, "--", "echo", "second job"])).stdout).toBe("Added job 2\n");
  expect((await q.run(["add", "--db", q.db, "--", "sleep", "0.2"])).stdout).toBe("Added job 3\n");

  const status = await q.run(["status", "--db", q.db]);
  expect(status.stdout).toBe("canceled 0  dead 0  done 0  failed 0  queued 3  running 0\n");

  const work = await q.run(["work", "--db", q.db, "--drain"]);
  expect(work.code).toBe(0);
  const lines = work.stderr.trim().split("\n");
  expect(lines).toHaveLength(7);
  expect(lines[0]).toBe("spoolctl: job 1 attempt 1 started in lane default: echo 'hello from spoolctl'");
  expect(lines[1]).toMatch(/^spoolctl: job 1 attempt 1 succeeded \(\d+\.\ds\) -> done$/);
  expect(lines[3]).toMatch(/^spoolctl: job 2 attempt 1 succeeded \(\d+\.\ds\) -> done$/);
  expect(lines[5]).toMatch(/^spoolctl: job 3 attempt 1 succeeded \(\d+\.\ds\) -> done$/);
  expect(lines[6]).toBe("spoolctl: drained lane default: 3 executed: 3 succeeded, 0 failed and retried, 0 dead");

  const out = await q.run(["output", "--db", q.db, "1"]);
  expect(out.stdout).toBe("=== job 1 attempt 1 stdout ===\nhello from spoolctl\n=== job 1 attempt 1 stderr ===\n");

  expect((await q.run(["status", "--db", q.db])).stdout).toBe(
    "canceled 0  dead 0  done 3  failed 0  queued 0  running 0\n",
  );

  expect((await q.run(["rerun", "--db", q.db, "last"])).stdout).toBe(
    "Rerunning job 3 (was done); now queued for attempt 2\n",
  );
  expect((await q.run(["delete", "--db", q.db, "2", "--yes"])).stdout).toBe(
    "Deleted job 2 with 1 attempt and 3 events\n",
  );
});

test("the database and spool are owner-only", async () => {
  await q.run(["add", "--", "echo", "hi"]);
  await q.run(["work", "--drain"]);
  if (q.driver === "sqlite") expect(statSync(q.db).mode & 0o777).toBe(0o600); // a PostgreSQL queue has no file
  expect(statSync(q.spool).mode & 0o777).toBe(0o700);
  expect(statSync(`${q.spool}/output/1.1.stdout`).mode & 0o777).toBe(0o600);
});

test("read-only verbs on a missing queue create nothing", async () => {
  const r = await q.json(["status"]);
  expect(r.code).toBe(0);
  expect(r.env.data.counts.queued).toBe(0);
  expect(await q.exists()).toBe(false);
});
