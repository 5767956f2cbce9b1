/**
 * A worker's identity is its process, not its id or PID (docs/architecture.md
 * "Reaping"): a container restarted with the same --worker-id runs the worker
 * as PID 1 again; the new worker must reap its dead predecessor's job instead
 * of speaking for it. The predecessor ran in another PID namespace under the
 * same host name, so it cannot be judged from here (issue 19 item 4): the new
 * worker waits for its lease to expire, then reaps. Real PID namespaces
 * (`unshare --pid`), so root only.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Attempt, Job, WorkerRecord } from "../src/model/job.ts";
import { workerIdentityOf } from "../src/ops/worker-health.ts";
import { bootId, HOST, judge, processStartTime } from "../src/worker/liveness.ts";
import { hostsUsable } from "./support/hosts.ts";
import { CLI, FAST_KNOBS, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

setDefaultTimeout(90_000);

const spawned: ReturnType<typeof Bun.spawn>[] = [];
const q = useTempQueue({
  teardown: async () => {
    for (const p of spawned.splice(0)) {
      p.kill("SIGKILL");
      await p.exited;
    }
  },
});

/** `work --worker-id ID` as PID 1 of a fresh PID namespace, like a container's entry point. */
function containerWorker(id: string): ReturnType<typeof Bun.spawn> {
  const proc = Bun.spawn(
    ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child", "bun", CLI, "work", "--worker-id", id],
    {
      env: q.env(FAST_KNOBS),
      cwd: q.dir,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  spawned.push(proc);
  return proc;
}

const runs = (marker: string) =>
  existsSync(marker) ? readFileSync(marker, "utf8").split("\n").filter(Boolean).length : 0;

test.skipIf(!hostsUsable())(
  "a container restarted with the same --worker-id and PID 1 waits out its predecessor's lease, then reaps its job and runs it again",
  async () => {
    const marker = join(q.dir, "runs");
    const id = await q.addJob("--", "sh", "-c", `echo run >> ${marker}; sleep 60`);
    const first = containerWorker("ci-1");
    await waitFor("the first run", () => runs(marker) === 1);
    expect(await q.job(id)).toMatchObject({ state: "running", locked_by: "ci-1", locked_pid: 1 });
    first.kill("SIGKILL"); // --kill-child: the namespace's PID 1 (the worker) dies with it
    await first.exited;

    const second = containerWorker("ci-1");
    await waitFor("attempt 1 to be reaped", async () => (await q.attempt(id, 1))?.state === "abandoned", 30_000);
    expect((await q.attempt(id, 1))!.failure_reason).toBe("worker_crash");
    expect((await q.job(id))!.crashes).toBe(1);
    await waitFor("the second run, by the new worker", () => runs(marker) === 2, 30_000);
    expect(await q.job(id)).toMatchObject({ state: "running", locked_by: "ci-1", locked_pid: 1, last_attempt_no: 2 });
    const events = await q.eventNames(id);
    expect(events).toEqual(["added", "claimed", "reaped", "claimed"]);
    second.kill("SIGKILL");
    await second.exited;
    const stderr = await new Response(second.stderr as ReadableStream).text();
    expect(stderr).toContain(`reaped job ${id} (worker pid 1 on ${HOST} lost its lease)`);
    expect((await q.attempt(id, 1))!.error).toContain("in another PID namespace) lost its lease");
  },
);

test("a worker id held by a live worker is refused (CONFLICT), and that worker's job is left alone", async () => {
  await q.addJob("--", "sleep", "60");
  const live = Bun.spawn(["bun", CLI, "work", "--worker-id", "ci-2"], {
    env: q.env(FAST_KNOBS),
    cwd: q.dir,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
  });
  spawned.push(live);
  await waitFor("the job to run", async () => (await q.job(1))?.state === "running");
  const r = await q.json(["work", "--worker-id", "ci-2", "--once"], { env: FAST_KNOBS });
  expect([r.code, r.env.errors[0].code]).toEqual([5, "CONFLICT"]);
  expect(r.env.errors[0].message).toContain(`held by a live worker (pid ${live.pid}`);
  expect(await q.job(1)).toMatchObject({ state: "running", locked_by: "ci-2", last_attempt_no: 1 });
});

test("the attempt's own start time decides: a registry row of a later process with the same id and PID does not speak for it", () => {
  const me = processStartTime(process.pid)!;
  const job = { id: 1, state: "running", locked_by: "ci-1", locked_pid: process.pid, last_attempt_no: 1 } as Job;
  // The row describes this process (the new incarnation: same id, same PID).
  const row = { worker_id: "ci-1", pid: process.pid, host: HOST, boot_id: bootId(), start_time: me } as WorkerRecord;
  const attemptOf = (start: string | null) =>
    ({ job_id: 1, attempt_no: 1, worker_pid: process.pid, worker_start_time: start }) as Attempt;
  // Claimed by an earlier process with this PID: dead, although the row's process lives.
  expect(judge(workerIdentityOf(job, row, HOST, attemptOf(String(Number(me) - 1)))!)).toBe("dead");
  // Claimed by this very process: alive.
  expect(judge(workerIdentityOf(job, row, HOST, attemptOf(me))!)).toBe("alive");
  // An attempt from before schema v7 (no start time): the row speaks, as before.
  expect(judge(workerIdentityOf(job, row, HOST, attemptOf(null))!)).toBe("alive");
});

test("a dead predecessor whose row says stopped but whose job still runs (it exited with a result unwritten) is reaped when a worker registers under its id", async () => {
  const marker = join(q.dir, "runs");
  const id = await q.addJob("--", "sh", "-c", `echo run >> ${marker}; sleep 60`);
  const slow = { ...FAST_KNOBS, SPOOLCTL_TEST_REAP_THRESHOLD: "600" }; // only the registration can reap it in time
  const first = Bun.spawn(["bun", CLI, "work", "--worker-id", "ci-3"], {
    env: q.env(slow),
    cwd: q.dir,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
  });
  spawned.push(first);
  await waitFor("the first run", () => runs(marker) === 1);
  first.kill("SIGKILL");
  await first.exited;
  await q.write(async (tx) => tx.markWorkerStopped("ci-3", Date.now() / 1000));
  const second = Bun.spawn(["bun", CLI, "work", "--worker-id", "ci-3"], {
    env: q.env(slow),
    cwd: q.dir,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
  });
  spawned.push(second);
  await waitFor("attempt 1 to be reaped", async () => (await q.attempt(id, 1))?.state === "abandoned", 30_000);
  await waitFor("the second run", () => runs(marker) === 2, 30_000);
});
