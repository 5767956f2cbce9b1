/**
 * Packaging (issue 5, issue 13 item 4): `npm pack` runs the `prepack` script,
 * which bundles src/ with `bun build` into dist/ (the user never runs a
 * build); the tarball installs into an empty folder with `bun add`, and
 * `bunx spoolctl --version`, `--help` and the quickstart (add → work --drain →
 * output) run from it, and what runs is the bundle: the tarball holds no
 * sources, and the bin that `bunx` resolves is dist/cli.js. Installing
 * resolves citty, consola and @clack/prompts through bun (its cache, or the
 * npm registry on a fresh machine).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
let dir: string;
let tarball: string;
let project: string;

function run(cmd: string[], cwd: string, env: Record<string, string> = {}) {
  const r = spawnSync(cmd[0]!, cmd.slice(1), {
    cwd,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", ...env },
    timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "spoolctl-pack-"));
  // Pack a copy of the checkout: prepack rebuilds dist/, and the checkout's own dist/ may be
  // what a `bun link`ed spoolctl of the person running the tests points at.
  const source = join(dir, "source");
  mkdirSync(source);
  const tracked = run(["git", "ls-files", "-z"], ROOT);
  const files = tracked.code === 0 ? tracked.stdout.split("\0").filter(Boolean) : [];
  for (const f of files.length > 0 ? files : ["package.json", "bun.lock", "README.md", "src"])
    cpSync(join(ROOT, f), join(source, f), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(source, "node_modules"));
  const packed = run(["npm", "pack", "--json", "--pack-destination", dir], source);
  expect(packed.code).toBe(0);
  // The prepack build prints its own lines first; npm's JSON is the array after them.
  const [info] = JSON.parse(packed.stdout.slice(packed.stdout.search(/^\[/m)));
  tarball = join(dir, info.filename);
  project = join(dir, "project");
  mkdirSync(project);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "spoolctl-pack-check", private: true }));
  const added = run(["bun", "add", tarball], project);
  if (added.code !== 0) throw new Error(`bun add failed:\n${added.stdout}\n${added.stderr}`);
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("the tarball holds the bundle built by prepack, the README and the bin, and no sources or tests", () => {
  expect(tarball.endsWith(`spoolctl-${pkg.version}.tgz`)).toBe(true);
  expect(pkg.bin.spoolctl).toBe("dist/cli.js");
  const files = run(["tar", "tzf", tarball], dir).stdout.split("\n").filter(Boolean);
  expect(files).toContain("package/package.json");
  expect(files).toContain("package/README.md");
  expect(files).toContain(`package/${pkg.bin.spoolctl}`);
  expect(files).toContain(`package/${pkg.bin.spoolctl}.jsc`); // the bytecode cache: no parsing at start-up
  expect(files.some((f) => f.startsWith("package/src/"))).toBe(false);
  expect(files.some((f) => f.startsWith("package/test/"))).toBe(false);
  expect(files.some((f) => f.startsWith("package/node_modules/"))).toBe(false);
  const bin = readFileSync(join(project, "node_modules", "spoolctl", pkg.bin.spoolctl), "utf8");
  expect(bin.startsWith("#!/usr/bin/env bun\n// @bun")).toBe(true); // bun build's output, not a source file
  // The command bunx runs is that bundle.
  expect(realpathSync(join(project, "node_modules", ".bin", "spoolctl"))).toBe(
    realpathSync(join(project, "node_modules", "spoolctl", pkg.bin.spoolctl)),
  );
});

test("bunx spoolctl --version, --help and the quickstart run from the installed tarball", () => {
  const db = join(dir, "queue", "queue.db");
  const env = { SPOOLCTL_DB: db };
  const version = run(["bunx", "spoolctl", "--version"], project, env);
  expect(version).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
  const help = run(["bunx", "spoolctl", "--help"], project, env);
  expect(help.code).toBe(0);
  expect(help.stdout).toContain("Usage: spoolctl <command> [flags]");
  expect(help.stdout).toContain("report");

  expect(run(["bunx", "spoolctl", "add", "--", "echo", "hello from spoolctl"], project, env)).toMatchObject({
    code: 0,
    stdout: "Added job 1\n",
  });
  const work = run(["bunx", "spoolctl", "work", "--drain"], project, env);
  expect(work.code).toBe(0);
  expect(work.stderr).toMatch(
    /^spoolctl: job 1 attempt 1 started in lane default: echo 'hello from spoolctl'\nspoolctl: job 1 attempt 1 succeeded \(\d+\.\ds\) -> done\nspoolctl: drained lane default: 1 executed: 1 succeeded, 0 failed and retried, 0 dead\n$/,
  );
  const out = run(["bunx", "spoolctl", "output", "1"], project, env);
  expect(out).toMatchObject({
    code: 0,
    stdout: "=== job 1 attempt 1 stdout ===\nhello from spoolctl\n=== job 1 attempt 1 stderr ===\n",
  });
  const report = run(["bunx", "spoolctl", "report", "--json"], project, env);
  expect(JSON.parse(report.stdout).data.totals).toMatchObject({ jobs: 1, passed: 1 });
}, 120_000);

test("bunx spoolctl ui serves its pages and its own script from the installed tarball", async () => {
  const db = join(dir, "queue", "queue.db");
  const proc = Bun.spawn(["bunx", "spoolctl", "ui", "--port", "0", "--json"], {
    cwd: project,
    env: { ...process.env, SPOOLCTL_DB: db },
    stdout: "pipe",
    stderr: "pipe",
  });
  try {
    const reader = proc.stdout.getReader();
    let first = "";
    while (!first.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`ui exited: ${first}${await new Response(proc.stderr).text()}`);
      first += new TextDecoder().decode(value);
    }
    const url = new URL(JSON.parse(first.slice(0, first.indexOf("\n"))).data.url);
    const auth = { authorization: `Bearer ${url.searchParams.get("token")}` };
    const base = `${url.protocol}//${url.host}`;
    const page = await fetch(`${base}/jobs`, { headers: auth });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("hello from spoolctl"); // the quickstart's job, from the bundle's pages
    const script = await fetch(`${base}/assets/app.js`, { headers: auth });
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toContain("javascript");
    expect((await fetch(`${base}/jobs`)).status).toBe(401);
  } finally {
    proc.kill("SIGINT");
    expect(await proc.exited).toBe(0);
  }
}, 60_000);
