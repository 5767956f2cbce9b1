/**
 * `spoolctl report` through the real CLI (issue 5): JUnit XML parsed by a real
 * XML parser (fast-xml-parser) and checked field by field against the
 * database; markdown for a CI step summary; filters; refusals.
 */
import { beforeAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue({ scope: "file" });
const ids: Record<string, number> = {};

async function add(args: string[]): Promise<number> {
  const r = await q.run(["add", "--json", ...args]);
  expect(r.code).toBe(0);
  return r.json.data.job_id;
}

beforeAll(async () => {
  ids.ok = await add(["--tag", "run=7", "--", "echo", "all good"]);
  // Dead after one attempt; stderr carries a control character, an ANSI color and XML metacharacters.
  ids.dead = await add([
    "--max-retries",
    "0",
    "--tag",
    "run=7",
    "-c",
    `printf 'first line\\nboom \\001\\033[31mred\\033[0m <&> "q" ]]>\\n' >&2; echo partial; exit 3`,
  ]);
  // Dead after two attempts (one retry): its time is the sum of both.
  ids.flaky = await add(["--max-retries", "1", "--", "sh", "-c", "echo nope >&2; exit 1"]);
  ids.canceled = await add(["--after", "1h", "--", "echo", "never"]);
  ids.pending = await add(["--after", "1h", "--", "echo", "later"]);
  ids.other = await add(["--queue", "builds", "--tag", "run=7", "--", "echo", "a|b", "<x>"]);
  const cancel = await q.json(["cancel", String(ids.canceled)]);
  expect(cancel.code).toBe(0);
  expect((await q.run(["work", "--drain"])).code).toBe(0);
  expect((await q.run(["work", "--drain", "--queue", "builds"])).code).toBe(0);
}, 60000);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "",
  isArray: (name) => ["testsuite", "testcase", "property"].includes(name),
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
});

async function attemptTime(jobId: number): Promise<number> {
  const rows = await q.attempts(jobId);
  return rows.reduce((sum, a) => sum + (a.finished_at! - a.started_at), 0);
}

test("--junit writes valid JUnit XML: suites per lane, cases field by field", async () => {
  const file = join(q.dir, "reports", "nested", "spoolctl.xml");
  const r = await q.run(["report", "--junit", file]);
  expect(r.code).toBe(0);
  expect(r.stdout).toBe("");
  expect(r.stderr).toContain(`wrote JUnit report (6 jobs: 2 passed, 2 failed, 1 skipped, 1 not finished) to ${file}`);
  const xml = readFileSync(file, "utf8");
  expect(XMLValidator.validate(xml)).toBe(true);
  expect(xml).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/);

  const doc = parser.parse(xml);
  const root = doc.testsuites;
  expect(root.name).toBe("spoolctl");
  expect(root.tests).toBe("6");
  expect(root.failures).toBe("2");
  expect(root.errors).toBe("0");
  expect(root.skipped).toBe("2");

  const suites = root.testsuite;
  expect(suites.map((s: any) => s.name)).toEqual(["spoolctl.builds", "spoolctl.default"]);
  const [builds, def] = suites;
  expect([builds.tests, builds.failures, builds.skipped]).toEqual(["1", "0", "0"]);
  expect([def.tests, def.failures, def.skipped]).toEqual(["5", "2", "2"]);
  expect(def.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

  const byId = new Map<number, any>();
  for (const suite of suites)
    for (const c of suite.testcase)
      byId.set(Number(c.properties.property.find((p: any) => p.name === "job_id").value), c);
  expect([...byId.keys()].sort((a, b) => a - b)).toEqual(Object.values(ids).sort((a, b) => a - b));
  const prop = (c: any, name: string) => c.properties.property.find((p: any) => p.name === name)?.value;

  const ok = byId.get(ids.ok!);
  expect(ok.name).toBe(`job ${ids.ok}: echo 'all good'`);
  expect(ok.classname).toBe("spoolctl.default");
  expect(Number(ok.time)).toBeCloseTo(await attemptTime(ids.ok!), 2);
  expect(ok.failure).toBeUndefined();
  expect(ok.skipped).toBeUndefined();
  expect(prop(ok, "state")).toBe("done");
  expect(prop(ok, "attempts_total")).toBe("1");
  expect(prop(ok, "attempts")).toBeUndefined(); // JSON's `attempts` counts failures: JUnit does not reuse the name for runs
  expect(prop(ok, "tag.run")).toBe("7");

  const dead = byId.get(ids.dead!);
  expect(dead.name.startsWith(`job ${ids.dead}: sh -c `)).toBe(true);
  expect(dead.failure.type).toBe("process_exit");
  expect(dead.failure.message).toBe("process_exit: exit 3");
  const body: string = dead.failure["#text"];
  expect(body.startsWith("process_exit: exit 3")).toBe(true);
  // stderr tail: escaped metacharacters come back verbatim; the control byte and the ANSI codes are gone.
  expect(body).toContain(`first line\nboom red <&> "q" ]]>`);
  expect(dead["system-err"]).toBe(`first line\nboom red <&> "q" ]]>`);
  expect(dead["system-out"]).toBe("partial");
  expect(Number(dead.time)).toBeCloseTo(await attemptTime(ids.dead!), 2);

  const flaky = byId.get(ids.flaky!);
  expect(prop(flaky, "attempts_total")).toBe("2");
  expect(flaky.failure.message).toBe("process_exit: exit 1");
  expect(flaky.failure["#text"]).toBe("process_exit: exit 1\n\nstderr (tail):\nnope");
  expect(Number(flaky.time)).toBeCloseTo(await attemptTime(ids.flaky!), 2);

  const canceled = byId.get(ids.canceled!);
  expect(canceled.skipped.message).toBe("canceled before it ran");
  expect(canceled.failure).toBeUndefined();
  expect(Number(canceled.time)).toBe(0);

  const pending = byId.get(ids.pending!);
  expect(pending.skipped.message).toBe("not finished: queued");
  expect(prop(pending, "state")).toBe("queued");

  const other = byId.get(ids.other!);
  expect(other.name).toBe(`job ${ids.other}: echo 'a|b' '<x>'`);
  expect(other.classname).toBe("spoolctl.builds");
}, 60000);

test("--json returns the summary data; filters combine (ids, --queue, --tag, --since)", async () => {
  const all = await q.json(["report"]);
  expect(all.code).toBe(0);
  const d = all.env.data;
  expect(d.totals).toMatchObject({ jobs: 6, passed: 2, failed: 2, skipped: 1, pending: 1 });
  expect(d.lanes.builds).toMatchObject({ jobs: 1, passed: 1 });
  expect(d.cases.map((c: any) => c.id)).toEqual(Object.values(ids).sort((a, b) => a - b));
  const dead = d.cases.find((c: any) => c.id === ids.dead);
  expect(dead).toMatchObject({
    state: "dead",
    result: "failed",
    failure_reason: "process_exit",
    exit_code: 3,
    message: "process_exit: exit 3",
    attempts_total: 1,
  });
  expect(dead.stderr_tail).toContain("boom \u0001\u001b[31mred"); // JSON keeps the bytes; only XML strips them
  expect(d.files).toEqual({ junit: null, markdown: null });

  // The data has exactly the shape `spoolctl schema --verb report` publishes.
  const schema = (await q.json(["schema", "--verb", "report"])).env.data.verbs.report;
  expect(Object.keys(d).sort()).toEqual([...schema.required].sort());
  const caseSchema = schema.properties.cases.items;
  for (const c of d.cases) expect(Object.keys(c).sort()).toEqual([...caseSchema.required].sort());
  expect(caseSchema.properties.result.enum).toEqual(["passed", "flaky", "failed", "skipped", "pending"]);

  const two = await q.json(["report", String(ids.ok), String(ids.dead)]);
  expect(two.env.data.cases.map((c: any) => c.id)).toEqual([ids.ok, ids.dead]);
  const lane = await q.json(["report", "--queue", "builds"]);
  expect(lane.env.data.cases.map((c: any) => c.id)).toEqual([ids.other]);
  const tagged = await q.json(["report", "--tag", "run=7"]);
  expect(tagged.env.data.cases.map((c: any) => c.id)).toEqual([ids.ok, ids.dead, ids.other]);
  const both = await q.json(["report", "--tag", "run=7", "--queue", "default", String(ids.other), String(ids.ok)]);
  expect(both.env.data.cases.map((c: any) => c.id)).toEqual([ids.ok]);
  expect((await q.json(["report", "--since", "1h"])).env.data.totals.jobs).toBe(6);
  expect((await q.json(["report", "--since", "2999-01-01T00:00:00Z"])).env.data.totals.jobs).toBe(0);
  const limited = await q.json(["report", "--limit", "2"]);
  expect(limited.env.data.cases.map((c: any) => c.id)).toEqual([ids.pending, ids.other]);
  expect(limited.env.warnings.map((w: any) => w.code)).toEqual(["REPORT_TRUNCATED"]);

  const missing = await q.json(["report", "999"]);
  expect(missing.code).toBe(1);
  expect(missing.env.errors[0].code).toBe("NOT_FOUND");
}, 60000);

test("--markdown to stdout is a step-summary table; --markdown FILE and --junit together", async () => {
  const r = await q.run(["report", "--markdown", "--title", "Smoke jobs"]);
  expect(r.code).toBe(0);
  const md = r.stdout;
  expect(md.startsWith("## Smoke jobs\n")).toBe(true);
  expect(md).toContain("**6 jobs** · ✅ passed 2 · ❌ failed 2 · ⏭️ skipped 1 · ⏳ not finished 1");
  expect(md).toContain("| lane | jobs | passed | failed | skipped | not finished | time |");
  expect(md).toContain("| job | lane | result | attempts | time | command | reason |");
  // Failures come first in the table; a pipe in a command cannot split a cell.
  const rows = md.split("\n").filter((l) => /^\| \d+ \|/.test(l));
  expect(rows.map((l) => Number(l.split("|")[1]))).toEqual([
    ids.dead!,
    ids.flaky!,
    ids.pending!,
    ids.canceled!,
    ids.ok!,
    ids.other!,
  ]);
  const otherRow = rows.find((l) => l.startsWith(`| ${ids.other} |`))!;
  expect(otherRow.split(/(?<!\\)\|/).length).toBe(9); // 7 cells between 8 unescaped pipes
  expect(md).toContain("### Failures");
  expect(md).toContain(`<details><summary>job ${ids.dead}: process_exit: exit 3</summary>`);
  expect(md).not.toMatch(/[\u0000-\u0008\u000b-\u001f]/);

  const mdFile = join(q.dir, "summary.md");
  const xmlFile = join(q.dir, "junit.xml");
  const j = await q.json(["report", "--junit", xmlFile, "--markdown", mdFile]);
  expect(j.code).toBe(0);
  expect(j.env.data.files).toEqual({ junit: xmlFile, markdown: mdFile });
  expect(readFileSync(mdFile, "utf8").startsWith("## spoolctl report\n")).toBe(true);
  expect(XMLValidator.validate(readFileSync(xmlFile, "utf8"))).toBe(true);

  const text = await q.run(["report", "--queue", "builds"]);
  expect(text.stdout).toMatch(
    /^1 job: 1 passed, 0 failed, 0 skipped, 0 not finished \(\d+\.\ds\)\nID +RESULT +QUEUE +TRIES +TIME +REASON +COMMAND\n/,
  );
  expect(text.stdout).toMatch(new RegExp(`\n${ids.other} +passed +builds +1 `));
}, 60000);

test("refusals name the flag and what to do", async () => {
  const digits = await q.json(["report", "--markdown", "3"]);
  expect(digits.code).toBe(1);
  expect(digits.env.errors[0].code).toBe("INVALID_INPUT");
  expect(digits.env.errors[0].message).toContain("--markdown 3");

  const stdoutJson = await q.json(["report", "--markdown"]);
  expect(stdoutJson.code).toBe(1);
  expect(stdoutJson.env.errors[0].message).toContain("--markdown without a FILE");

  const aFile = join(q.dir, "a-file");
  writeFileSync(aFile, "");
  const unwritable = await q.json(["report", "--junit", join(aFile, "inside-a-file.xml")]);
  expect(unwritable.code).toBe(1);
  expect(unwritable.env.errors[0].message).toContain("cannot write --junit");

  const since = await q.json(["report", "--since", "yesterday"]);
  expect(since.code).toBe(1);
  expect(since.env.errors[0].message).toContain("--since");
}, 60000);
