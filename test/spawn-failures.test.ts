/**
 * The spawn-failure policy (README "Running jobs", docs/architecture.md
 * "Execution"): a command that can never start (missing program, not
 * executable, not an executable format, argv and environment too large) is
 * dead after its first attempt whatever its retry budget; where it runs (a
 * missing cwd, one that cannot be entered) is retried by budget. Messages name
 * what is wrong: the directory, the sizes.
 */
import { expect, test } from "bun:test";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI, useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue();

/** Adds a job with a budget of 3 retries, runs one worker until the queue is settled, returns the job and its attempts. */
async function runOnce(...args: string[]) {
  const id = await q.addJob("--max-retries", "3", ...args);
  const r = await q.run(["work", "--drain"]);
  expect(r.code).toBe(0);
  return {
    id,
    job: (await q.job(id))!,
    attempts: await q.attempts(id),
    stderr: r.stderr,
    events: await q.eventNames(id),
  };
}

test("a missing program is dead after one attempt, not after three back-offs", async () => {
  const r = await runOnce("--", "spoolctl-no-such-program-xyz");
  expect([r.job.state, r.job.attempts, r.attempts.length]).toEqual(["dead", 1, 1]);
  expect(r.attempts[0]!.error).toBe("program not found: spoolctl-no-such-program-xyz");
  expect(r.events).toEqual(["added", "claimed", "failed", "dead"]);
  expect(r.stderr).toMatch(/could not start: program not found: spoolctl-no-such-program-xyz \(\d+\.\ds\) -> dead/);
});

test("not executable (EACCES), not an executable format (ENOEXEC), a missing #! interpreter: dead at once, each said so", async () => {
  const plain = join(q.dir, "plain.sh");
  writeFileSync(plain, "echo hi\n", { mode: 0o644 });
  const garbage = join(q.dir, "garbage");
  writeFileSync(garbage, Buffer.from([0, 1, 2, 3, 4, 5]), { mode: 0o755 });
  const interp = join(q.dir, "interp.sh");
  writeFileSync(interp, "#!/no/such/interpreter\n", { mode: 0o755 });
  const eacces = await runOnce("--", plain);
  expect([eacces.job.state, eacces.attempts.length]).toEqual(["dead", 1]);
  expect(eacces.attempts[0]!.error).toBe(`cannot start ${plain}: permission denied (not an executable file)`);
  const enoexec = await runOnce("--", garbage);
  expect([enoexec.job.state, enoexec.attempts.length]).toEqual(["dead", 1]);
  expect(enoexec.attempts[0]!.error).toContain("not an executable format");
  const missing = await runOnce("--", interp);
  expect([missing.job.state, missing.attempts.length]).toEqual(["dead", 1]);
  expect(missing.attempts[0]!.error).toBe(`cannot start ${interp}: the interpreter on its #! line was not found`);
});

test("E2BIG is dead at once and gives the argv and environment sizes", async () => {
  const huge = "x".repeat(200_000); // over Linux's 128 KiB per argument, under add's 256 KiB command limit
  const added = await q.run(["add", "--json", "--max-retries", "3", "--from", "-"], {
    stdin: `${JSON.stringify({ argv: ["/bin/echo", huge] })}\n`,
  });
  const id = added.json.data.jobs[0].job_id as number;
  await q.run(["work", "--drain"]);
  const a = (await q.attempts(id))[0]!;
  expect((await q.job(id))!.state).toBe("dead");
  expect(a.error).toMatch(
    /^cannot start \/bin\/echo: argument list too long \(argv 200011 bytes in 2 arguments, the longest 200000; environment \d+ bytes in \d+ variables;/,
  );
  // list shows one readable row, not 200 KB.
  const list = await q.run(["list"]);
  const row = list.stdout.split("\n").find((l) => l.startsWith(`${id} `))!;
  expect(row.length).toBeLessThan(600);
  expect(row).toMatch(/… \(\+\d+ chars\)/);
  expect((await q.json(["show", String(id)])).env.data.job.argv[1]).toBe(huge); // the data keeps it whole
});

test("a missing cwd is retried by budget (it may be made yet)", async () => {
  const gone = join(q.dir, "later");
  await q.setConfig("backoff-cap", "0");
  const r = await runOnce("--cwd", gone, "--", "true");
  expect([r.job.state, r.attempts.length]).toEqual(["dead", 4]);
  expect(r.attempts.every((a) => a.error === `cwd ${gone} does not exist`)).toBe(true);
});

test("add --cwd FILE is refused and adds nothing", async () => {
  const file = join(q.dir, "a-file");
  writeFileSync(file, "x");
  const r = await q.run(["add", "--json", "--cwd", file, "--", "true"]);
  expect(r.code).toBe(1);
  expect(r.json.errors[0]).toMatchObject({
    code: "INVALID_INPUT",
    message: `invalid value for --cwd: ${JSON.stringify(file)} (expected a directory (this is a file))`,
  });
  expect(await q.jobs()).toEqual([]);
  // The same rule for --from lines.
  const from = await q.json(["add", "--from", "-"], { stdin: `${JSON.stringify({ argv: ["true"], cwd: file })}\n` });
  expect([from.code, from.env.errors[0].message]).toEqual([1, expect.stringContaining("line 1: cwd")]);
});

test("a cwd that exists but cannot be entered names the directory, not the program (a worker that is not root)", async () => {
  // Root enters any folder: the worker runs as nobody, in a queue of its own.
  const dir = mkdtempSync(join(tmpdir(), "spoolctl-nobody-"));
  try {
    chmodSync(dir, 0o755);
    const locked = join(dir, "locked");
    mkdirSync(locked);
    chmodSync(locked, 0o000);
    chownSync(dir, 65534, 65534);
    const asNobody = (args: string[]) =>
      Bun.spawn(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "bun", CLI, ...args], {
        cwd: dir,
        env: { PATH: process.env.PATH!, HOME: dir, NO_COLOR: "1" },
        stdout: "pipe",
        stderr: "pipe",
      });
    const db = join(dir, "q.db");
    expect(
      await asNobody(["add", "--db", db, "--max-retries", "0", "--cwd", locked, "--", "/bin/echo", "hi"]).exited,
    ).toBe(0);
    const work = asNobody(["work", "--db", db, "--drain"]);
    const [stderr] = await Promise.all([new Response(work.stderr).text(), work.exited]);
    expect(stderr).toContain(`could not start: cannot enter cwd ${locked}: permission denied`);
    expect(stderr).not.toContain("posix_spawn");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("config set retry-spawn-failures on: a command that cannot start is retried by budget (a program that may appear)", async () => {
  expect((await q.run(["config", "set", "retry-spawn-failures", "on"])).code).toBe(0);
  await q.setConfig("backoff-cap", "0");
  const r = await runOnce("--", "spoolctl-not-yet-installed");
  expect([r.job.state, r.attempts.length]).toEqual(["dead", 4]);
  expect(r.stderr).toMatch(
    /attempt 1 could not start: program not found: spoolctl-not-yet-installed \(\d+\.\ds\) -> queued, retry in 0s/,
  );
  expect((await q.run(["config", "set", "retry-spawn-failures", "2"])).code).toBe(1);
  expect((await q.json(["config", "get", "retry_spawn_failures"])).env.data).toMatchObject({
    value: 1,
    default: 0,
    source: "database",
  });
});
