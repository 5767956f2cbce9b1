/**
 * Start-up (issue 13 item 4): the simple verbs print without building Node's
 * stdio streams (`process.stdout`, `process.stderr`, `process.stdin`: even
 * reading `.isTTY` builds a stream and loads the stream stack, most of a
 * simple verb's start-up). A preload replaces the three properties with
 * getters that report any touch on fd 2 and throw, so a verb that still
 * touches one fails here. Timings live in bench/ (docs/benchmarks.md), not here.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { CLI } from "./support/temp-queue.ts";

const dir = mkdtempSync(join(tmpdir(), "spoolctl-startup-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PRELOAD = join(dir, "no-streams.ts");
writeFileSync(
  PRELOAD,
  `import { writeSync } from "node:fs";
for (const name of ["stdout", "stderr", "stdin"]) {
  Object.defineProperty(process, name, { configurable: true, get() { writeSync(2, "TOUCHED process." + name + "\\n"); throw new Error("stream touched"); } });
}
`,
);
const db = join(dir, "queue.db");

/** Runs the CLI with the preload, stdout and stderr piped (not terminals). */
function cli(args: string[]) {
  const r = Bun.spawnSync(["bun", "--preload", PRELOAD, CLI, ...args], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, NO_COLOR: "1" },
  });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

test("add, status, list, show and --version print without touching Node's stdio streams", () => {
  expect(cli(["--version"])).toMatchObject({ code: 0, stderr: "" });
  expect(cli(["add", "--db", db, "--", "true"])).toEqual({ code: 0, stdout: "Added job 1\n", stderr: "" });
  const added = cli(["add", "--db", db, "--json", "--", "echo", "two"]);
  expect(added).toMatchObject({ code: 0, stderr: "" });
  expect(JSON.parse(added.stdout)).toMatchObject({ ok: true, data: { job_id: 2 } });
  const status = cli(["status", "--db", db]);
  expect(status).toMatchObject({ code: 0, stderr: "" });
  expect(status.stdout).toContain("queued");
  const json = cli(["status", "--db", db, "--json"]);
  expect(json.stderr).toBe("");
  expect(JSON.parse(json.stdout).data.counts.queued).toBe(2);
  const list = cli(["list", "--db", db]);
  expect(list).toMatchObject({ code: 0, stderr: "" });
  expect(list.stdout).toContain("echo two");
  const show = cli(["show", "--db", db, "2"]);
  expect(show).toMatchObject({ code: 0, stderr: "" });
  expect(show.stdout).toContain("echo two");
});

test("a verb that writes through the streams still gets their error handlers (the preload sees the touch)", () => {
  // `work` logs through process.stderr: guarded before it runs, so the touch is expected here.
  const r = cli(["work", "--db", db, "--drain"]);
  expect(r.stderr).toContain("TOUCHED process.stdout");
});

/**
 * The modules a simple verb loads before it writes, by static import from the
 * entry and the verb's module (what a dynamic import loads later is not on
 * this path): transpiled `import` statements only, so a type-only import is no load.
 */
function staticGraph(entries: string[]): Map<string, string> {
  const transpiler = new Bun.Transpiler({ loader: "ts" });
  const seen = new Map<string, string>(); // module → the file that imported it first
  const queue: [string, string][] = entries.map((e) => [resolve(e), "(entry)"]);
  for (let next = queue.shift(); next; next = queue.shift()) {
    const [file, by] = next;
    if (seen.has(file)) continue;
    seen.set(file, by);
    if (!file.endsWith(".ts")) continue;
    const source = readFileSync(file, "utf8").replace(/^#!.*/, "");
    for (const imp of transpiler.scanImports(source)) {
      if (imp.kind !== "import-statement") continue;
      queue.push([imp.path.startsWith(".") ? resolve(dirname(file), imp.path) : imp.path, file]);
    }
  }
  return seen;
}

/**
 * Modules that cost milliseconds to evaluate and that add, status, list and show never need;
 * TypeBox builds the contract's schemas, which only `spoolctl schema` prints (the views import their types only).
 */
const HEAVY = [
  /^node:(tty|stream|readline|child_process|net|os)$/,
  /^@clack\//,
  /^(citty|consola|croner)$/,
  /^@sinclair\/typebox/,
];

test.each(["add", "status", "list", "show"])(
  "%s loads no stream, terminal, prompt or node:os module before it runs",
  (verb) => {
    const src = resolve(import.meta.dir, "../src");
    const graph = staticGraph([join(src, "cli.ts"), join(src, "commands", `${verb}.ts`)]);
    const heavy = [...graph].filter(([m]) => HEAVY.some((re) => re.test(m))).map(([m, by]) => `${m} <- ${by}`);
    expect(heavy).toEqual([]);
  },
);
