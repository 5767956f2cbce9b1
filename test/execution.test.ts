/**
 * The executor end to end (SPEC §4 "Execution", "Timeout", "Execution details
 * that must hold"): process-group kill on timeout, spawn failures, env and cwd,
 * argv byte for byte, stdin from /dev/null, exit by signal.
 */
import { expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, realpathSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Attempt, Job } from "../src/model/job.ts";
import { processLives } from "./support/processes.ts";
import { CLI, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue();

const add = (...args: string[]) => q.addJob(...args);

async function job(id: number): Promise<Job> {
  return (await q.job(id))!;
}

async function attempt(id: number, no = 1): Promise<Attempt> {
  return (await q.attempt(id, no))!;
}

function events(id: number): Promise<string[]> {
  return q.eventNames(id);
}

/** Live (non-zombie) processes whose process group is `pgid`, read from /proc. */
function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields[0] is the state (field 3), fields[2] the process group (field 5).
    if (fields[0] !== "Z" && Number(fields[2]) === pgid) out.push(Number(name));
  }
  return out;
}

async function stdoutOf(id: number, attemptNo?: number): Promise<string> {
  const args = ["output", String(id), "--stream", "stdout", "--raw"];
  if (attemptNo !== undefined) args.push("--attempt", String(attemptNo));
  const r = await q.run(args);
  expect(r.code).toBe(0);
  return r.stdout;
}

test("a timeout kills the whole process group, grandchildren included", async () => {
  const id = await add("--timeout", "1", "--max-retries", "0", "-c", "sleep 100 & sleep 100");
  const r = await q.run(["work", "--once"]);
  expect(r.code).toBe(0);
  expect(r.stderr).toMatch(
    new RegExp(
      `^spoolctl: job ${id} attempt 1 started in lane default: .*\\nspoolctl: job ${id} attempt 1 timed out after 1s \\(\\d+\\.\\ds\\) -> dead\\n$`,
    ),
  );

  const a = await attempt(id);
  expect(a.state).toBe("timed_out");
  expect(a.failure_reason).toBe("timeout");
  expect(a.pgid).toBeGreaterThan(1);
  expect(a.pgid_start_time).not.toBeNull();
  // No process of the job's group remains: neither the shell nor either sleep.
  await waitFor("the job's process group to be gone", () => groupMembers(a.pgid!).length === 0, 10000);
  expect(groupMembers(a.pgid!)).toEqual([]);

  const j = await job(id);
  expect(j.state).toBe("dead");
  expect(j.last_error).toBe("timed out after 1s");
  expect(await events(id)).toEqual(["added", "claimed", "timed_out", "dead"]);
});

test("a timeout escalates to SIGKILL when the group ignores SIGTERM", async () => {
  // Ignored signals stay ignored across exec, so both sleeps ignore SIGTERM too.
  const id = await add("--timeout", "0.5", "--max-retries", "0", "-c", "trap '' TERM; sleep 100 & sleep 100");
  const r = await q.json(["work", "--once"]);
  expect(r.code).toBe(0);
  const a = await attempt(id);
  expect(a.state).toBe("timed_out");
  expect(a.failure_reason).toBe("timeout");
  expect(a.signal).toBe(9);
  await waitFor("the job's process group to be gone", () => groupMembers(a.pgid!).length === 0, 10000);
  expect((await job(id)).state).toBe("dead");
}, 30000);

test("after a timeout the group is SIGKILLed while any member lives, even after the leader died", async () => {
  // The leader (sh) dies of SIGTERM at once; a background child ignores SIGTERM
  // and outlives it: escalation must follow the group, not the leader.
  const pidFile = join(q.dir, "survivor.pid");
  const id = await add(
    "--timeout",
    "0.5",
    "--max-retries",
    "0",
    "-c",
    `(trap '' TERM; exec sleep 100) & echo $! > '${pidFile}'; sleep 100`,
  );
  await q.json(["work", "--once"]);
  const a = await attempt(id);
  expect(a.state).toBe("timed_out");
  expect(a.failure_reason).toBe("timeout");
  const survivor = Number(readFileSync(pidFile, "utf8").trim());
  expect(survivor).toBeGreaterThan(1);
  await waitFor("the job's process group to be gone", () => groupMembers(a.pgid!).length === 0, 10000);
  expect(processLives(survivor)).toBe(false);
}, 30000);

test("a timed-out job is retried with backoff like any job-owned failure", async () => {
  const id = await add("--timeout", "0.3", "--max-retries", "2", "--", "sleep", "100");
  await q.json(["work", "--once"]);
  const j = await job(id);
  expect(j.state).toBe("queued");
  expect(j.attempts).toBe(1);
  expect(j.next_run_at - (await attempt(id)).finished_at!).toBeCloseTo(2, 6);
  expect((await attempt(id)).failure_reason).toBe("timeout");
});

test("a missing program is spawn_failed with a clear error", async () => {
  const id = await add("--max-retries", "0", "--", "spoolctl-no-such-program-xyz", "arg");
  const r = await q.run(["work", "--once"]);
  expect(r.code).toBe(0);
  expect(r.stderr).toMatch(
    new RegExp(
      `^spoolctl: job ${id} attempt 1 started in lane default: .*\\nspoolctl: job ${id} attempt 1 could not start: .*spoolctl-no-such-program-xyz.* -> dead\\n$`,
    ),
  );
  const a = await attempt(id);
  expect(a.state).toBe("failed");
  expect(a.failure_reason).toBe("spawn_failed");
  expect(a.error).toContain("spoolctl-no-such-program-xyz");
  expect(a.error).toMatch(/not found|no such file/i);
  expect(a.exit_code).toBeNull();
  const j = await job(id);
  expect(j.state).toBe("dead");
  expect(j.last_error).toBe(a.error);
  expect(await events(id)).toEqual(["added", "claimed", "failed", "dead"]);

  // show renders the spawn error rather than an exit status.
  const show = await q.run(["show", String(id)]);
  expect(show.stdout).toContain(a.error!);
});

test("a missing program by absolute path is spawn_failed too, and dead at once whatever the budget", async () => {
  const id = await add("--max-retries", "1", "--", join(q.dir, "nope", "prog"));
  await q.json(["work", "--once"]);
  const a = await attempt(id);
  expect(a.failure_reason).toBe("spawn_failed");
  expect(a.error).toContain(join(q.dir, "nope", "prog"));
  expect((await job(id)).state).toBe("dead");
  expect((await job(id)).attempts).toBe(1);
});

test("a program that is not executable is spawn_failed", async () => {
  const script = join(q.dir, "script.sh");
  writeFileSync(script, "#!/bin/sh\necho hi\n", { mode: 0o644 });
  const id = await add("--max-retries", "0", "--", script);
  await q.json(["work", "--once"]);
  const a = await attempt(id);
  expect(a.failure_reason).toBe("spawn_failed");
  expect(a.error).toContain(script);
  expect((await job(id)).state).toBe("dead");
});

test("a missing --cwd is spawn_failed, naming the folder", async () => {
  const missing = join(q.dir, "gone");
  mkdirSync(missing);
  const id = await add("--max-retries", "0", "--cwd", missing, "--", "true");
  // The folder existed at submit time; it is gone when the job runs.
  rmdirSync(missing);
  const r = await q.run(["work", "--once"]);
  expect(r.code).toBe(0);
  expect(r.stderr).toContain(`could not start: cwd ${missing} does not exist`);
  const a = await attempt(id);
  expect(a.failure_reason).toBe("spawn_failed");
  expect(a.error).toBe(`cwd ${missing} does not exist`);
  expect((await job(id)).state).toBe("dead");
});

test("a --cwd that became a file is spawn_failed", async () => {
  const file = join(q.dir, "a-file");
  mkdirSync(file);
  const id = await add("--max-retries", "0", "--cwd", file, "--", "true");
  // add refuses a file as --cwd; this one was a folder then.
  rmdirSync(file);
  writeFileSync(file, "x");
  await q.json(["work", "--once"]);
  expect((await attempt(id)).failure_reason).toBe("spawn_failed");
  expect((await attempt(id)).error).toBe(`cwd ${file} is not a directory`);
});

test("--env and --cwd reach the child; env is layered over the worker's", async () => {
  const dir = join(q.dir, "work dir");
  mkdirSync(dir);
  const id = await add(
    "--cwd",
    dir,
    "--env",
    "SPOOL_A=first",
    "--env",
    "SPOOL_A=last wins",
    "--env",
    "SPOOL_EMPTY=",
    "--env",
    "SPOOL_EQ=a=b=c",
    "--env",
    "SPOOL_OVERRIDE=from-job",
    "--",
    "sh",
    "-c",
    'pwd; printf "%s|%s|%s|%s|%s|%s\\n" "$SPOOL_A" "${SPOOL_EMPTY-unset}" "$SPOOL_EQ" "$SPOOL_OVERRIDE" "$SPOOL_WORKER_ONLY" "$SPOOLCTL_DB"',
  );
  const r = await q.json(["work", "--drain"], {
    env: { SPOOL_WORKER_ONLY: "from-worker", SPOOL_OVERRIDE: "from-worker" },
  });
  expect(r.code).toBe(0);
  expect((await job(id)).state).toBe("done");
  expect(await stdoutOf(id)).toBe(`${realpathSync(dir)}\nlast wins||a=b=c|from-job|from-worker|${q.db}\n`);

  const show = await q.json(["show", String(id)]);
  expect(show.env.data.job.env).toEqual({
    SPOOL_A: "last wins",
    SPOOL_EMPTY: "",
    SPOOL_EQ: "a=b=c",
    SPOOL_OVERRIDE: "from-job",
  });
  expect(show.env.data.job.cwd).toBe(dir);
});

test("a relative --cwd is made absolute at submit time", async () => {
  mkdirSync(join(q.dir, "sub", "deeper"), { recursive: true });
  const r = await q.run(["add", "--json", "--cwd", "deeper", "--", "pwd"], { cwd: join(q.dir, "sub") });
  expect(r.code).toBe(0);
  const id = r.json.data.job_id;
  expect(r.json.data.cwd).toBe(join(q.dir, "sub", "deeper"));
  // The worker runs from elsewhere; the job still runs where it was submitted.
  await q.json(["work", "--drain"]);
  expect(await stdoutOf(id)).toBe(`${realpathSync(join(q.dir, "sub", "deeper"))}\n`);
});

test("arguments reach the program byte for byte", async () => {
  const args = [
    "plain",
    "two words",
    "  leading and trailing  ",
    "",
    "it's",
    '"double"',
    "$HOME",
    "${PATH}",
    "$(echo no)",
    "`echo no`",
    "*",
    "?",
    "[a-z]*",
    "~",
    "a\\b",
    "line1\nline2",
    "tab\there",
    "semi;colon && pipe | amp &",
    "héllo wörld ✓ 日本語 🎉",
    "-c",
    "--",
    "--json",
    "--db=/elsewhere",
  ];
  // Each argument is printed followed by a NUL, so that any byte can be told apart.
  const id = await add("--", "sh", "-c", 'for a in "$@"; do printf "%s\\0" "$a"; done', "sh", ...args);
  const shown = await q.json(["show", String(id)]);
  expect(shown.env.data.job.argv).toEqual(["sh", "-c", 'for a in "$@"; do printf "%s\\0" "$a"; done', "sh", ...args]);
  const r = await q.json(["work", "--drain"]);
  expect(r.code).toBe(0);
  expect((await job(id)).state).toBe("done");
  const raw = await q.run(["output", String(id), "--stream", "stdout", "--raw"]);
  expect(raw.stdout.split("\0").slice(0, -1)).toEqual(args);
  // Compare bytes too, straight from the attempt's file.
  const bytes = readFileSync((await attempt(id)).stdout_path);
  expect(bytes.equals(Buffer.from(args.map((a) => `${a}\0`).join(""), "utf8"))).toBe(true);
});

test("a -c string is run through sh verbatim", async () => {
  const script = `printf '%s\\n' "a  b" 'c"d' $((1+2)); echo "héllo" | tr 'h' 'H'`;
  const id = await add("-c", script);
  expect((await job(id)).argv).toEqual(["sh", "-c", script]);
  await q.json(["work", "--drain"]);
  expect(await stdoutOf(id)).toBe('a  b\nc"d\n3\nHéllo\n');
});

test("stdin is /dev/null: a job reading stdin ends at once, even when the worker's stdin stays open", async () => {
  const cat = await add("--timeout", "20", "--max-retries", "0", "--", "cat");
  const read = await add(
    "--timeout",
    "20",
    "--max-retries",
    "0",
    "-c",
    'if read line; then echo "got $line"; else echo "eof"; fi; readlink /proc/self/fd/0',
  );
  // The worker's own stdin is a pipe that is never closed: a job that inherited
  // it would block until its timeout.
  const worker = Bun.spawn(["bun", CLI, "work", "--drain"], {
    env: q.env(),
    cwd: q.dir,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  try {
    const code = await worker.exited;
    expect(code).toBe(0);
  } finally {
    worker.stdin.end();
  }
  expect((await attempt(cat)).state).toBe("succeeded");
  expect((await attempt(read)).state).toBe("succeeded");
  expect(await stdoutOf(cat)).toBe("");
  expect(await stdoutOf(read)).toBe("eof\n/dev/null\n");
});

test("a job runs in its own session and process group", async () => {
  // /proc/self/stat of the shell: pid (1), pgrp (5), session (6).
  const id = await add("-c", "cut -d' ' -f1,5,6 /proc/$$/stat");
  await q.json(["work", "--drain"]);
  const [pid, pgrp, session] = (await stdoutOf(id)).trim().split(" ").map(Number);
  expect(pgrp).toBe(pid!);
  expect(session).toBe(pid!);
  expect((await attempt(id)).pgid).toBe(pid!);
});

test("exit by signal is reported as signal N (NAME)", async () => {
  const term = await add("--max-retries", "0", "-c", "kill -TERM $$");
  const kill = await add("--max-retries", "0", "-c", "kill -KILL $$");
  const rt = await add("--max-retries", "0", "-c", "kill -37 $$");
  const r = await q.run(["work", "--drain"]);
  expect(r.code).toBe(0);
  // Each job's start line, then its end line (README "Running jobs"): the ends are every other line.
  const lines = r.stderr
    .trim()
    .split("\n")
    .filter((l) => !/ attempt 1 started in lane /.test(l));
  expect(lines[0]).toMatch(
    new RegExp(`^spoolctl: job ${term} attempt 1 failed: signal 15 \\(SIGTERM\\) \\(\\d+\\.\\ds\\) -> dead$`),
  );
  expect(lines[1]).toMatch(
    new RegExp(`^spoolctl: job ${kill} attempt 1 failed: signal 9 \\(SIGKILL\\) \\(\\d+\\.\\ds\\) -> dead$`),
  );
  expect(lines[2]).toMatch(
    new RegExp(`^spoolctl: job ${rt} attempt 1 failed: signal 37 \\(SIGRTMIN\\+3\\) \\(\\d+\\.\\ds\\) -> dead$`),
  );

  for (const [id, n, name] of [
    [term, 15, "SIGTERM"],
    [kill, 9, "SIGKILL"],
    [rt, 37, "SIGRTMIN+3"],
  ] as const) {
    const a = await attempt(id);
    expect(a.state).toBe("failed");
    expect(a.failure_reason).toBe("process_exit");
    expect(a.signal).toBe(n);
    expect(a.exit_code).toBeNull();
    expect((await job(id)).last_error).toBe(`signal ${n} (${name})`);
    expect((await job(id)).state).toBe("dead");
  }
  const show = await q.run(["show", String(term)]);
  expect(show.stdout).toContain("signal 15 (SIGTERM)");
});

test("exit codes are reported as exit N, and exit 0 is success", async () => {
  const ok = await add("--", "true");
  const bad = await add("--max-retries", "0", "--", "sh", "-c", "exit 42");
  await q.json(["work", "--drain"]);
  expect((await attempt(ok)).state).toBe("succeeded");
  expect((await attempt(ok)).exit_code).toBe(0);
  expect((await job(ok)).state).toBe("done");
  expect((await attempt(bad)).exit_code).toBe(42);
  expect((await job(bad)).last_error).toBe("exit 42");
});

test("a job's leftover background process does not hold the job open", async () => {
  // The job's own process exits at once; its background sleep is left alone (documented).
  const pidFile = join(q.dir, "bg.pid");
  const id = await add("-c", `sleep 30 > /dev/null 2>&1 & echo $! > '${pidFile}'`);
  await q.json(["work", "--drain"]);
  expect((await job(id)).state).toBe("done");
  const bg = Number(readFileSync(pidFile, "utf8").trim());
  try {
    process.kill(bg, "SIGKILL");
  } catch {
    // already gone
  }
});
