/**
 * `spoolctl completion bash|zsh|fish` (issue 5): the scripts come from the
 * verbs' own flag definitions. The bash script is loaded into a real bash and
 * its completion function is asked; fish answers `complete -C` when installed;
 * zsh is driven in a pseudo-terminal (tmux) when installed.
 */
import { beforeAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VERBS } from "../src/commands/registry.ts";
import { useTempQueue } from "./support/temp-queue.ts";
import { HAVE_TMUX, killTmuxServer, shellQuote } from "./support/tmux.ts";
import { waitFor } from "./support/wait.ts";

const has = (cmd: string) => spawnSync("sh", ["-c", `command -v ${cmd}`]).status === 0;
const HAVE_FISH = has("fish");
const HAVE_ZSH = has("zsh");

const q = useTempQueue({ scope: "file" });
const scripts: Record<string, string> = {};

beforeAll(async () => {
  for (const shell of ["bash", "zsh", "fish"]) {
    const r = await q.run(["completion", shell]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    scripts[shell] = r.stdout;
    writeFileSync(join(q.dir, `spoolctl.${shell}`), r.stdout);
  }
  // A `spoolctl` on PATH for shells that only complete known commands.
  mkdirSync(join(q.dir, "bin"));
  writeFileSync(join(q.dir, "bin", "spoolctl"), "#!/bin/sh\n", { mode: 0o755 });
}, 60000);

/** Asks the bash completion function about a command line (the cursor at its end). */
function bashComplete(line: string): string[] {
  const words = line.split(" ");
  const script = `source ${shellQuote(join(q.dir, "spoolctl.bash"))}
COMP_WORDS=(${words.map(shellQuote).join(" ")})
COMP_CWORD=${words.length - 1}
COMP_LINE=${shellQuote(line)}
COMP_POINT=${line.length}
_spoolctl
printf '%s\\n' "\${COMPREPLY[@]}"`;
  const r = spawnSync("bash", ["--norc", "--noprofile", "-c", script], { encoding: "utf8" });
  expect(r.stderr).toBe("");
  return r.stdout.split("\n").filter(Boolean);
}

test("bash: verbs, each verb's flags, enumerated values and two-word groups", async () => {
  expect(spawnSync("bash", ["-n", join(q.dir, "spoolctl.bash")]).status).toBe(0);
  expect(bashComplete("spoolctl rep")).toEqual(["report"]);
  expect(bashComplete("spoolctl st")).toEqual(["status", "stop"]);
  expect(bashComplete("spoolctl report --ju")).toEqual(["--junit"]);
  expect(bashComplete("spoolctl report --m")).toEqual(["--markdown"]);
  expect(bashComplete("spoolctl status --w")).toEqual(["--watch"]);
  expect(bashComplete("spoolctl rer")).toEqual(["rerun"]);
  expect(bashComplete("spoolctl del")).toEqual(["delete"]);
  expect(bashComplete("spoolctl delete 3 --y")).toEqual(["--yes"]);
  expect(bashComplete("spoolctl output 3 --f")).toEqual(["--follow"]);
  expect(bashComplete("spoolctl output 3 --stream ")).toEqual(["stdout", "stderr", "both"]);
  expect(bashComplete("spoolctl list --state d")).toEqual(["done", "dead"]);
  expect(bashComplete("spoolctl completion ")).toEqual(["bash", "zsh", "fish"]);
  expect(bashComplete("spoolctl config s")).toEqual(["show", "set"]);
  expect(bashComplete("spoolctl worker ")).toEqual(["start", "stop"]);
  expect(bashComplete("spoolctl worker start --conc")).toEqual(["--concurrency"]); // the flags of `work`
  expect(bashComplete("spoolctl add -- ech")).toEqual([]); // the job's command: left to bash's default (files)

  // Every verb of the registry, with every one of its flags.
  const all = bashComplete("spoolctl ");
  for (const [name, entry] of Object.entries(VERBS)) {
    expect(all).toContain(name);
    const verb = await entry.load();
    const offered = bashComplete(`spoolctl ${name} -`);
    for (const [flag, def] of Object.entries(verb.flags)) {
      if (def.type === "positional") continue;
      expect(offered).toContain(`--${flag}`);
      if (def.alias) expect(offered).toContain(`-${def.alias}`);
    }
  }
}, 60000);

test("--json carries the script; a missing or unknown shell is refused", async () => {
  const r = await q.json(["completion", "fish"]);
  expect(r.code).toBe(0);
  expect(r.env.data).toEqual({ shell: "fish", script: scripts.fish });
  const missing = await q.json(["completion"]);
  expect(missing.code).toBe(1);
  expect(missing.env.errors[0].code).toBe("MISSING_REQUIRED");
  const bad = await q.json(["completion", "tcsh"]);
  expect(bad.code).toBe(1);
  expect(bad.env.errors[0].code).toBe("INVALID_INPUT");
  expect(bad.env.errors[0].message).toContain("bash, zsh, fish");
}, 60000);

test.skipIf(!HAVE_FISH)(
  "fish: complete -C answers from the script",
  () => {
    const ask = (line: string) => {
      const r = spawnSync(
        "fish",
        ["--no-config", "-c", `source ${shellQuote(join(q.dir, "spoolctl.fish"))}; complete -C${shellQuote(line)}`],
        {
          encoding: "utf8",
          env: { ...process.env, PATH: `${join(q.dir, "bin")}:${process.env.PATH}` },
        },
      );
      return r.stdout
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split("\t")[0]);
    };
    expect(ask("spoolctl rep")).toEqual(["report"]);
    expect(ask("spoolctl report --ju")).toEqual(["--junit"]);
    expect(ask("spoolctl completion ")).toEqual(["bash", "fish", "zsh"]);
    expect(ask("spoolctl config set --")).toContain("--db");
    expect(ask("spoolctl output 3 --stream ")).toEqual(["both", "stderr", "stdout"]);
  },
  60000,
);

test.skipIf(!HAVE_ZSH || !HAVE_TMUX)(
  "zsh: Tab in a real zsh completes verbs and flags",
  async () => {
    expect(spawnSync("zsh", ["-n", join(q.dir, "spoolctl.zsh")]).status).toBe(0);
    const zdot = join(q.dir, "zdot");
    mkdirSync(join(zdot, "functions"), { recursive: true });
    writeFileSync(join(zdot, "functions", "_spoolctl"), scripts.zsh!);
    writeFileSync(
      join(zdot, ".zshrc"),
      `fpath=(${shellQuote(join(zdot, "functions"))} $fpath)\nautoload -U compinit && compinit -u -d ${shellQuote(join(zdot, ".zcompdump"))}\nPS1='READY> '\n`,
    );
    const socket = `spoolctl-test-zsh-${process.pid}`;
    const tmux = (...args: string[]) =>
      spawnSync("tmux", ["-L", socket, "-f", "/dev/null", ...args], { encoding: "utf8" });
    const env = `env -i HOME=${shellQuote(q.dir)} TERM=xterm-256color ZDOTDIR=${shellQuote(zdot)} PATH=${shellQuote(`${join(q.dir, "bin")}:${process.env.PATH}`)}`;
    expect(tmux("new-session", "-d", "-s", "z", "-x", "160", "-y", "30", `${env} zsh -i`).status).toBe(0);
    try {
      const screen = () => tmux("capture-pane", "-p", "-t", "z").stdout;
      await waitFor("the zsh prompt", () => screen().includes("READY>"), 30000, 100);
      tmux("send-keys", "-t", "z", "spoolctl rep", "Tab");
      await waitFor("the verb completed", () => /READY> spoolctl report\s*$/m.test(screen()), 30000, 100); // (capture-pane drops the trailing space)
      tmux("send-keys", "-t", "z", "--", "--ju", "Tab");
      await waitFor("the flag completed", () => screen().includes("READY> spoolctl report --junit="), 30000, 100);
      tmux("send-keys", "-t", "z", "C-u", "spoolctl completion ", "Tab");
      await waitFor("the shells listed", () => /bash +fish +zsh/.test(screen()), 30000, 100);
    } finally {
      killTmuxServer(socket);
    }
  },
  60000,
);
