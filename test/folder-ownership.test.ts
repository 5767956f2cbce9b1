/**
 * Folder ownership (docs/architecture.md "Folder ownership"): a queue in a
 * folder other users can write is refused when it is not the caller's, and
 * attempt files are never written through a link. The attacks are made by a
 * real second user (`runuser -u nobody`), so the file cases need root.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import {
  chmodSync,
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAttemptFile } from "../src/store/ownership.ts";
import { CLI } from "./support/temp-queue.ts";

const runuser = Bun.which("runuser");
const asRoot = process.getuid?.() === 0 && runuser !== null;

let top: string;
beforeEach(() => {
  top = mkdtempSync(join(tmpdir(), "spoolctl-owner-"));
  chmodSync(top, 0o755); // the second user must reach the shared folder inside
});
afterEach(() => rmSync(top, { recursive: true, force: true }));

/** Runs the CLI as this user (cwd `top`), with no inherited queue selection. */
async function cli(
  args: string[],
  user: "self" | "nobody" = "self",
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), NO_COLOR: "1", HOME: top };
  delete env.SPOOLCTL_DB;
  const argv = user === "nobody" ? [runuser!, "-u", "nobody", "--", "bun", CLI, ...args] : ["bun", CLI, ...args];
  const proc = Bun.spawn(argv, { env, cwd: top, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/** A folder every user may write, like /tmp (sticky) or a shared project folder. */
function sharedFolder(mode: number): string {
  const dir = join(top, "shared");
  mkdirSync(dir);
  chmodSync(dir, mode);
  return dir;
}

describe("a queue other users can write is refused", () => {
  test.skipIf(!asRoot)(
    "another user's spool with a link planted at the attempt's stdout: refused, the linked file untouched",
    async () => {
      const shared = sharedFolder(0o1777);
      const victim = join(top, "victim");
      writeFileSync(victim, "precious\n");
      const db = join(shared, "q.db");
      // nobody prepares q.spool/output/1.1.stdout -> victim before the owner ever uses the queue.
      const plant = await cli(["--version"], "nobody"); // nobody can run the CLI at all
      expect(plant.code).toBe(0);
      const mk = Bun.spawnSync([
        runuser!,
        "-u",
        "nobody",
        "--",
        "sh",
        "-c",
        `mkdir -p ${shared}/q.spool/output && ln -s ${victim} ${shared}/q.spool/output/1.1.stdout`,
      ]);
      expect(mk.exitCode).toBe(0);
      const add = await cli(["add", "--db", db, "--json", "--", "echo", "overwritten"]);
      expect(add.code).toBe(3);
      const error = JSON.parse(add.stdout).errors[0];
      expect(error.code).toBe("INTERNAL");
      expect(error.message).toContain(`spool folder ${shared}/q.spool`);
      expect(error.message).toContain("owned by uid 65534");
      expect(error.detail.unsafe).toBe("owner");
      expect(error.remediation).toContain("Folder ownership");
      const work = await cli(["work", "--db", db, "--drain"]);
      expect(work.code).toBe(3);
      expect(readFileSync(victim, "utf8")).toBe("precious\n");
    },
  );

  test.skipIf(!asRoot)("another user's 0666 database is not adopted: its jobs never run as this user", async () => {
    const shared = sharedFolder(0o1777);
    const db = join(shared, "q.db");
    const marker = join(top, "ran-as-root");
    // nobody makes a queue there, with a job, and opens it to everyone.
    const made = await cli(["add", "--db", db, "--", "touch", marker], "nobody");
    expect([made.code, made.stderr]).toEqual([0, ""]);
    chmodSync(db, 0o666);
    expect(statSync(db).uid).toBe(65534);
    for (const verb of [
      ["work", "--db", db, "--drain"],
      ["add", "--db", db, "--", "true"],
    ]) {
      const r = await cli([...verb.slice(0, 3), "--json", ...verb.slice(3)]);
      expect([verb[0], r.code]).toEqual([verb[0], 3]);
      const error = JSON.parse(r.stdout).errors[0];
      expect(error.message).toContain(`database ${db}`);
      expect(error.message).toContain("owned by uid 65534");
    }
    expect(existsSync(marker)).toBe(false);
    // Reading another user's queue stays allowed.
    const status = await cli(["status", "--db", db, "--json"]);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout).data.counts.queued).toBe(1);
  });

  test("a database of ours that group or others may write is refused, naming chmod", async () => {
    const db = join(top, "q.db");
    expect((await cli(["add", "--db", db, "--", "true"])).code).toBe(0);
    chmodSync(db, 0o666);
    const r = await cli(["work", "--db", db, "--drain", "--json"]);
    expect(r.code).toBe(3);
    const error = JSON.parse(r.stdout).errors[0];
    expect(error.message).toContain("mode 0666 lets group or others write it");
    expect(error.remediation).toContain(`chmod go-w ${db}`);
    chmodSync(db, 0o600);
    expect((await cli(["work", "--db", db, "--drain"])).code).toBe(0);
  });

  test("a spool folder of ours that others may write is refused", async () => {
    const db = join(top, "q.db");
    expect((await cli(["add", "--db", db, "--", "true"])).code).toBe(0);
    mkdirSync(join(top, "q.spool"));
    chmodSync(join(top, "q.spool"), 0o777);
    const r = await cli(["work", "--db", db, "--drain", "--json"]);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout).errors[0].message).toContain("spool folder");
  });

  test("a queue in a folder every user may write, without the sticky bit, is refused", async () => {
    const shared = sharedFolder(0o777);
    const r = await cli(["add", "--db", join(shared, "q.db"), "--json", "--", "true"]);
    expect(r.code).toBe(3);
    const error = JSON.parse(r.stdout).errors[0];
    expect(error.detail.unsafe).toBe("folder");
    expect(error.remediation).toContain(`chmod +t ${shared}`);
    expect(existsSync(join(shared, "q.db"))).toBe(false);
  });

  test("a sticky world-writable folder (like /tmp) is fine for a queue of one's own", async () => {
    const shared = sharedFolder(0o1777);
    const db = join(shared, "q.db");
    expect((await cli(["add", "--db", db, "--", "echo", "hi"])).code).toBe(0);
    expect((await cli(["work", "--db", db, "--drain"])).code).toBe(0);
    expect((await cli(["output", "1", "--db", db, "--stream", "stdout", "--raw"])).stdout).toBe("hi\n");
  });
});

describe("a queue another user's folder shuts us out of", () => {
  test.skipIf(!asRoot)(
    "root's queue in its 0700 .spoolctl: for nobody, readers and writers say permission denied, naming the folder; never NO_QUEUE or an empty queue",
    async () => {
      expect((await cli(["add", "--", "true"])).code).toBe(0);
      chmodSync(join(top, ".spoolctl"), 0o700);
      const folder = join(top, ".spoolctl");
      for (const args of [
        ["status", "--json"],
        ["list", "--json"],
        ["show", "--json", "1"],
        ["add", "--json", "--", "true"],
      ]) {
        const r = await cli(args, "nobody");
        const env = JSON.parse(r.stdout);
        expect([args[0], r.code, env.ok, env.warnings]).toEqual([args[0], 3, false, []]);
        expect(env.errors[0]).toMatchObject({ code: "INTERNAL", detail: { folder } });
        expect(env.errors[0].message).toContain(
          `permission denied: this user (uid 65534) may not enter its folder ${folder} (owner uid 0, mode 0700)`,
        );
      }
      const text = await cli(["status"], "nobody");
      expect(text.stderr).toStartWith(
        `spoolctl: error: INTERNAL: cannot read the queue ${join(folder, "queue.db")}: permission denied`,
      );
      expect(text.stderr).not.toContain("NO_QUEUE");
      const doctor = JSON.parse((await cli(["doctor", "--json"], "nobody")).stdout);
      expect(doctor.data.checks.find((c: { id: string }) => c.id === "db_opens")).toMatchObject({
        status: "fail",
        message: expect.stringContaining("permission denied"),
      });
      // The owner still reads it.
      expect(JSON.parse((await cli(["status", "--json"])).stdout).data.counts.queued).toBe(1);
    },
  );
});

describe("attempt files are created fresh, never through a link", () => {
  test("a symbolic link at the attempt's file is refused and its target left alone", () => {
    const victim = join(top, "victim");
    writeFileSync(victim, "precious\n");
    const dir = join(top, "spool", "output", "1", "1");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    symlinkSync(victim, join(dir, "stdout"));
    expect(() => createAttemptFile(join(dir, "stdout"))).toThrow(/symbolic link/);
    expect(readFileSync(victim, "utf8")).toBe("precious\n");
    expect(lstatSync(join(dir, "stdout")).isSymbolicLink()).toBe(true);
  });

  test("an attempt folder that is a link is refused", () => {
    const elsewhere = join(top, "elsewhere");
    mkdirSync(elsewhere, { mode: 0o700 });
    mkdirSync(join(top, "spool", "output", "1"), { recursive: true, mode: 0o700 });
    symlinkSync(elsewhere, join(top, "spool", "output", "1", "1"));
    expect(() => createAttemptFile(join(top, "spool", "output", "1", "1", "stdout"))).toThrow(/not a folder/);
    expect(existsSync(join(elsewhere, "stdout"))).toBe(false);
  });

  test("a stale regular file of ours is replaced by a fresh 0600 file", () => {
    const dir = join(top, "spool", "output", "2", "1");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, "stdout"), "old output\n", { mode: 0o644 });
    const fd = createAttemptFile(join(dir, "stdout"));
    closeSync(fd);
    expect(readFileSync(join(dir, "stdout"), "utf8")).toBe("");
    expect(statSync(join(dir, "stdout")).mode & 0o777).toBe(0o600);
  });
});
