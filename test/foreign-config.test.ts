/**
 * Folders and files owned by others (issue 30 item 7; README "Folder
 * ownership"), with a real second user made by `useradd`: a config.json of
 * ours that others may write is refused (its rewritten db_path never obeyed);
 * a `.spoolctl/` is never made in a folder another user owns (mode 0777), who
 * could move it away; and after an `UNTRUSTED_FOLDER` warning, `NO_QUEUE` does
 * not say there is no `.spoolctl/` folder. Needs root (useradd, runuser).
 */
import { afterEach, beforeAll, beforeEach, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asUser, cliIn, RUNUSER } from "./support/folder-cli.ts";
import { ON_POSTGRES } from "./support/temp-queue.ts";

const OTHER = "spoolctl-other";
const asRoot = process.getuid?.() === 0 && RUNUSER !== null && Bun.which("useradd") !== null;

beforeAll(() => {
  if (!asRoot) return;
  if (Bun.spawnSync(["id", "-u", OTHER]).exitCode !== 0)
    Bun.spawnSync(["useradd", "--system", "--no-create-home", "--shell", "/bin/sh", OTHER]);
});

let top: string;
beforeEach(() => {
  top = mkdtempSync(join(tmpdir(), "spoolctl-foreign-"));
  chmodSync(top, 0o755);
});
afterEach(() => rmSync(top, { recursive: true, force: true }));

function asOther(script: string): void {
  asUser(OTHER, script);
}

function cli(args: string[], cwd: string) {
  return cliIn(top, args, cwd);
}

test.skipIf(!asRoot || ON_POSTGRES)(
  "a config.json of ours that others may write is refused, never obeyed",
  async () => {
    const project = join(top, "project");
    mkdirSync(join(project, ".spoolctl"), { recursive: true, mode: 0o755 });
    chmodSync(join(project, ".spoolctl"), 0o755);
    const config = join(project, ".spoolctl", "config.json");
    writeFileSync(config, JSON.stringify({ db_path: "mine.db" }));
    chmodSync(config, 0o666);
    // The other user rewrites it to name their queue.
    const theirs = join(top, "theirs.db");
    asOther(`printf '%s' '${JSON.stringify({ db_path: theirs })}' > '${config}'`);
    for (const args of [
      ["work", "--drain", "--json"],
      ["list", "--json"],
      ["add", "--json", "--", "true"],
    ]) {
      const r = await cli(args, project);
      expect([args.join(" "), r.code]).toEqual([args.join(" "), 3]);
      const error = JSON.parse(r.stdout).errors[0];
      expect(error.detail.unsafe).toBe("mode");
      expect(error.message).toContain(config);
      expect(error.remediation).toContain(`chmod go-w ${config}`);
    }
    expect(existsSync(theirs)).toBe(false);
    chmodSync(config, 0o644);
    expect((await cli(["list"], project)).code).toBe(0);
  },
);

test.skipIf(!asRoot || ON_POSTGRES)(
  "no .spoolctl/ is made in a 0777 folder another user owns; NO_QUEUE after UNTRUSTED_FOLDER says why",
  async () => {
    const shared = join(top, "shared");
    mkdirSync(shared);
    Bun.spawnSync(["chown", OTHER, shared]);
    asOther(`chmod 0777 '${shared}'`);
    const r = await cli(["add", "--json", "--", "true"], shared);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout).errors[0].detail.unsafe).toBe("folder_owner");
    expect(existsSync(join(shared, ".spoolctl", "queue.db"))).toBe(false);
    // The other user's own .spoolctl/ there: passed over, and NO_QUEUE does not deny it exists.
    asOther(`mkdir -m 755 '${shared}/.spoolctl'`);
    const sub = join(shared, "victim");
    mkdirSync(sub);
    const status = JSON.parse((await cli(["status", "--json"], sub)).stdout);
    const codes = status.warnings.map((w: { code: string }) => w.code);
    expect(codes).toContain("UNTRUSTED_FOLDER");
    const noQueue = status.warnings.find((w: { code: string }) => w.code === "NO_QUEUE");
    expect(noQueue.message).not.toContain("no .spoolctl/ folder here");
    expect(noQueue.message).toContain("passed over");
  },
);
