/**
 * `add --matrix` and a `--from` line's `"matrix"` (issue 33 item 3,
 * docs/architecture.md "Matrix"): one job per cell in one transaction, named
 * by its cell, placeholders filled; with --batch, --needs, --queue,
 * --fail-fast; the refusals (unknown placeholder, empty axis, too many cells).
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expandMatrix, MATRIX_MAX_CELLS, parseMatrixFlags } from "../src/ops/matrix.ts";
import { useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue();

/** The CLI with --json before any `--`. */
async function j(args: string[], stdin?: string): Promise<{ code: number; env: any }> {
  const r = await q.run([args[0]!, "--json", ...args.slice(1)], stdin === undefined ? {} : { stdin });
  return { code: r.code, env: JSON.parse(r.stdout) };
}

test("cells: first axis slowest, {k} filled in argv, -c strings and cwd; ${HOME} is the shell's", () => {
  const axes = parseMatrixFlags(["os=linux,mac", "node=20,22"]);
  const cells = expandMatrix({ argv: ["./test.sh", "{os}", "--node={node}"] }, axes, "--matrix");
  expect(cells.map((c) => [c.name, c.argv])).toEqual([
    ["test.sh[os=linux,node=20]", ["./test.sh", "linux", "--node=20"]],
    ["test.sh[os=linux,node=22]", ["./test.sh", "linux", "--node=22"]],
    ["test.sh[os=mac,node=20]", ["./test.sh", "mac", "--node=20"]],
    ["test.sh[os=mac,node=22]", ["./test.sh", "mac", "--node=22"]],
  ]);
  const shell = expandMatrix({ command: "echo ${HOME} {n}", key: "k", name: "say" }, parseMatrixFlags(["n=1"]), "x");
  expect(shell).toMatchObject([{ command: "echo ${HOME} 1", key: "k[n=1]", name: "say[n=1]" }]);
  expect(() =>
    parseMatrixFlags([`a=${Array.from({ length: 101 }, (_, i) => i).join(",")}`, `b=${"x,".repeat(99)}x`]),
  ).toThrow(`more than ${MATRIX_MAX_CELLS.toLocaleString("en-US")} cells`);
  expect(() => parseMatrixFlags(["os=linux", "os=mac"])).toThrow("axis os is given twice");
  expect(() => parseMatrixFlags(["os"])).toThrow("expected KEY=V1,V2");
});

test("add --matrix: one job per cell in one add, in the batch, lane and needs given", async () => {
  const build = (await j(["add", "--name", "build", "--", "true"])).env.data.job_id;
  const r = await j([
    "add",
    "--batch",
    "ci-1",
    "--seal",
    "--fail-fast",
    "--queue",
    "tests",
    "--needs",
    "build",
    "--matrix",
    "os=linux,mac",
    "--matrix",
    "node=20,22",
    "--",
    "./test.sh",
    "{os}",
    "{node}",
  ]);
  expect(r.code).toBe(0);
  expect(r.env.data.count).toBe(4);
  const ids: number[] = r.env.data.jobs.map((x: { job_id: number }) => x.job_id);
  const jobs = await Promise.all(ids.map((id) => q.job(id)));
  expect(jobs.map((x) => x!.name)).toEqual([
    "test.sh[os=linux,node=20]",
    "test.sh[os=linux,node=22]",
    "test.sh[os=mac,node=20]",
    "test.sh[os=mac,node=22]",
  ]);
  expect(jobs.map((x) => x!.argv.slice(1))).toEqual([
    ["linux", "20"],
    ["linux", "22"],
    ["mac", "20"],
    ["mac", "22"],
  ]);
  expect(new Set(jobs.map((x) => `${x!.queue} ${x!.batch} ${x!.needs_left}`))).toEqual(new Set(["tests ci-1 1"]));
  const batch = await j(["batch", "show", "ci-1"]);
  expect(batch.env.data).toMatchObject({ total: 4, fail_fast: "queued" });
  expect(batch.env.data.sealed_at).not.toBeNull();
  // A cell is a reference by its name.
  expect((await j(["show", "test.sh[os=mac,node=20]"])).env.data.job.id).toBe(ids[2]);
  expect((await q.job(build))!.name).toBe("build");
});

test("--from lines with a matrix; needs of the bare ref wait for every cell", async () => {
  const lines = [
    { ref: "test", matrix: { os: ["linux", "mac"], shard: [1, 2] }, argv: ["echo", "{os}", "{shard}"] },
    { ref: "report", needs: ["test"], needs_policy: "done", argv: ["echo", "report"] },
  ];
  const r = await j(["add", "--from", "-"], lines.map((l) => JSON.stringify(l)).join("\n"));
  expect(r.code).toBe(0);
  expect(r.env.data.count).toBe(5);
  const report = r.env.data.jobs[4].job_id;
  expect((await q.job(report))!.needs_left).toBe(4);
  expect((await q.job(r.env.data.jobs[0].job_id))!.name).toBe("test[os=linux,shard=1]");
  expect((await q.run(["work", "--drain"])).code).toBe(0);
  expect((await q.job(report))!.state).toBe("done");
});

test("refusals name what was wrong, and add nothing", async () => {
  const cases: [string[], string][] = [
    [["--matrix", "os=linux", "--", "echo", "{osx}"], "holds {osx}, which no axis fills (axes: os)"],
    [["--matrix", "os=", "--", "echo", "{os}"], "axis os has an empty value list"],
    [["--matrix", "os=a,,b", "--", "echo", "{os}"], "axis os has an empty value list or an empty value"],
    [["--matrix", "1os=a", "--", "echo"], 'axis "1os" is no placeholder name'],
  ];
  for (const [args, message] of cases) {
    const r = await j(["add", ...args]);
    expect([args.join(" "), r.code, r.env.errors[0].code]).toEqual([args.join(" "), 1, "INVALID_INPUT"]);
    expect(r.env.errors[0].message).toContain(message);
  }
  const file = join(q.dir, "m.ndjson");
  writeFileSync(
    file,
    `${JSON.stringify({ argv: ["true"] })}\n${JSON.stringify({ matrix: { os: [] }, argv: ["echo"] })}\n`,
  );
  const r = await j(["add", "--from", file]);
  expect(r.env.errors[0].message).toContain("--from line 2: matrix: axis os has an empty value list");
  expect((await j(["list"])).env.data.count).toBe(0);
});
