/**
 * Messages that stay readable and true (docs/contract.md "Error objects and warnings"): a huge
 * bad value is echoed only in part; `schedule list` keeps its table with a
 * 10 KB cron; a refused PostgreSQL connection is `UNREACHABLE` (exit 3), not
 * `INTERNAL`; a folder the user may not write says so; `delete` of a chain of
 * 99,999 prints a count, not every id; `"needs": []` in a `--from` line is no
 * needs. On both stores where the store matters.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RUNUSER } from "./support/folder-cli.ts";
import { CLI, ON_POSTGRES, useTempQueue } from "./support/temp-queue.ts";

setDefaultTimeout(600_000);

const q = useTempQueue();

test("a 100 KB bad value is echoed in part: every error stays short, in text and in JSON", async () => {
  const huge = "x".repeat(100_000);
  const cases = [
    ["add", "--queue", huge, "--", "true"],
    ["list", "--queue", huge],
    ["add", "--priority", huge, "--", "true"],
    ["show", huge],
    ["wait", "--tag", `k=${huge}`],
    [huge],
    ["list", `--${huge}`],
  ];
  for (const args of cases) {
    const r = await q.run(args);
    expect(r.code).toBe(1);
    expect(r.stderr.length).toBeLessThan(1200);
    expect(r.stderr).toMatch(/x{150,200}…\(\+\d+ chars\)/);
    const at = args.indexOf("--");
    const j = await q.json(at === -1 ? args : args.slice(0, at)); // --json before any bare --
    expect(JSON.stringify(j.env.errors).length).toBeLessThan(2500);
  }
});

test("schedule list keeps its table when a cron is 10 KB; schedule list NAME --json has it whole", async () => {
  const minutes = Array.from({ length: 3700 }, (_, i) => i % 60).join(",");
  const cron = `${minutes} 3 * * *`;
  expect(cron.length).toBeGreaterThan(10_000);
  expect((await q.run(["schedule", "add", "big", "--cron", cron, "--", "true"])).code).toBe(0);
  expect((await q.run(["schedule", "add", "small", "--cron", "0 3 * * *", "--", "true"])).code).toBe(0);
  const lines = (await q.run(["schedule", "list"])).stdout.trimEnd().split("\n");
  expect(lines).toHaveLength(3);
  for (const l of lines) expect(l.length).toBeLessThan(200);
  // Still a table: the NEXT SLOT column starts at the same place on every row.
  const at = lines[0]!.indexOf("NEXT SLOT");
  expect(lines[1]!.slice(at)).toMatch(/^\d{4}-/);
  expect(lines[2]!.slice(at)).toMatch(/^\d{4}-/);
  const whole = await q.json(["schedule", "list", "big"]);
  expect(whole.env.data.schedules[0].rule).toContain(minutes);
});

test("a refused connection is UNREACHABLE (exit 3 as before, retryable), with what to check", async () => {
  const r = await q.json(["status", "--db", "postgres://nobody@127.0.0.1:1/queue"]);
  expect(r.code).toBe(3);
  expect(r.env.errors[0]).toMatchObject({ code: "UNREACHABLE", exit_code: 3 });
  expect(r.env.errors[0].remediation).toContain("reachable from this host");
});

test.skipIf(process.getuid?.() !== 0 || RUNUSER === null)(
  "a folder the user may not write says so, with the fix (the default .spoolctl/ and --db alike)",
  async () => {
    const dir = join(q.dir, "locked");
    mkdirSync(join(dir, "sub"), { recursive: true });
    chmodSync(q.dir, 0o755);
    chmodSync(dir, 0o755);
    chmodSync(join(dir, "sub"), 0o755);
    const asNobody = (args: string[]) =>
      Bun.spawnSync([RUNUSER!, "-u", "nobody", "--", "env", `HOME=${dir}`, "SPOOLCTL_DB=", "bun", CLI, ...args], {
        cwd: join(dir, "sub"),
        stderr: "pipe",
        stdout: "pipe",
      });
    for (const [args, path] of [
      [["add", "--", "true"], join(dir, "sub", ".spoolctl", "queue.db")],
      [["add", "--db", join(dir, "sub", "q.db"), "--", "true"], join(dir, "sub", "q.db")],
    ] as const) {
      const r = asNobody([...args]);
      const stderr = r.stderr.toString();
      expect(r.exitCode).toBe(3);
      expect(stderr).toContain(
        `cannot create the queue ${path}: permission denied: the folder ${join(dir, "sub")} is not writable for this user`,
      );
      expect(stderr).toContain("pass --db with a path you may write");
      expect(stderr).not.toContain("check that the file is a spoolctl queue");
    }
  },
);

test("delete of a chain prints a count and the first ids, not every id; --json has them all", async () => {
  // The chain of 99,999 on SQLite; on PostgreSQL (a round trip per link) a fan of 5,000 shows the same rule.
  const n = ON_POSTGRES ? 5000 : 99_999;
  const lines = [JSON.stringify({ ref: "r0", command: "true", after: "1h" })];
  for (let i = 1; i < n; i++)
    lines.push(JSON.stringify({ ref: `r${i}`, needs: [ON_POSTGRES ? "r0" : `r${i - 1}`], command: "true" }));
  const from = join(q.dir, "chain.ndjson");
  writeFileSync(from, `${lines.join("\n")}\n`);
  expect((await q.run(["add", "--from", from, "--json"])).code).toBe(0);
  const r = await q.run(["delete", "1", "--yes"]);
  expect(r.code).toBe(0);
  expect(r.stdout).toBe(
    `Deleted job 1 with 0 attempts and 1 event\nClosed ${n - 1} jobs that needed it: 2, 3, 4, 5, 6, 7, 8, 9 … (+${n - 9} more)\n`,
  );
  expect((await q.jobs()).filter((j) => j.state === "canceled")).toHaveLength(n - 1);
});

test('"needs": [] in a --from line is no needs', async () => {
  const from = join(q.dir, "jobs.ndjson");
  writeFileSync(from, `${JSON.stringify({ command: "true", needs: [] })}\n`);
  const r = await q.json(["add", "--from", from]);
  expect(r.code).toBe(0);
  const job = (await q.jobs())[0]!;
  expect(job.needs_left).toBe(0);
  // Also over a command line's --needs: the line says it has none.
  const other = await q.addJob("--", "true");
  const over = await q.json(["add", "--from", from, "--needs", String(other)]);
  expect(over.code).toBe(0);
  expect((await q.jobs()).every((j) => j.needs_left === 0)).toBe(true);
});
