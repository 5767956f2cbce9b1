/** Idempotency keys (SPEC §4 "Idempotency"), end to end through the real CLI. */
import { expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

// bunfig.toml's [test] timeout is not read by Bun 1.4.5: real processes need more than 5 s on a loaded machine.
setDefaultTimeout(60_000);

const q = useTempQueue();

/** `add --json …` (before `--`), returning the envelope and exit code. */
async function add(...args: string[]): Promise<{ code: number; env: any; stderr: string }> {
  const r = await q.run(["add", "--json", ...args]);
  let env: any;
  try {
    env = JSON.parse(r.stdout);
  } catch {
    throw new Error(`stdout is not JSON (exit ${r.code}):\n${r.stdout}\nstderr:\n${r.stderr}`);
  }
  return { code: r.code, env, stderr: r.stderr };
}

/** Every job and ledger row, as text: equal dumps mean nothing was added. */
async function dump(): Promise<string> {
  const all = await q.snapshot();
  return JSON.stringify({ jobs: all.jobs, events: all.events });
}

test("same key and same payload returns the active job, deduplicated", async () => {
  const first = await add("--key", "build-1", "--env", "A=1", "--env", "B=2", "--", "echo", "hi");
  expect(first.code).toBe(0);
  expect(first.env.data.deduplicated).toBe(false);
  const id = first.env.data.job_id;

  const second = await add("--key", "build-1", "--env", "B=2", "--env", "A=1", "--", "echo", "hi");
  expect(second.code).toBe(0);
  expect(second.env.ok).toBe(true);
  expect(second.env.data.job_id).toBe(id);
  expect(second.env.data.deduplicated).toBe(true);
  expect(second.env.data.state).toBe("queued");
  expect(second.env.warnings).toEqual([]);

  const human = await q.run(["add", "--key", "build-1", "--env", "A=1", "--env", "B=2", "--", "echo", "hi"]);
  expect(human.code).toBe(0);
  expect(human.stdout).toBe(`Job ${id} is already queued (deduplicated by --key)\n`);

  expect(await q.jobs()).toHaveLength(1);
  expect((await q.allEvents()).map((e) => e.event)).toEqual(["added"]);
  // The key names the job wherever an ID is taken.
  const show = await q.json(["show", "build-1"]);
  expect(show.env.data.job.id).toBe(id);
});

test("same payload with different tags, note or priority warns IDEMPOTENCY_METADATA_DIFFERS and keeps the original", async () => {
  const first = await add("--key", "k", "--tag", "team=a", "--note", "first", "--priority", "1", "--", "echo", "hi");
  const id = first.env.data.job_id;
  for (const extra of [
    ["--tag", "team=b"],
    ["--note", "second"],
    ["--priority", "9"],
  ]) {
    const base: Record<string, string> = { "--tag": "team=a", "--note": "first", "--priority": "1" };
    base[extra[0]!] = extra[1]!;
    const args = Object.entries(base).flat();
    const r = await add("--key", "k", ...args, "--", "echo", "hi");
    expect(r.code).toBe(0);
    expect(r.env.ok).toBe(true);
    expect(r.env.data.job_id).toBe(id);
    expect(r.env.data.deduplicated).toBe(true);
    expect(r.env.warnings).toHaveLength(1);
    expect(r.env.warnings[0].code).toBe("IDEMPOTENCY_METADATA_DIFFERS");
    expect(r.env.warnings[0].message).toContain(`job ${id}`);
  }
  const jobs = await q.jobs();
  expect(jobs).toHaveLength(1);
  const job = jobs[0]!;
  expect(job.tags).toEqual({ team: "a" });
  expect(job.note).toBe("first");
  expect(job.priority).toBe(1);

  // Human mode: the warning is one line on stderr, the result on stdout.
  const human = await q.run([
    "add",
    "--key",
    "k",
    "--note",
    "other",
    "--tag",
    "team=a",
    "--priority",
    "1",
    "--",
    "echo",
    "hi",
  ]);
  expect(human.code).toBe(0);
  expect(human.stdout).toBe(`Job ${id} is already queued (deduplicated by --key)\n`);
  expect(human.stderr).toMatch(/^spoolctl: warning: IDEMPOTENCY_METADATA_DIFFERS: .+\n$/);
});

test("a different payload under an active key is IDEMPOTENCY_CONFLICT (exit 5) and adds nothing", async () => {
  const cwdA = join(q.dir, "a");
  const cwdB = join(q.dir, "b");
  mkdirSync(cwdA);
  mkdirSync(cwdB);
  const first = await add("--key", "deploy", "--cwd", cwdA, "--env", "X=1", "--", "echo", "v1");
  const id = first.env.data.job_id;
  const before = await dump();

  const variants = [
    ["--cwd", cwdA, "--env", "X=1", "--", "echo", "v2"], // argv
    ["--cwd", cwdA, "--env", "X=1", "--", "echo", "v1", ""], // argv, one more (empty) argument
    ["--cwd", cwdB, "--env", "X=1", "--", "echo", "v1"], // cwd
    ["--env", "X=1", "--", "echo", "v1"], // no cwd
    ["--cwd", cwdA, "--env", "X=2", "--", "echo", "v1"], // env value
    ["--cwd", cwdA, "--env", "X=1", "--env", "Y=1", "--", "echo", "v1"], // env key
    ["--cwd", cwdA, "--env", "X=1", "-c", "echo v1"], // shell form
  ];
  for (const v of variants) {
    const r = await add("--key", "deploy", ...v);
    expect(r.code).toBe(5);
    expect(r.env.ok).toBe(false);
    expect(r.env.data).toBeNull();
    expect(r.env.errors).toHaveLength(1);
    expect(r.env.errors[0].code).toBe("IDEMPOTENCY_CONFLICT");
    expect(r.env.errors[0].exit_code).toBe(5);
    expect(r.env.errors[0].message).toContain(`active job ${id}`);
    expect(r.env.errors[0].detail).toEqual({ job_id: id, key: "deploy" });
    expect(r.stderr).not.toContain("    at ");
  }
  expect(await dump()).toBe(before);

  const human = await q.run(["add", "--key", "deploy", "--", "echo", "other"]);
  expect(human.code).toBe(5);
  expect(human.stdout).toBe("");
  expect(human.stderr).toMatch(/^spoolctl: error: IDEMPOTENCY_CONFLICT: key "deploy" belongs to active job \d+.*\n$/);
  expect(await dump()).toBe(before);
});

test("a running job holds its key; once it ends the key is free again", async () => {
  const release = join(q.dir, "release");
  const script = `while [ ! -e '${release}' ]; do sleep 0.05; done; echo finished`;
  const first = await add("--key", "nightly", "-c", script);
  const id = first.env.data.job_id;
  const worker = q.spawn(["work", "--drain"]);
  try {
    await waitFor("the job to run", async () => (await q.job(id))?.state === "running");
    const running = await add("--key", "nightly", "-c", script);
    expect(running.code).toBe(0);
    expect(running.env.data.job_id).toBe(id);
    expect(running.env.data.deduplicated).toBe(true);
    expect(running.env.data.state).toBe("running");
    const conflict = await add("--key", "nightly", "-c", "echo other");
    expect(conflict.code).toBe(5);
    expect(conflict.env.errors[0].code).toBe("IDEMPOTENCY_CONFLICT");
    writeFileSync(release, "");
    expect(await worker.exited).toBe(0);
  } finally {
    writeFileSync(release, "");
    worker.kill();
  }
  expect((await q.job(id))?.state).toBe("done");

  // Done: the same key adds a new job, even with a different payload.
  const again = await add("--key", "nightly", "-c", script);
  expect(again.code).toBe(0);
  expect(again.env.data.deduplicated).toBe(false);
  expect(again.env.data.job_id).not.toBe(id);
  const second = again.env.data.job_id;
  const other = await add("--key", "nightly", "-c", "echo other");
  expect(other.code).toBe(5); // the new job is active and holds the key
  // The key now names the newest job.
  expect((await q.json(["show", "nightly"])).env.data.job.id).toBe(second);
});

test("a dead job frees its key", async () => {
  const first = await add("--key", "flaky", "--max-retries", "0", "--", "false");
  const id = first.env.data.job_id;
  await q.json(["work", "--drain"]);
  expect((await q.job(id))?.state).toBe("dead");
  const again = await add("--key", "flaky", "--", "true");
  expect(again.code).toBe(0);
  expect(again.env.data.deduplicated).toBe(false);
  expect(again.env.data.job_id).toBe(id + 1);
});

test("add --from: keys deduplicate within the file, and a conflict adds nothing at all", async () => {
  const ok = join(q.dir, "ok.ndjson");
  writeFileSync(
    ok,
    `${['{"argv": ["echo", "a"], "key": "x"}', '{"argv": ["echo", "a"], "key": "x"}', '{"argv": ["echo", "b"]}'].join(
      "\n",
    )}\n`,
  );
  const r = await add("--from", ok);
  expect(r.code).toBe(0);
  expect(r.env.data.count).toBe(3);
  expect(r.env.data.jobs.map((j: any) => [j.job_id, j.deduplicated])).toEqual([
    [1, false],
    [1, true],
    [2, false],
  ]);

  const before = await dump();
  const bad = join(q.dir, "bad.ndjson");
  writeFileSync(bad, `${['{"argv": ["echo", "c"]}', '{"argv": ["echo", "not a"], "key": "x"}'].join("\n")}\n`);
  const c = await add("--from", bad);
  expect(c.code).toBe(5);
  expect(c.env.errors[0].code).toBe("IDEMPOTENCY_CONFLICT");
  expect(await dump()).toBe(before);
});

test("concurrent adds with one key create exactly one job", async () => {
  const results = await Promise.all(Array.from({ length: 5 }, () => add("--key", "once", "--", "echo", "same")));
  for (const r of results) expect(r.code).toBe(0);
  const ids = new Set(results.map((r) => r.env.data.job_id));
  expect(ids.size).toBe(1);
  expect(results.filter((r) => !r.env.data.deduplicated)).toHaveLength(1);
  expect(await q.jobs()).toHaveLength(1);
});
