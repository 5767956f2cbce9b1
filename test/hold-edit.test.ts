/**
 * The everyday verbs end to end through the real CLI (docs/architecture.md
 * "Holding a job", "Editing a job", "Acting on a selection"): `hold` keeps a
 * queued job from starting and a real drain runs the rest and says what it
 * left held; `release` lets it run; `list`, `show` and `status` say `held`;
 * `edit` changes a queued job's command, and refuses a running one with
 * CONFLICT (exit 5); `priority` reorders; id ranges act on every job of the
 * range; `hold --all` previews with `--dry-run`.
 */
import { expect, test } from "bun:test";
import { FAST_KNOBS, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue();

/** A drain of lane default, bounded: a hang fails the test instead of stalling it. */
async function drain(): Promise<{ code: number; stderr: string }> {
  const p = q.spawn(["work", "--drain", "--poll-interval", "0.05"], { env: FAST_KNOBS });
  const timer = setTimeout(() => p.kill("SIGKILL"), 60_000);
  const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  clearTimeout(timer);
  if (p.signalCode === "SIGKILL") throw new Error(`drain hung; stderr:\n${stderr}`);
  return { code, stderr };
}

test("a held job stays queued through a drain, with its dependent; released, both run", async () => {
  const held = await q.addJob("--", "true");
  const dep = await q.addJob("--needs", String(held), "--", "true");
  const free = await q.addJob("--", "true");
  const h = await q.json(["hold", String(held)]);
  expect(h.code).toBe(0);
  expect(h.env.data).toEqual({ count: 1, jobs: [{ job_id: held, held: true, changed: true }] });
  // Every view says held.
  const listed = await q.run(["list", "--state", "held"]);
  expect(listed.stdout).toMatch(new RegExp(`^${held}\\s+held\\s`, "m"));
  expect(listed.stdout).not.toContain(`\n${free} `);
  expect((await q.run(["show", String(held)])).stdout).toMatch(/state\s+held \(queued, kept from starting/);
  const status = await q.json(["status"]);
  expect(status.env.data).toMatchObject({ held: 1, queues: { default: { held: 1, queued: 3 } } });
  expect((await q.json(["list"])).env.data.jobs.find((j: { id: number }) => j.id === held)).toMatchObject({
    state: "queued",
    held: true,
  });
  // The drain runs the free job, waits for neither the held one nor its dependent, and says so.
  const r = await drain();
  expect(r.code).toBe(0);
  expect(r.stderr).toContain(`left held: job ${held} (lane default)`);
  expect(r.stderr).toContain(`left queued: job ${dep} waits on job ${held}: job ${held} is held`);
  expect((await q.job(free))!.state).toBe("done");
  expect((await q.job(held))!.state).toBe("queued");
  expect((await q.job(dep))!.state).toBe("queued");
  expect((await q.run(["release", String(held)])).code).toBe(0);
  const again = await drain();
  expect(again.code).toBe(0);
  expect((await q.job(held))!.state).toBe("done");
  expect((await q.job(dep))!.state).toBe("done");
});

test("edit changes a queued job's command and settings, and the drain runs the new command", async () => {
  const id = await q.addJob("--", "sh", "-c", "echo old");
  // --json before the --: what follows it is the new command, verbatim.
  const run = await q.run([
    "edit",
    String(id),
    "--priority",
    "4",
    "--env",
    "X=1",
    "--timeout",
    "1m",
    "--json",
    "--",
    "sh",
    "-c",
    "echo new-$X",
  ]);
  expect(run.code).toBe(0);
  const e = { env: JSON.parse(run.stdout) };
  expect(e.env.data.changed).toEqual(["argv", "env", "priority", "timeout_seconds"]);
  expect(e.env.data.job).toMatchObject({ argv: ["sh", "-c", "echo new-$X"], priority: 4, timeout_seconds: 60 });
  const r = await drain();
  expect(r.code).toBe(0);
  expect((await q.run(["output", String(id), "--stream", "stdout"])).stdout).toContain("\nnew-1\n");
});

test("edit, priority and hold refuse a running job with CONFLICT (exit 5) and a remediation", async () => {
  const sleeper = await q.addJob("--", "sleep", "600");
  const worker = q.spawn(["work", "--poll-interval", "0.05"], { env: FAST_KNOBS });
  try {
    await waitFor("the sleeper to start", async () => (await q.job(sleeper))?.state === "running", 30_000);
    const refused = await q.json(["edit", String(sleeper), "--priority", "1"]);
    expect(refused.code).toBe(5);
    expect(refused.env.errors[0].code).toBe("CONFLICT");
    expect(refused.env.errors[0].message).toContain(`job ${sleeper} is running`);
    const p = await q.json(["priority", String(sleeper), "3"]);
    expect(p.code).toBe(5);
    const holdRunning = await q.json(["hold", String(sleeper)]);
    expect(holdRunning.code).toBe(5);
    // The hint carries the queue selection (--db) as every hint does.
    expect(holdRunning.env.errors[0].remediation).toMatch(
      new RegExp(`spoolctl cancel .*\\b${sleeper} --running --yes$`),
    );
  } finally {
    // A worker told to stop finishes its running job first: cancel it, then stop the worker.
    await q.run(["cancel", String(sleeper), "--running", "--yes"]);
    worker.kill("SIGTERM");
    await worker.exited;
  }
  // Nothing to change is MISSING_REQUIRED (no terminal here, so no $EDITOR).
  const other = await q.addJob("--", "true");
  const none = await q.json(["edit", String(other)]);
  expect(none.code).toBe(1);
  expect(none.env.errors[0].code).toBe("MISSING_REQUIRED");
});

test("priority reorders the queue; id ranges and hold --all --dry-run act on every match", async () => {
  const ids: number[] = [];
  for (let i = 0; i < 5; i++) ids.push(await q.addJob("--tag", "grp=a", "--", "true"));
  const p = await q.json(["priority", String(ids[4]), "9"]);
  expect(p.code).toBe(0);
  expect(p.env.data).toMatchObject({ changed: ["priority"], job: { id: ids[4], priority: 9 } });
  const range = `${ids[1]}-${ids[3]}`;
  const h = await q.json(["hold", range]);
  expect(h.code).toBe(0);
  expect(h.env.data.jobs.map((j: { job_id: number }) => j.job_id)).toEqual([ids[1], ids[2], ids[3]]);
  const dry = await q.json(["release", "--all", "--tag", "grp=a", "--dry-run"]);
  expect(dry.env.data).toMatchObject({ count: 3, dry_run: true });
  expect((await q.json(["status"])).env.data.held).toBe(3);
  const more = await q.json(["hold", "--all", "--tag", "grp=a"]);
  expect(more.env.data.count).toBe(2);
  expect((await q.json(["status"])).env.data.held).toBe(5);
  const bad = await q.json(["cancel", `${ids[3]}-${ids[1]}`]);
  expect(bad.code).toBe(1);
  expect(bad.env.errors[0].code).toBe("INVALID_INPUT");
  const c = await q.json(["cancel", range]);
  expect(c.code).toBe(0);
  expect(c.env.data.count).toBe(3);
});
