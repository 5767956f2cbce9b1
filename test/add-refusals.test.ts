/**
 * Input `add` refuses before anything is written (README "Adding jobs"):
 * words before `--` that are no flag's value, a command without `--`, a shell
 * command line given as the program, and arguments that are not UTF-8. Each
 * error names what was wrong, the queue stays empty, and under --json it is
 * an envelope.
 */
import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkArgs } from "../src/commands/args.ts";
import { splitArgv } from "../src/commands/argv.ts";
import { SpoolError } from "../src/contract/errors.ts";
import type { FlagsDef } from "../src/contract/flags.ts";
import { withoutSelection } from "./support/envelopes.ts";
import { CLI, useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue();

/** Runs `add ARGS` with --json first; asserts the refusal and that nothing was added; returns the error. */
async function refused(args: string[]): Promise<any> {
  const r = await q.run(["add", "--json", ...args]);
  expect(r.code).toBe(1);
  expect(r.json.ok).toBe(false);
  expect(await q.jobs()).toEqual([]);
  return withoutSelection(q, r.json.errors[0]);
}

test("add --timeout 5 min -- echo hi: the stray word is named, nothing is stored", async () => {
  const e = await refused(["--timeout", "5", "min", "--", "echo", "hi"]);
  expect(e.code).toBe("INVALID_INPUT");
  expect(e.message).toStartWith('add: "min" before -- is no flag\'s value');
  expect(e.detail).toEqual({ arguments: ["min"] });
  // The text form says the same on one line of stderr.
  const text = await q.run(["add", "--timeout", "5", "min", "--", "echo", "hi"]);
  expect(text.stderr).toMatch(/^spoolctl: error: INVALID_INPUT: add: "min" before -- is no flag's value.*\n$/);
});

test("add ls -la and add echo hi: the command goes after --, and the error shows how", async () => {
  const flags = await refused(["ls", "-la"]);
  expect(flags.message).toContain("write -- ls -la");
  expect(flags.remediation).toContain("spoolctl add [flags] -- CMD ARGS…");
  expect((await refused(["echo", "hi there"])).message).toContain("write -- echo 'hi there'");
  expect((await refused(["--queue", "b", "make", "--db", "x"])).message).toContain("write -- make --db x");
});

test("add -- 'a && b' (one argument holding a shell line) suggests -c; a program path with a space passes", async () => {
  const e = await refused(["--", "a && b"]);
  expect(e.message).toStartWith('"a && b" is a shell command line, not a program');
  expect(e.remediation).toContain("spoolctl add -c 'a && b'");
  expect((await refused(["--", "make test", "--verbose"])).remediation).toContain(
    "spoolctl add -c 'make test --verbose'",
  );
  const fromLine = await q.run(["add", "--json", "--from", "-"], { stdin: '{"argv": ["ls | wc -l"]}\n' });
  expect(fromLine.json.errors[0].message).toStartWith('--from line 1: "ls | wc -l" is a shell command line');
  mkdirSync(join(q.dir, "my tools"));
  writeFileSync(join(q.dir, "my tools", "run"), "#!/bin/sh\necho ran\n", { mode: 0o755 });
  expect(await q.addJob("--", "./my tools/run")).toBe(1);
});

test("arguments that are not valid UTF-8 are refused (never stored as U+FFFD); a real U+FFFD passes", async () => {
  // Bun.spawn cannot pass raw bytes: the shell does, as a user's would.
  const sh = (line: string) => Bun.spawnSync(["bash", "-c", line], { env: q.env(), cwd: q.dir });
  const bad = sh(`bun ${CLI} add --json -- printf '%s' $'\\xff\\xfe'`);
  expect(bad.exitCode).toBe(1);
  const env = JSON.parse(bad.stdout.toString());
  expect(env.errors[0]).toMatchObject({ code: "INVALID_INPUT", detail: { argument: 6, bytes: "\\xff\\xfe" } });
  expect(env.errors[0].message).toContain("is not valid UTF-8");
  expect(withoutSelection(q, env.errors[0].remediation)).toContain("spoolctl add -c");
  expect(await q.jobs()).toEqual([]);
  expect(sh(`bun ${CLI} add -- printf '%s' $'\\uFFFD'`).exitCode).toBe(0);
  expect((await q.job(1))!.argv).toEqual(["printf", "%s", "\uFFFD"]);
  // A --from file that is not UTF-8 is refused too.
  const from = await q.run(["add", "--json", "--from", "-"], {
    stdin: '{"argv": ["printf", "\xff"]}\n'.replace("\xff", "\u00ff"),
  });
  expect(from.code).toBe(0); // ÿ written as UTF-8 is text
  const raw = Bun.spawnSync(["bun", CLI, "add", "--json", "--from", "-"], {
    env: q.env(),
    cwd: q.dir,
    stdin: Buffer.from([0x7b, 0x22, 0x61, 0x72, 0x67, 0x76, 0x22, 0x3a, 0x5b, 0x22, 0xff, 0x22, 0x5d, 0x7d, 0x0a]),
  });
  expect(JSON.parse(raw.stdout.toString()).errors[0].message).toContain("is not valid UTF-8");
});

test("the rule lives in the definition: a positional marked afterDashDash takes only the words after --", () => {
  const defs = {
    n: { type: "string", description: "" },
    cmd: { type: "positional", variadic: true, afterDashDash: true, required: false, description: "" },
  } as const satisfies FlagsDef;
  const spec = { name: "x", description: "", examples: [], flags: defs };
  const parse = (argv: string[]) => checkArgs(spec, splitArgv(argv, defs), { spoken: "x", canAsk: false });
  expect(parse(["--n", "1", "--", "a", "-b"]).cmd).toEqual(["a", "-b"]);
  for (const argv of [["a"], ["a", "--n", "1"], ["--n", "1", "a", "--", "b"], ["a", "-b"]]) {
    expect(() => parse(argv)).toThrow(SpoolError);
  }
});
