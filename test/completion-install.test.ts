/**
 * The README's completion install lines (section "Shell completion") work in
 * a fresh home folder (issue 21 item 5): each line of the block runs in bash
 * with HOME set to an empty folder and `spoolctl` on PATH; then a new
 * interactive bash has the completion, and zsh and fish (where installed)
 * find theirs.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { CLI } from "./support/temp-queue.ts";

const has = (cmd: string) => spawnSync("sh", ["-c", `command -v ${cmd}`]).status === 0;

let home: string;
let bin: string;
beforeAll(() => {
  const root = mkdtempSync(join(tmpdir(), "spoolctl-completion-home-"));
  home = join(root, "home");
  bin = join(root, "bin");
  mkdirSync(home);
  mkdirSync(bin);
  writeFileSync(join(bin, "spoolctl"), `#!/bin/sh\nexec ${process.execPath} ${CLI} "$@"\n`, { mode: 0o755 });
});
afterAll(() => rmSync(resolve(home, ".."), { recursive: true, force: true }));

/** The commands of the README's "Shell completion" code block, one per line, comments left out. */
function installLines(): string[] {
  const readme = readFileSync(resolve(import.meta.dir, "../README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Shell completion"));
  const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
  return block.split("\n").filter((l) => l.trim() !== "" && !l.trim().startsWith("#"));
}

function run(shell: string, args: string[]) {
  return spawnSync(shell, args, {
    env: { HOME: home, PATH: `${bin}:${process.env.PATH}`, TERM: "dumb" },
    cwd: home,
    encoding: "utf8",
    timeout: 60_000,
  });
}

test("each install line succeeds in an empty home folder; a new bash then completes spoolctl", () => {
  const lines = installLines();
  expect(lines.length).toBeGreaterThanOrEqual(4);
  for (const line of lines) {
    const r = run("bash", ["-c", line]);
    expect({ line, status: r.status, stderr: r.stderr }).toEqual({ line, status: 0, stderr: "" });
  }
  expect(readFileSync(join(home, ".zfunc/_spoolctl"), "utf8")).toStartWith("#compdef spoolctl");
  expect(existsSync(join(home, ".config/fish/completions/spoolctl.fish"))).toBe(true);
  // A new interactive bash reads ~/.bashrc and has the completion function.
  const bash = run("bash", ["-i", "-c", "complete -p spoolctl"]);
  expect(bash.stdout).toContain("-F _spoolctl spoolctl");
});

test.skipIf(!has("zsh"))("zsh: a new shell has _spoolctl as the completion of spoolctl", () => {
  for (const line of installLines()) run("bash", ["-c", line]);
  const zsh = run("zsh", ["-i", "-c", "print -r -- $_comps[spoolctl]"]);
  expect(zsh.stdout.trim()).toBe("_spoolctl");
});

test.skipIf(!has("fish"))("fish: a new shell completes spoolctl's verbs", () => {
  for (const line of installLines()) run("bash", ["-c", line]);
  const fish = run("fish", ["-c", "complete -C 'spoolctl sta'"]);
  expect(fish.stdout).toContain("status");
});
