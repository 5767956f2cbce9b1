/**
 * Graceful stop (issue 3, test e; SPEC §4 "Graceful stop", "Cancel"): one
 * SIGTERM/SIGINT → stop claiming, let in-flight jobs finish, exit 0; a second
 * → group-kill the in-flight children and requeue their attempts as `canceled`
 * with no budget charged. `spoolctl stop [--worker-id ID] [--wait]` does the
 * first through the registry; `workers` and `status` show who is live. Also the
 * cancel of a running job (`cancel ID --running --yes`), when that verb exists.
 *
 * Jobs that must outlast a step wait for a GO file, so the test, not the
 * clock, decides when they end.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { add } from "./support/jobs.ts";
import { type BgProc, groupMembers, processLives, startBg, startWorker, stopProcessesOf } from "./support/processes.ts";
import { CLI, FAST_KNOBS, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue({ teardown: stopProcessesOf });

/** A job that runs until the test creates its GO file. */
async function gated(name: string): Promise<{ id: number; go: () => void }> {
  const go = `${q.dir}/GO-${name}`;
  const id = await add(q, "-c", `while [ ! -e '${go}' ]; do sleep 0.02; done; echo ${name} finished`);
  return { id, go: () => writeFileSync(go, "") };
}

async function running(id: number, worker: string): Promise<number> {
  await waitFor(`job ${id} to run on ${worker}`, async () => {
    const j = await q.job(id);
    return j?.state === "running" && j.locked_by === worker;
  });
  return waitFor(
    `job ${id}'s process group to be recorded`,
    async () => (await q.attempt(id, (await q.job(id))!.last_attempt_no))?.pgid as number | undefined,
  );
}

async function stoppingLine(w: BgProc, n: number): Promise<void> {
  await waitFor(
    "the worker's stopping line",
    () => w.stderr().includes(`finishing ${n} running ${n === 1 ? "job" : "jobs"}, then exiting`),
    30000,
  );
}

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  test(`one ${signal}: no more claims, the running job finishes, exit 0, queued jobs stay queued`, async () => {
    const first = await gated("first");
    const second = await add(q, "--", "true");
    const third = await add(q, "--", "true");
    const w = startWorker(q, ["--worker-id", "A"], { env: FAST_KNOBS });
    await running(first.id, "A");

    w.proc.kill(signal);
    await stoppingLine(w, 1);
    expect(w.stderr()).toContain(
      `spoolctl: got ${signal}: finishing 1 running job, then exiting (signal again to kill them)\n`,
    );
    expect((await q.job(first.id))!.state).toBe("running"); // not killed by the first signal
    first.go();
    expect(await w.exited).toBe(0);

    expect((await q.job(first.id))!.state).toBe("done");
    expect((await q.attempt(first.id))!.state).toBe("succeeded");
    for (const id of [second, third]) {
      const j = (await q.job(id))!;
      expect({ id, state: j.state, last_attempt_no: j.last_attempt_no }).toEqual({
        id,
        state: "queued",
        last_attempt_no: 0,
      });
      expect(await q.eventNames(id)).toEqual(["added"]);
    }
    // It left the registry cleanly.
    expect(typeof (await q.worker("A"))?.stopped_at).toBe("number");
  }, 60000);

  test(`a second ${signal}: in-flight groups are killed, attempts canceled, jobs requeued with no budget charged`, async () => {
    // Each job leaves a grandchild in its group: the kill must take the whole group.
    const go = `${q.dir}/GO`;
    const script = `sleep 60 & while [ ! -e '${go}' ] && [ -d '${q.dir}' ]; do sleep 0.02; done`;
    const a = await add(q, "-c", script);
    const b = await add(q, "-c", script);
    const queued = await add(q, "--", "true");
    const w = startWorker(q, ["--worker-id", "A", "--concurrency", "2"], { env: FAST_KNOBS });
    const pgids = [await running(a, "A"), await running(b, "A")];
    await waitFor("both groups to have their grandchild", () => pgids.every((p) => groupMembers(p).length >= 2));

    w.proc.kill(signal);
    await stoppingLine(w, 2);
    expect((await q.job(a))!.state).toBe("running");
    w.proc.kill(signal);
    expect(await w.exited).toBe(0);

    for (const [n, id] of [a, b].entries()) {
      expect(groupMembers(pgids[n]!)).toEqual([]);
      const at = (await q.attempt(id))!;
      expect({ state: at.state, failure_reason: at.failure_reason }).toEqual({
        state: "canceled",
        failure_reason: "canceled",
      });
      const j = (await q.job(id))!;
      expect({ state: j.state, attempts: j.attempts, crashes: j.crashes, locked_by: j.locked_by }).toEqual({
        state: "queued",
        attempts: 0,
        crashes: 0,
        locked_by: null,
      });
      expect(j.next_run_at).toBeLessThanOrEqual(at.finished_at! + 1e-6); // requeued at once: no backoff
      expect(await q.eventNames(id)).toEqual(["added", "claimed", "interrupted"]);
      expect(w.stderr()).toMatch(
        new RegExp(`^spoolctl: job ${id} attempt 1 interrupted \\(\\d+\\.\\ds\\) -> queued$`, "m"),
      );
    }
    expect((await q.job(queued))!.state).toBe("queued");
    expect((await q.job(queued))!.last_attempt_no).toBe(0);

    // A requeued job runs normally the next time, as attempt 2.
    writeFileSync(go, "");
    const again = await q.json(["work", "--drain", "--concurrency", "3"], { env: FAST_KNOBS });
    expect(again.code).toBe(0);
    for (const id of [a, b])
      expect({ state: (await q.job(id))!.state, attempt2: (await q.attempt(id, 2))?.state }).toEqual({
        state: "done",
        attempt2: "succeeded",
      });
    expect((await q.job(queued))!.state).toBe("done");
  }, 60000);
}

test("`spoolctl stop` asks every live worker to finish its job and exit; `workers` and `status` show them", async () => {
  const one = await gated("one");
  const two = await gated("two");
  const w1 = startWorker(q, ["--worker-id", "A"], { env: FAST_KNOBS });
  await running(one.id, "A");
  const w2 = startWorker(q, ["--worker-id", "B"], { env: FAST_KNOBS });
  await running(two.id, "B");
  const third = await add(q, "--", "true");

  const listed = await q.json(["workers"]);
  expect(listed.code).toBe(0);
  const byId = Object.fromEntries(listed.env.data.workers.map((w: any) => [w.worker_id, w]));
  expect(listed.env.data.count).toBe(2);
  expect({ status: byId.A.status, pid: byId.A.pid, running_jobs: byId.A.running_jobs }).toEqual({
    status: "live",
    pid: w1.pid,
    running_jobs: [one.id],
  });
  expect({ status: byId.B.status, pid: byId.B.pid, running_jobs: byId.B.running_jobs }).toEqual({
    status: "live",
    pid: w2.pid,
    running_jobs: [two.id],
  });
  expect((await q.json(["status"])).env.data.live_workers).toBe(2);

  const stop = await q.json(["stop"]);
  expect(stop.code).toBe(0);
  expect([...stop.env.data.requested].sort()).toEqual(["A", "B"]);
  await stoppingLine(w1, 1);
  await stoppingLine(w2, 1);
  one.go();
  two.go();
  expect(await w1.exited).toBe(0);
  expect(await w2.exited).toBe(0);

  expect((await q.job(one.id))!.state).toBe("done");
  expect((await q.job(two.id))!.state).toBe("done");
  expect((await q.job(third))!.state).toBe("queued");
  expect((await q.job(third))!.last_attempt_no).toBe(0);
  expect((await q.json(["workers"])).env.data.count).toBe(0);
  expect((await q.json(["status"])).env.data.live_workers).toBe(0);
  const all = await q.json(["workers", "--all"]);
  expect(all.env.data.workers.map((w: any) => [w.worker_id, w.status]).sort()).toEqual([
    ["A", "stopped"],
    ["B", "stopped"],
  ]);
}, 60000);

test("`stop --worker-id ID --wait` stops that worker only, and returns once it has exited", async () => {
  const one = await gated("one");
  const w1 = startWorker(q, ["--worker-id", "A"], { env: FAST_KNOBS });
  await running(one.id, "A");
  const w2 = startWorker(q, ["--worker-id", "B"], { env: FAST_KNOBS });
  await waitFor("worker B to register", () => q.registered("B"));

  const stop = startBg(q, ["stop", "--worker-id", "A", "--wait", "--json"]);
  await stoppingLine(w1, 1);
  // `--wait` holds on while A finishes its job (A is still there, and so is the waiter).
  expect(w1.proc.exitCode).toBeNull();
  expect(stop.proc.exitCode).toBeNull();
  one.go();
  expect(await stop.exited).toBe(0);
  // Returned once A's process is gone, not merely marked stopped in the registry.
  expect(processLives(w1.pid)).toBe(false);
  const out = JSON.parse(stop.stdout());
  expect(out.data).toEqual({ requested: ["A"], stopped: ["A"] });
  // A is out of the registry as live (it marks itself stopped as it exits) and exits 0.
  expect(await w1.exited).toBe(0);
  expect((await q.job(one.id))!.state).toBe("done");

  // B was not asked: it is live and serves the next job.
  const listed = await q.json(["workers"]);
  expect(listed.env.data.workers.map((w: any) => [w.worker_id, w.status, w.stop_requested])).toEqual([
    ["B", "live", false],
  ]);
  const next = await add(q, "--", "true");
  await waitFor("B to run the next job", async () => (await q.job(next))?.state === "done");
  expect((await q.attempt(next))!.worker_id).toBe("B");
  expect(w2.proc.exitCode).toBeNull();

  // An unknown id is NOT_FOUND.
  const unknown = await q.json(["stop", "--worker-id", "nobody"]);
  expect(unknown.code).not.toBe(0);
  expect(unknown.env.errors[0].code).toBe("NOT_FOUND");
}, 60000);

const hasCancel =
  Bun.spawnSync(["bun", CLI, "cancel", "--help"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;

describe.skipIf(!hasCancel)("cancel of a running job", () => {
  test("`cancel ID --running --yes`: the owning worker kills the group within a heartbeat; attempt canceled", async () => {
    const id = await add(q, "-c", "sleep 60 & sleep 60");
    const w = startWorker(q, ["--worker-id", "A"], { env: FAST_KNOBS });
    const pgid = await running(id, "A");
    await waitFor("the grandchild", () => groupMembers(pgid).length >= 2);

    // Without the confirmation: SAFETY_BLOCK, exit 2, nothing changes.
    const blocked = await q.json(["cancel", String(id)]);
    expect(blocked.code).toBe(2);
    expect(blocked.env.errors[0].code).toBe("SAFETY_BLOCK");
    expect((await q.job(id))!.state).toBe("running");
    expect((await q.job(id))!.cancel_requested).toBe(false);

    const r = await q.json(["cancel", String(id), "--running", "--yes"]);
    expect(r.code).toBe(0);
    await waitFor("the job to be canceled", async () => (await q.job(id))?.state === "canceled", 30000);
    expect(groupMembers(pgid)).toEqual([]);
    const at = (await q.attempt(id))!;
    expect({ state: at.state, failure_reason: at.failure_reason }).toEqual({
      state: "canceled",
      failure_reason: "canceled",
    });
    expect((await q.job(id))!.attempts).toBe(0);
    expect(await q.eventNames(id)).toContain("canceled");
    // The worker lives on.
    const next = await add(q, "--", "true");
    await waitFor("the worker to run the next job", async () => (await q.job(next))?.state === "done");
    expect(w.proc.exitCode).toBeNull();
  }, 60000);
});
