/**
 * Job names through the real CLI (issue 33 item 1, docs/architecture.md "Job
 * names"): `add --name`, a `--from` line's `ref` kept as the name, the name as
 * a reference for retry, show, wait, output, cancel and `--needs`, and the
 * name in list, show, JUnit and markdown.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue();

/** The CLI with --json before any `--` (after it, the flag would be part of the command). */
async function j(args: string[]): Promise<{ code: number; env: any }> {
  const r = await q.run([args[0]!, "--json", ...args.slice(1)]);
  return { code: r.code, env: JSON.parse(r.stdout) };
}

async function add(args: string[]): Promise<number> {
  const r = await j(["add", ...args]);
  expect(r.code).toBe(0);
  return r.env.data.job_id;
}

test("a name is a reference for show, output, wait, retry, cancel and --needs", async () => {
  const build = await add(["--name", "build", "--max-retries", "0", "--", "sh", "-c", "echo built; exit 1"]);
  const deploy = await add([
    "--name",
    "deploy",
    "--needs",
    "build",
    "--needs-policy",
    "done",
    "--",
    "echo",
    "deployed",
  ]);
  const show = await q.json(["show", "deploy"]);
  expect(show.env.data.job.id).toBe(deploy);
  expect(show.env.data.job.name).toBe("deploy");
  expect(show.env.data.job.waiting_on).toEqual([build]);
  expect((await q.run(["work", "--drain"])).code).toBe(0);
  const out = await q.run(["output", "build"]);
  expect(out.stdout).toContain("built");
  const wait = await q.json(["wait", "deploy", "--timeout", "30s"]);
  expect(wait.env.data.jobs[String(deploy)].state).toBe("done");
  const retry = await q.json(["retry", "build"]);
  expect(retry.code).toBe(0);
  expect((await q.job(build))!.state).toBe("queued");
  const cancel = await q.json(["cancel", "build"]);
  expect(cancel.code).toBe(0);
  expect((await q.job(build))!.state).toBe("canceled");
  const missing = await q.json(["show", "no-such-name"]);
  expect(missing.code).not.toBe(0);
  expect(missing.env.errors[0].message).toContain('no job with id, key or name "no-such-name"');
});

test("the newest job of a name wins, and a key wins over a name", async () => {
  await add(["--name", "nightly", "--", "true"]);
  const newer = await add(["--name", "nightly", "--", "true"]);
  const keyed = await add(["--key", "nightly", "--", "false"]);
  expect((await q.json(["show", "nightly"])).env.data.job.id).toBe(keyed);
  expect((await q.json(["list", "--search", "nightly"])).env.data.jobs.map((j: { id: number }) => j.id)).toContain(
    newer,
  );
});

test("--from: a ref becomes the name unless the line gives a key; a name field too", async () => {
  const file = join(q.dir, "graph.ndjson");
  writeFileSync(
    file,
    [
      JSON.stringify({ ref: "compile", argv: ["true"] }),
      JSON.stringify({ ref: "check", key: "check-4", needs: ["compile"], argv: ["true"] }),
      JSON.stringify({ name: "docs build", argv: ["true"] }),
    ].join("\n"),
  );
  const r = await q.json(["add", "--from", file]);
  expect(r.code).toBe(0);
  const [compile, check, docs] = r.env.data.jobs.map((j: { job_id: number }) => j.job_id);
  expect((await q.job(compile))!.name).toBe("compile");
  expect((await q.job(check))!.name).toBeNull();
  expect((await q.job(docs))!.name).toBe("docs build");
  // retry test-b → NOT_FOUND was the bug: the ref is a reference after the add.
  expect((await q.json(["show", "compile"])).env.data.job.id).toBe(compile);
  expect((await q.json(["show", "check-4"])).env.data.job.id).toBe(check);
});

test("list, show, JUnit and markdown show the name (else the key)", async () => {
  await add(["--name", "unit-tests", "--", "true"]);
  await add(["--key", "check-4", "-c", "exit 0"]);
  await add(["--", "echo", "anonymous"]);
  expect((await q.run(["work", "--drain"])).code).toBe(0);
  const list = await q.run(["list"]);
  expect(list.stdout.split("\n")[0]).toMatch(/^ID\s+STATE\s+NAME\s+QUEUE/);
  expect(list.stdout).toMatch(/unit-tests/);
  const show = await q.run(["show", "unit-tests"]);
  expect(show.stdout).toMatch(/^name\s+unit-tests$/m);
  const junit = join(q.dir, "r.xml");
  const md = join(q.dir, "r.md");
  expect((await q.run(["report", "--junit", junit, "--markdown", md])).code).toBe(0);
  const xml = await Bun.file(junit).text();
  expect(xml).toContain('<testcase name="unit-tests"');
  expect(xml).toContain('<testcase name="check-4"');
  expect(xml).toMatch(/<testcase name="job \d+: echo anonymous"/);
  const text = await Bun.file(md).text();
  expect(text).toMatch(/^\| \d+ unit-tests \| default \| ✅ passed \|/m);
  expect(text).toMatch(/^\| \d+ check-4 \| default \|/m);
});

test("a bad name is refused naming the flag or line", async () => {
  for (const [name, why] of [
    ["12", "not only digits"],
    ["last", "nor last"],
    ["  ", "non-blank"],
    ["a\nb", "on one line"],
  ] as const) {
    const r = await j(["add", "--name", name, "--", "true"]);
    expect(r.code).toBe(1);
    expect(r.env.errors[0].code).toBe("INVALID_INPUT");
    expect(r.env.errors[0].message).toContain("--name");
    expect(r.env.errors[0].message).toContain(why);
  }
  const file = join(q.dir, "bad.ndjson");
  writeFileSync(file, `${JSON.stringify({ argv: ["true"] })}\n${JSON.stringify({ ref: "7", argv: ["true"] })}\n`);
  const r = await q.json(["add", "--from", file]);
  expect(r.env.errors[0].message).toContain("line 2: ref");
});
