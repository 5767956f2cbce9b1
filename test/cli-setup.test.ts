/**
 * Setup as pasted (README "Running it"): the bin is executable in git, global
 * flags may come before the verb, a two-word group's `--help` is its own, and
 * limits in messages read as durations.
 */
import { expect, test } from "bun:test";
import { TempQueue } from "./support/temp-queue.ts";

test("src/cli.ts, the package's bin, is committed executable (bun link leaves the checkout clean)", async () => {
  const proc = Bun.spawnSync(["git", "ls-files", "-s", "src/cli.ts"], { cwd: `${import.meta.dir}/..` });
  expect(proc.stdout.toString()).toStartWith("100755 ");
});

test("a global flag before the verb is the verb's own: spoolctl --db X status, --json first, two-word forms", async () => {
  const q = new TempQueue();
  try {
    const db = `${q.dir}/other.db`;
    expect((await q.run(["add", "--db", db, "--", "true"])).code).toBe(0);
    const r = await q.run(["--db", db, "--json", "status"]);
    expect(r.code).toBe(0);
    expect(r.json.data.counts.queued).toBe(1);
    const eq = await q.run(["--json", `--db=${db}`, "list"]);
    expect(eq.json.data.jobs.map((j: any) => j.id)).toEqual([1]);
    const dlq = await q.run(["--db", db, "dlq", "list", "--json"]);
    expect([dlq.code, dlq.json.data.count]).toEqual([0, 0]);
    // Between the two words of a group too.
    const set = await q.run(["config", "--json", "--db", db, "set", "max_retries", "5"]);
    expect([set.code, set.json.data.value]).toEqual([0, 5]);
    expect((await q.run(["dlq", `--db=${db}`, "list", "--json"])).json.data.count).toBe(0);
    // The queue of --db, not the one SPOOLCTL_DB names.
    expect((await q.json(["status"])).env.data.counts.queued).toBe(0);
  } finally {
    q.cleanup();
  }
});

test("config --help (and worker, dlq) shows the group's actions, not the top-level help", async () => {
  const q = new TempQueue();
  try {
    const r = await q.run(["config", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toStartWith("Usage: spoolctl config <action>");
    for (const action of ["show", "validate", "get", "set", "unset"])
      expect(r.stdout).toMatch(new RegExp(`^  ${action} +\\S`, "m"));
    expect(r.stdout).not.toContain("Commands:");
    expect((await q.run(["dlq", "-h"])).stdout).toContain("(= spoolctl list --state dead)");
    expect((await q.json(["worker", "--help"])).env.data.verb).toBe("worker");
  } finally {
    q.cleanup();
  }
});

test("limits in messages read as durations (3650d, 30d), never as raw seconds", async () => {
  const q = new TempQueue();
  try {
    const after = await q.run(["add", "--after", "99999d", "--", "true"]);
    expect(after.code).toBe(1);
    expect(after.stderr).toContain("from 0s to 3650d");
    expect(after.stderr).not.toContain("315360000");
    expect((await q.run(["add", "--timeout", "31d", "--", "true"])).stderr).toContain("from 0.001s to 30d");
    const at = await q.run(["add", "--at", "2999-01-01T00:00:00Z", "--", "true"]);
    expect([at.code, at.stderr.includes("(the --after bound, 3650d)"), at.stderr.includes("315360000")]).toEqual([
      1,
      true,
      false,
    ]);
  } finally {
    q.cleanup();
  }
});
