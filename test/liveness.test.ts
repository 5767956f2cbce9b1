/**
 * Worker liveness (issue 3, test d; SPEC §4 "Reaping"): a worker is known by
 * (host, PID, process start time, boot id). A recycled PID — a live process
 * with another start time — is dead; so is a worker recorded under another
 * boot, and a PID that is gone; another host is not ours to judge. End to end,
 * a live worker whose command line does not contain "spoolctl" is never reaped.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { bootId, HOST, judge, processStartTime } from "../src/worker/liveness.ts";
import { add } from "./support/jobs.ts";
import { procState, startWorker, stopProcessesOf } from "./support/processes.ts";
import { CLI, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const children: ReturnType<typeof Bun.spawn>[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) {
    c.kill("SIGKILL");
    await c.exited;
  }
});

function spawnSleeper(): ReturnType<typeof Bun.spawn> {
  const c = Bun.spawn(["sleep", "30"], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  children.push(c);
  return c;
}

const me = () => ({ host: HOST, pid: process.pid, bootId: bootId(), startTime: processStartTime(process.pid) });

test("the current process with its real start time is alive", () => {
  expect(me().startTime).not.toBeNull();
  expect(judge(me())).toBe("alive");
});

test("a live child with its recorded start time is alive", () => {
  const c = spawnSleeper();
  expect(judge({ host: HOST, pid: c.pid, bootId: bootId(), startTime: processStartTime(c.pid) })).toBe("alive");
});

test("a recycled PID (a live process whose start time differs from the recorded one) is dead", () => {
  const c = spawnSleeper();
  const real = processStartTime(c.pid)!;
  expect(real).not.toBeNull();
  // The recorded worker started earlier than the process that now holds its PID.
  const earlier = String(Number(real) - 1000);
  expect(judge({ host: HOST, pid: c.pid, bootId: bootId(), startTime: earlier })).toBe("dead");
  expect(judge({ host: HOST, pid: process.pid, bootId: bootId(), startTime: earlier })).toBe("dead");
});

test("a worker recorded under another boot id is dead, even when its PID and start time match a live process", () => {
  expect(bootId()).not.toBeNull();
  expect(judge({ ...me(), bootId: "00000000-0000-4000-8000-000000000000" })).toBe("dead");
});

test("a PID that is gone is dead", async () => {
  const c = Bun.spawn(["true"], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  const startTime = processStartTime(c.pid) ?? "1";
  await c.exited;
  await waitFor("the child to be gone from /proc", () => procState(c.pid) === null);
  expect(judge({ host: HOST, pid: c.pid, bootId: bootId(), startTime })).toBe("dead");
  expect(judge({ host: HOST, pid: c.pid, bootId: null, startTime: null })).toBe("dead");
});

test("a worker on another host is unknown (never judged here)", () => {
  expect(judge({ ...me(), host: `${HOST}-elsewhere` })).toBe("unknown");
  expect(judge({ host: `${HOST}-elsewhere`, pid: 999999999, bootId: "other", startTime: "1" })).toBe("unknown");
});

test("a live PID with no recorded start time is inconclusive (left alone)", () => {
  expect(judge({ host: HOST, pid: process.pid, bootId: bootId(), startTime: null })).toBe("unknown");
});

test("a zombie (exited, never waited for) is dead, though its PID and start time still match", async () => {
  // `sleep 0` runs in the background of a shell that then execs `sleep 30`, which
  // never waits: the exited `sleep 0` stays a zombie with its PID and start time.
  const parent = Bun.spawn(["sh", "-c", "sleep 0 & echo $!; exec sleep 30"], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "ignore",
  });
  children.push(parent);
  const reader = (parent.stdout as ReadableStream<Uint8Array>).getReader();
  const first = await reader.read();
  reader.releaseLock();
  const zombie = Number(new TextDecoder().decode(first.value).trim());
  expect(zombie).toBeGreaterThan(1);
  await waitFor("the child to be a zombie", () => procState(zombie) === "Z");
  const startTime = processStartTime(zombie);
  expect(startTime).not.toBeNull();
  expect(judge({ host: HOST, pid: zombie, bootId: bootId(), startTime })).toBe("dead");
});

// End to end: workers whose command line does not say "spoolctl".
describe("end to end", () => {
  const q = useTempQueue({ teardown: stopProcessesOf });
  let plain: string;
  beforeEach(() => {
    plain = mkdtempSync(join(tmpdir(), "q-"));
  });
  afterEach(() => rmSync(plain, { recursive: true, force: true }));

  test("live workers run from a folder without 'spoolctl' in its path are never reaped, with a tiny reap threshold", async () => {
    expect(plain).not.toContain("spoolctl");
    // The checkout itself may live under a path with "spoolctl" in it: reach the CLI
    // through symlinks in `plain`, so no worker's command line carries the word.
    symlinkSync(CLI, join(plain, "q"));
    symlinkSync(dirname(CLI), join(plain, "src"));
    // Heartbeat 0.2 s, reap threshold 0.05 s: each running job's heartbeat is stale most
    // of the time, so both reapers look at the other's job all along.
    const knobs = { SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "0.2", SPOOLCTL_TEST_REAP_THRESHOLD: "0.05" };
    // One worker through a symlink named `q`, one as `bun <plain>/src/cli.ts` (or the suite's
    // bundle, test/run-suite.ts); both with cwd `plain`.
    const w1 = startWorker(q, ["--worker-id", "one"], { env: knobs, cwd: plain, argv0: ["bun", join(plain, "q")] });
    await waitFor("worker one to register", () => q.registered("one"));
    const first = await add(q, "--", "sleep", "4");
    await waitFor("job 1 to run on worker one", async () => (await q.job(first))?.locked_by === "one");
    const w2 = startWorker(q, ["--worker-id", "two"], {
      env: knobs,
      cwd: plain,
      argv0: ["bun", join(plain, "src", basename(CLI))],
    });
    await waitFor("worker two to register", () => q.registered("two"));
    const second = await add(q, "--", "sleep", "4");
    await waitFor("job 2 to run on worker two", async () => (await q.job(second))?.locked_by === "two");

    for (const w of [w1, w2]) {
      const cmdline = readFileSync(`/proc/${w.pid}/cmdline`, "utf8").replaceAll("\0", " ");
      expect(cmdline).not.toContain("spoolctl");
      expect(readlinkSync(`/proc/${w.pid}/cwd`)).toBe(realpathSync(plain));
    }
    // The jobs are reap candidates: heartbeats older than the threshold are seen.
    await waitFor(
      "a stale heartbeat",
      async () => Date.now() / 1000 - ((await q.job(first))?.heartbeat_at ?? Infinity) > 0.05,
      60000,
      5,
    );

    await waitFor(
      "both jobs to be done",
      async () => (await q.job(first))?.state === "done" && (await q.job(second))?.state === "done",
      30000,
    );
    for (const id of [first, second]) {
      expect((await q.attempt(id))!.state).toBe("succeeded");
      expect((await q.job(id))!.crashes).toBe(0);
      expect(await q.attempts(id)).toHaveLength(1);
      expect(await q.eventNames(id)).toEqual(["added", "claimed", "succeeded"]);
    }
    expect(w1.stderr() + w2.stderr()).not.toContain("reaped");
  }, 60000);
});
