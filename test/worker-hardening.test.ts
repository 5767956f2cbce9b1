/**
 * Regressions found by a hostile tester, all in the worker: long timeouts,
 * restarts under one --worker-id, a cancel racing a failure, re-claims under
 * --concurrency, orphans whose group was never recorded or that left it, a
 * closed log pipe, and a queue whose writes fail.
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { attemptMarker } from "../src/worker/executor.ts";
import { groupsWithEnv } from "../src/worker/process-groups.ts";
import { startBg, startWorker, stopProcessesOf } from "./support/processes.ts";
import { forgetAttemptGroups } from "./support/queue-fixtures.ts";
import { FAST_KNOBS, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue({ teardown: stopProcessesOf });

test("a timeout beyond setTimeout's 24.8-day limit does not fire at once", async () => {
  const id = await q.addJob("--timeout", "30d", "--max-retries", "0", "--", "sleep", "0.3");
  const r = await q.run(["work", "--drain"]);
  expect(r.code).toBe(0);
  expect(r.stderr).not.toContain("TimeoutOverflowWarning");
  expect((await q.job(id))!.state).toBe("done");
});

test("a worker restarted under the same --worker-id still gets its dead predecessor's job reaped", async () => {
  const marker = join(q.dir, "ran");
  const id = await q.addJob("--", "sh", "-c", `echo run >> ${marker}; sleep 30`);
  const first = startWorker(q, ["--worker-id", "same"], { env: FAST_KNOBS });
  await waitFor("the first run", () => existsSync(marker));
  first.proc.kill("SIGKILL");
  await first.exited;
  const second = startWorker(q, ["--worker-id", "same"], { env: FAST_KNOBS });
  await waitFor("the job to be reaped", async () => (await q.attempt(id, 1))?.state === "abandoned", 30000);
  expect((await q.attempt(id, 1))!.failure_reason).toBe("worker_crash");
  // The orphaned `sleep 30` of attempt 1 was killed before the requeue.
  expect(groupsWithEnv(attemptMarker(await q.queueId(), id, 1))).toEqual([]);
  await waitFor("the second run", () => readFileSync(marker, "utf8").split("\n").length >= 3, 30000);
  second.proc.kill("SIGKILL");
});

test("a cancel requested while a failing attempt ends is honoured instead of a retry", async () => {
  const gate = join(q.dir, "gate");
  const id = await q.addJob("--", "sh", "-c", `while [ ! -e ${gate} ]; do sleep 0.05; done; exit 1`);
  // A slow heartbeat: only the cancel's wake tells the worker (or the failure comes first).
  const w = startWorker(q, [], { env: { SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "30" } });
  await waitFor("the job to run", async () => (await q.job(id))?.state === "running");
  expect((await q.run(["cancel", String(id), "--running", "--yes"])).code).toBe(0);
  await Bun.write(gate, "");
  await waitFor("the job to settle", async () => (await q.job(id))!.state !== "running");
  expect((await q.job(id))!.state).toBe("canceled");
  // The cancel wakes the worker, which most often kills the job first; when the failure is recorded
  // first, the requested cancel still wins over the retry (decideOutcome): never a second attempt.
  expect([
    ["added", "claimed", "cancel_requested", "failed", "canceled"],
    ["added", "claimed", "cancel_requested", "canceled"],
  ]).toContainEqual(await q.eventNames(id));
  expect((await q.job(id))!.last_attempt_no).toBe(1);
  w.proc.kill("SIGKILL");
});

test("retry --force of a job re-claimed by the same --concurrency worker keeps both attempts apart", async () => {
  const id = await q.addJob("--", "sleep", "30");
  const w = startWorker(q, ["--concurrency", "2"], { env: FAST_KNOBS });
  await waitFor("attempt 1 to run", async () => (await q.job(id))?.state === "running");
  expect((await q.run(["retry", String(id), "--force"])).code).toBe(0);
  await waitFor("attempt 2 to run", async () => {
    const j = await q.job(id);
    return j?.last_attempt_no === 2 && j.state === "running";
  });
  // Attempt 1's process is killed (its job was taken away); attempt 2 goes on.
  const queueId = await q.queueId();
  await waitFor("attempt 1's processes to be gone", () => groupsWithEnv(attemptMarker(queueId, id, 1)).length === 0);
  // The claim commits before the spawn, so attempt 2's group may appear a moment later.
  await waitFor("attempt 2's one group", () => groupsWithEnv(attemptMarker(queueId, id, 2)).length === 1);
  expect(groupsWithEnv(attemptMarker(queueId, id, 2)).length).toBe(1);
  // The worker has settled attempt 1 (its late result refused) before we stop it.
  await waitFor("attempt 1's end to be refused", () =>
    w.stderr().includes(`job ${id} attempt 1 ended after the job was taken`),
  );
  w.proc.kill("SIGTERM");
  await waitFor("the stopping line", () => w.stderr().includes("finishing 1 running job"));
  w.proc.kill("SIGTERM");
  expect(await w.exited).toBe(0);
  expect(w.stderr()).not.toContain("INTERNAL");
  expect((await q.job(id))!.state).toBe("queued");
});

test("the reaper kills an orphan that left its group (setsid) and one whose group was never recorded", async () => {
  const log = join(q.dir, "log");
  // The job's child moves to a session of its own, then outlives the job's group.
  const id = await q.addJob("--", "sh", "-c", `setsid sh -c 'echo start >> ${log}; sleep 30' & sleep 30`);
  const w = startWorker(q, [], { env: FAST_KNOBS });
  await waitFor("the escaped child to start", () => existsSync(log));
  const queueId = await q.queueId();
  await waitFor("both groups", () => groupsWithEnv(attemptMarker(queueId, id, 1)).length === 2);
  w.proc.kill("SIGKILL");
  await w.exited;
  // Forget the recorded group, as if the worker had died before writing it.
  await forgetAttemptGroups(q, id);
  const reaper = startWorker(q, ["--drain"], { env: FAST_KNOBS });
  await waitFor("the job to be reaped", async () => (await q.attempt(id, 1))?.state === "abandoned", 30000);
  expect(groupsWithEnv(attemptMarker(queueId, id, 1))).toEqual([]);
  reaper.proc.kill("SIGKILL");
});

test("a worker whose log reader went away keeps working", async () => {
  for (let i = 0; i < 4; i++) await q.addJob("--", "sleep", "0.1");
  // `head -1` closes the worker's stderr pipe after the first line.
  const sh = startBg(q, [], {
    argv0: [
      "bash",
      "-c",
      `bun ${JSON.stringify(join(import.meta.dir, "../src/cli.ts"))} work --drain 2>&1 | head -1; echo "rc=\${PIPESTATUS[0]}"`,
    ],
  });
  expect(await sh.exited).toBe(0);
  expect(sh.stdout()).toContain("rc=0");
  expect((await q.jobs()).filter((j) => j.state === "done")).toHaveLength(4);
});
