/** `events` (SPEC §5, issue 4): pages with a cursor, `--wait` long-poll, `--follow` NDJSON frames. */
import { expect, setDefaultTimeout, test } from "bun:test";
import { keysOf, reference } from "./support/envelopes.ts";
import { addJob, drain } from "./support/jobs.ts";
import { killSpawned, startBg } from "./support/processes.ts";
import { useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

setDefaultTimeout(60_000);

const q = useTempQueue({ teardown: killSpawned });

/** Parses NDJSON stdout into frames. */
function frames(stdout: string): any[] {
  return stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

test("an empty ledger matches envelope-events-empty.json", async () => {
  const r = await q.json(["events"]);
  expect(r.code).toBe(0);
  const ref = reference("envelope-events-empty.json");
  if (ref) {
    expect(r.env.data).toEqual(ref.data);
    expect(r.env.meta.pagination).toEqual(ref.meta.pagination);
    expect(keysOf(r.env.meta)).toEqual(keysOf(ref.meta));
  }
});

test("pages follow the cursor; --job narrows to one job", async () => {
  await addJob(q, "--", "true");
  await addJob(q, "--key", "two", "--", "true");
  await drain(q);
  const all = await q.json(["events"]);
  expect(all.env.data.count).toBe(6);
  expect(all.env.data.events.map((e: any) => e.event)).toEqual([
    "added",
    "added",
    "claimed",
    "succeeded",
    "claimed",
    "succeeded",
  ]);
  expect(all.env.meta.pagination).toEqual({ cursor: 6, first_id: 1 });
  const first = await q.json(["events", "--limit", "4"]);
  expect(first.env.data.events.map((e: any) => e.id)).toEqual([1, 2, 3, 4]);
  const next = await q.json(["events", "--limit", "4", "--since-id", String(first.env.meta.pagination.cursor)]);
  expect(next.env.data.events.map((e: any) => e.id)).toEqual([5, 6]);
  expect(next.env.meta.pagination).toEqual({ cursor: 6, first_id: 5 });
  const end = await q.json(["events", "--since-id", "6"]);
  expect(end.env.meta.pagination).toEqual({ cursor: 6, first_id: null });
  const job = await q.json(["events", "--job", "two"]);
  expect(job.env.data.events.every((e: any) => e.job_id === 2)).toBe(true);
  expect(job.env.data.count).toBe(3);
  const text = await q.run(["events", "--job", "1"]);
  expect(text.stdout.split("\n")[0]).toMatch(/^ID\s+AT\s+JOB\s+EVENT/);
});

test("--wait returns as soon as an event is appended, with meta.wait", async () => {
  await addJob(q, "--", "true");
  const waiter = q.spawn([
    "events",
    "--json",
    "--since-id",
    "1",
    "--wait",
    "--wait-timeout",
    "50s",
    "--poll-interval",
    "0.05",
  ]);
  await addJob(q, "--", "true");
  const [stdout, code] = await Promise.all([new Response(waiter.stdout).text(), waiter.exited]);
  expect(code).toBe(0);
  const env = JSON.parse(stdout);
  expect(env.data.events[0]).toMatchObject({ id: 2, job_id: 2, event: "added" });
  expect(env.meta.wait.reason).toBe("records_available");
  expect(typeof env.meta.wait.waited_ms).toBe("number");
});

test("--wait with nothing new ends at --wait-timeout with reason timeout", async () => {
  const r = await q.json(["events", "--wait", "--wait-timeout", "0.2"]);
  expect(r.code).toBe(0);
  expect(r.env.data.count).toBe(0);
  expect(r.env.meta.wait.reason).toBe("timeout");
});

test("--follow --json streams data frames then an end frame (--max-events)", async () => {
  await addJob(q, "--", "true");
  await addJob(q, "--", "true");
  await addJob(q, "--", "true");
  const r = await q.run(["events", "--follow", "--json", "--since-id", "0", "--max-events", "2"]);
  expect(r.code).toBe(0);
  const f = frames(r.stdout);
  expect(f).toHaveLength(3);
  expect(f[0]).toMatchObject({ id: 1, event: "added", job_id: 1 });
  expect(f[1]).toMatchObject({ id: 2 });
  expect(f[2]).toEqual({ control: { type: "end", reason: "max_events", events: 2, cursor: 2 } });
});

test("--follow sees events appended while it runs and ends on --idle-timeout", async () => {
  const follower = q.spawn(["events", "--follow", "--json", "--max-events", "3", "--poll-interval", "0.05"]);
  await addJob(q, "--", "true");
  await drain(q);
  const [stdout, code] = await Promise.all([new Response(follower.stdout).text(), follower.exited]);
  expect(code).toBe(0);
  const f = frames(stdout);
  expect(f.slice(0, 3).map((x) => x.event)).toEqual(["added", "claimed", "succeeded"]);
  expect(f[3].control.reason).toBe("max_events");
  const idle = await q.run(["events", "--follow", "--json", "--since-id", "3", "--idle-timeout", "0.2"]);
  expect(frames(idle.stdout)).toEqual([{ control: { type: "end", reason: "idle_timeout", events: 0, cursor: 3 } }]);
});

test("mode flags are checked: --wait with --follow, --max-events without --follow, --limit with --follow", async () => {
  for (const args of [
    ["--wait", "--follow"],
    ["--max-events", "3"],
    ["--wait-timeout", "1"],
    ["--follow", "--limit", "3"],
    ["--since-id", "-1"],
    ["extra"],
  ]) {
    const r = await q.json(["events", ...args]);
    expect([r.code, r.env.errors[0].code]).toEqual([1, "INVALID_INPUT"]);
  }
  const r = await q.json(["events", "--job", "42"]);
  expect([r.code, r.env.errors[0].code]).toEqual([1, "NOT_FOUND"]);
});

test("--follow ends with an end frame (reason signal) and exit 0 on SIGINT", async () => {
  const follower = startBg(q, ["events", "--follow", "--json", "--poll-interval", "0.05"]);
  await addJob(q, "--", "true");
  await waitFor("the first frame", () => follower.stdout().includes("\n"));
  follower.proc.kill("SIGINT");
  // The frames beside the code: an error frame says why, should it ever not be 0.
  expect([await follower.exited, follower.stdout()]).toEqual([0, expect.any(String)]);
  const f = frames(follower.stdout());
  expect(f[0]).toMatchObject({ event: "added" });
  expect(f.at(-1)).toEqual({ control: { type: "end", reason: "signal", events: 1, cursor: 1 } });
});
