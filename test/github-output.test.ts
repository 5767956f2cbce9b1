/**
 * GitHub Actions output (issue 33 item 4, README "CI example"): the exact
 * workflow-command syntax of `output --follow --all` under GITHUB_ACTIONS=true
 * or `--ci github`, `report --summary` appending to $GITHUB_STEP_SUMMARY, and
 * a flaky job (done after a failed attempt) in JUnit, markdown and `wait --json`.
 */
import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { errorText, escapeData, escapeProperty, groupText } from "../src/ui/github.ts";
import { useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue();

test("workflow commands: GitHub's escaping and the exact group, stop-commands and error lines", () => {
  expect(escapeData("50% a\r\nb")).toBe("50%25 a%0D%0Ab");
  expect(escapeProperty("test[os=linux,node=20]: x")).toBe("test[os=linux%2Cnode=20]%3A x");
  expect(groupText("build (exit 0, 1.5s)", ["one", "::error::x"], "T0K")).toBe(
    "::group::build (exit 0, 1.5s)\n::stop-commands::T0K\none\n::error::x\n::T0K::\n::endgroup::\n",
  );
  expect(errorText("a,b", "job 2 ended dead: exit 3\nboom")).toBe(
    "::error title=a%2Cb::job 2 ended dead: exit 3%0Aboom\n",
  );
});

test("output --follow --all groups each attempt under GITHUB_ACTIONS=true and annotates dead jobs once", async () => {
  const lines = [
    { ref: "build", command: "echo building; echo warned >&2" },
    {
      ref: "test",
      max_retries: 0,
      command: "echo '::warning::from the job'; echo 'line 1' >&2; echo 'it broke' >&2; exit 3",
    },
    // Three failed attempts, one dead job: one annotation, also when a finished batch is replayed.
    { ref: "again", max_retries: 2, command: "echo nope >&2; exit 4" },
  ];
  await q.setConfig("backoff-base", "1");
  await q.setConfig("backoff-cap", "1");
  const add = await q.run(["add", "--batch", "b1", "--from", "-"], {
    stdin: lines.map((l) => JSON.stringify(l)).join("\n"),
  });
  expect(add.code).toBe(0);
  expect((await q.run(["work", "--drain"])).code).toBe(0);
  const ways: { env: Record<string, string>; args: string[] }[] = [
    { env: { GITHUB_ACTIONS: "true" }, args: [] },
    { env: { GITHUB_ACTIONS: "" }, args: ["--ci", "github"] },
  ];
  for (const how of ways) {
    const r = await q.run(["output", "--follow", "--all", "--batch", "b1", ...how.args], { env: how.env });
    expect(r.code).toBe(0);
    const token = /::stop-commands::([0-9a-f]{24})\n/.exec(r.stdout)![1]!;
    expect(r.stdout).toMatch(
      new RegExp(
        `::group::build \\(exit 0, \\d+\\.\\ds\\)\\n::stop-commands::${token}\\nbuilding\\n\\[stderr\\] warned\\n::${token}::\\n::endgroup::\\n`,
      ),
    );
    expect(r.stdout).toMatch(
      new RegExp(
        `::group::test \\(exit 3, \\d+\\.\\ds\\)\\n::stop-commands::${token}\\n::warning::from the job\\n\\[stderr\\] line 1\\n\\[stderr\\] it broke\\n::${token}::\\n::endgroup::\\n::error title=test::job 2 ended dead: exit 3%0Aline 1%0Ait broke\\n`,
      ),
    );
    expect(r.stdout.match(/^::error title=test::/gm)).toHaveLength(1);
    expect(r.stdout.match(/^::error title=again::/gm)).toHaveLength(1);
    expect(r.stdout.match(/^::error /gm)).toHaveLength(2);
    expect(r.stdout).not.toContain("[1]");
  }
  // Elsewhere, the live [ID] prefixes stay.
  const plain = await q.run(["output", "--follow", "--all", "--batch", "b1"], { env: { GITHUB_ACTIONS: "" } });
  expect(plain.stdout).toContain("[1] building\n");
  expect(plain.stdout).not.toContain("::group::");
});

test("a job that passed after a failed attempt is flaky: JUnit <flakyFailure>, markdown, wait --json, --summary", async () => {
  const marker = join(q.dir, "ran-once");
  await q.setConfig("backoff-cap", "0");
  const add = await q.run([
    "add",
    "--batch",
    "b2",
    "--seal",
    "--name",
    "flaky-test",
    "-c",
    `if [ -e '${marker}' ]; then echo ok; else touch '${marker}'; exit 1; fi`,
  ]);
  expect(add.code).toBe(0);
  expect((await q.run(["work", "--drain"])).code).toBe(0);
  const wait = await q.json(["wait", "--batch", "b2"]);
  expect(wait.code).toBe(0);
  expect(wait.env.data.flaky).toBe(1);
  expect(Object.values(wait.env.data.jobs)).toMatchObject([{ state: "done", flaky: true }]);
  const summary = join(q.dir, "summary.md");
  writeFileSync(summary, "before\n");
  const junit = join(q.dir, "j.xml");
  const r = await q.run(["report", "--batch", "b2", "--junit", junit, "--summary"], {
    env: { GITHUB_STEP_SUMMARY: summary },
  });
  expect(r.code).toBe(0);
  const xml = readFileSync(junit, "utf8");
  expect(xml).toMatch(
    /<testcase name="flaky-test" [^>]*>\n(?:.*\n)*?\s+<flakyFailure message="attempt 1: process_exit: exit 1" type="process_exit"\/>\n/,
  );
  expect(xml).not.toContain("<failure");
  const md = readFileSync(summary, "utf8");
  expect(md.startsWith("before\n## spoolctl report\n")).toBe(true);
  expect(md).toMatch(/^\| \d+ flaky-test \| default \| ⚠️ flaky \| 2 \|/m);
  const unset = await q.run(["report", "--summary"], { env: { GITHUB_STEP_SUMMARY: "" } });
  expect(unset.code).toBe(1);
  expect(unset.stderr).toContain("--summary appends to $GITHUB_STEP_SUMMARY, which is not set");
});
