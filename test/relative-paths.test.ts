/**
 * Relative paths of a job added without --cwd (README "Adding jobs"): the job
 * runs in the worker's folder, so `add` warns (RELATIVE_PATH, in the envelope
 * and on stderr) when the program is `./x` or `dir/x`, or an argument names a
 * file of the current folder, and gives the exact command with `--cwd .`;
 * following it makes the job run. `show` says where a job runs.
 */
import { beforeEach, expect, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadContract } from "./support/contract.ts";
import { drain } from "./support/jobs.ts";
import { useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue();
let deep: string;
beforeEach(() => {
  deep = join(q.dir, "src", "deep");
  mkdirSync(deep, { recursive: true });
  writeFileSync(join(deep, "run.sh"), "#!/bin/sh\necho ran-from-deep\n");
  chmodSync(join(deep, "run.sh"), 0o755);
  writeFileSync(join(deep, "local.txt"), "local contents\n");
});

/** `add --json ARGS` in `cwd` (--json before the `--` that starts the command). */
async function add(cwd: string, ...args: string[]): Promise<{ code: number; env: any }> {
  const r = await q.run(["add", "--json", ...args], { cwd });
  return { code: r.code, env: r.json };
}

test("add -- ./run.sh from a subfolder warns that the worker's folder resolves it, with the exact command; that command runs the job", async () => {
  const contract = await loadContract(q);
  const r = await add(deep, "--", "./run.sh");
  expect(r.code).toBe(0);
  expect(contract.envelope(r.env)).toEqual([]);
  expect(r.env.warnings).toHaveLength(1);
  expect(r.env.warnings[0].code).toBe("RELATIVE_PATH");
  const hint = `spoolctl add --db ${q.dbWord} --cwd . -- ./run.sh`;
  expect(r.env.warnings[0].message).toContain(`"./run.sh" will be resolved in the worker's folder, not here (${deep})`);
  expect(r.env.warnings[0].message).toEndWith(`To run it from this folder: ${hint}`);

  const text = await q.run(["add", "--max-retries", "0", "--", "./run.sh"], { cwd: deep });
  expect(text.code).toBe(0);
  expect(text.stderr).toContain("RELATIVE_PATH");
  expect(text.stderr).toContain(`spoolctl add --db ${q.dbWord} --cwd . --max-retries 0 -- ./run.sh`);
  const shown = await q.run(["show", String(r.env.data.job_id)]);
  expect(shown.stdout).toMatch(/^runs in +the worker's folder \(no --cwd\)$/m);

  // The suggested command, run where the warning was given: no warning, and the job runs.
  const fixed = await add(deep, "--cwd", ".", "--", "./run.sh");
  expect(fixed.env.warnings).toEqual([]);
  const id = fixed.env.data.job_id as number;
  expect((await q.run(["show", String(id)])).stdout).toMatch(
    new RegExp(`^runs in +${deep.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"),
  );
  // The two added without --cwd fail where the worker runs (the queue folder): program not found.
  await drain(q);
  expect((await q.job(id))!.state).toBe("done");
  const dead = (await q.job(r.env.data.job_id))!;
  expect(dead.state).toBe("dead");
  // The worker ran in the queue's folder: its error names that folder.
  expect(dead.last_error).toBe(`program not found: ./run.sh (in the worker's folder ${q.dir}: the job has no --cwd)`);
});

test("an argument naming a file of this folder warns too; bare programs, absolute paths, flags and --cwd do not", async () => {
  const cat = await add(deep, "--", "cat", "local.txt");
  expect(cat.env.warnings.map((w: { code: string }) => w.code)).toEqual(["RELATIVE_PATH"]);
  expect(cat.env.warnings[0].message).toContain('"local.txt"');
  expect(cat.env.warnings[0].message).toContain(`spoolctl add --db ${q.dbWord} --cwd . -- cat local.txt`);
  for (const argv of [
    ["echo", "local"],
    ["cat", join(deep, "local.txt")],
    ["ls", "-la"],
    ["make", "deep"],
    ["env", "A=local.txt"],
  ]) {
    const r = await add(join(q.dir, "src"), "--", ...argv);
    expect(r.env.warnings).toEqual([]);
  }
  const withCwd = await add(deep, "--cwd", deep, "--", "cat", "local.txt");
  expect(withCwd.env.warnings).toEqual([]);
});

test("--from lines without cwd warn per line, naming the line", async () => {
  const r = await q.json(["add", "--from", "-"], {
    cwd: deep,
    stdin: [
      JSON.stringify({ argv: ["echo", "hi"] }),
      JSON.stringify({ argv: ["./run.sh"] }),
      JSON.stringify({ argv: ["./run.sh"], cwd: "." }),
    ].join("\n"),
  });
  expect(r.code).toBe(0);
  expect(r.env.warnings).toHaveLength(1);
  expect(r.env.warnings[0]).toMatchObject({ code: "RELATIVE_PATH" });
  expect(r.env.warnings[0].message).toStartWith('--from line 2: the relative path "./run.sh"');
  expect(r.env.warnings[0].message).toContain('add "cwd": "." to the line');
});
