/**
 * Clear messages when a SQLite queue cannot be opened for a reason of the
 * place (docs/architecture.md "The driver contract"): a folder given as --db
 * (SQLite only says "disk I/O error" or "unable to open database file"), and a
 * queue on a read-only file system (a bind mount remounted read-only; needs
 * root), which is not a permission problem.
 */
import { expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { stopProcessesOf } from "./support/processes.ts";
import { CLI, ON_POSTGRES, useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue({ teardown: stopProcessesOf });

test.skipIf(ON_POSTGRES)(
  "a folder given as --db: INVALID_INPUT naming the folder and a file to use, for writers and readers",
  async () => {
    const dir = join(q.dir, "a-folder");
    mkdirSync(dir);
    for (const verb of [["add"], ["status"], ["list"]]) {
      const args = verb[0] === "add" ? ["add", "--db", dir, "--json", "--", "true"] : [...verb, "--db", dir, "--json"];
      const r = await q.run(args);
      expect(r.code).toBe(1);
      const error = r.json.errors[0];
      expect(error.code).toBe("INVALID_INPUT");
      expect(error.message).toBe(`the queue path ${dir} is a folder, not a database file`);
      expect(error.remediation).toContain(`--db ${join(dir, "queue.db")}`);
    }
    const text = await q.run(["add", "--db", dir, "--", "true"]);
    expect(text.stderr).not.toMatch(/disk I\/O error|unable to open/);
  },
);

test.skipIf(ON_POSTGRES)(
  "a queue on a read-only file system: said so (not 'permission denied'), for add, status, a new file and a worker",
  async () => {
    const ro = join(q.dir, "ro");
    mkdirSync(ro);
    const db = join(ro, "q.db");
    expect((await q.run(["add", "--db", db, "--", "true"])).code).toBe(0);
    if (Bun.spawnSync(["mount", "-o", "bind,ro", ro, ro], { stderr: "ignore" }).exitCode !== 0)
      return console.warn("skipped: cannot bind-mount read-only here");
    try {
      for (const [args, what] of [
        [["add", "--db", db, "--json", "--", "true"], "cannot write to"],
        [["add", "--db", join(ro, "new.db"), "--json", "--", "true"], "cannot write to"],
        [["status", "--db", db, "--json"], "cannot read"],
        [["work", "--once", "--db", db, "--json"], "cannot write to"],
      ] as const) {
        const r = await q.run([...args]);
        expect(r.code).toBe(3);
        const error = r.json.errors[0];
        expect(error.message).toContain(what);
        expect(error.message).toContain("read-only file system");
        expect(error.message).not.toContain("permission denied");
        expect(error.detail.read_only_file_system).toBe(true);
      }
    } finally {
      Bun.spawnSync(["umount", ro]);
    }
  },
);

test("a worker that cannot reach its PostgreSQL database says for how long it retries and what to check, with the queue selection", async () => {
  const url = "postgres://nobody@127.0.0.1:1/x";
  const proc = Bun.spawn(["bun", CLI, "work", "--db", url], {
    stdout: "ignore",
    stderr: "pipe",
    env: { ...process.env, NO_COLOR: "1" },
  });
  const reader = proc.stderr.getReader();
  let text = "";
  try {
    const deadline = performance.now() + 20_000;
    while (!text.includes("\n") && performance.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
  } finally {
    proc.kill("SIGKILL");
    await proc.exited;
  }
  const first = text.split("\n")[0]!;
  expect(first).toStartWith(`spoolctl: cannot reach the queue's database at ${url}`);
  expect(first).toContain("; will retry for up to 30s: check that the PostgreSQL server is running");
  expect(first).toContain(`(spoolctl doctor --db ${url})`);
});
