/**
 * Dead workers in the views (docs/architecture.md "Dead workers in the
 * views"): after a worker is SIGKILLed, `status`, `list`, `show` and `doctor`
 * say its running job's worker is dead and what will happen; `cancel` kills
 * the orphan itself; `wait` warns that no worker runs. A SIGSTOPped worker is
 * `stale` in `workers` and its job says so. Real workers, real signals.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { selectionFlags } from "../src/commands/selection.ts";
import { attemptMarker } from "../src/worker/executor.ts";
import { groupsWithEnv } from "../src/worker/process-groups.ts";
import { killJobGroups, killWorkerAndWatchdog, processLives } from "./support/processes.ts";
import { FAST_KNOBS, type TempQueue, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

setDefaultTimeout(60_000);

const spawned: ReturnType<TempQueue["spawn"]>[] = [];
const q = useTempQueue({
  teardown: async () => {
    for (const p of spawned.splice(0)) {
      p.kill("SIGCONT");
      p.kill("SIGKILL");
      await p.exited;
    }
    await killJobGroups(q); // the jobs of the killed workers
  },
});

const json = async (args: string[]) => (await q.json(args, { env: FAST_KNOBS })).env;

/** A worker running a job that records its PID and sleeps; returns the worker and the job's PID. */
async function runningJob(): Promise<{ worker: ReturnType<TempQueue["spawn"]>; jobPid: number; id: number }> {
  const pidFile = join(q.dir, "job.pid");
  const id = await q.addJob("--", "sh", "-c", `echo $$ > ${pidFile}; exec sleep 300`);
  const worker = q.spawn(["work"], { env: FAST_KNOBS });
  spawned.push(worker);
  await waitFor("the job to run", async () => existsSync(pidFile) && (await q.job(id))?.state === "running");
  return { worker, jobPid: Number(readFileSync(pidFile, "utf8").trim()), id };
}

test("a SIGKILLed worker's job: status, list, show and doctor say its worker is dead and that the next worker reaps it", async () => {
  const { worker, jobPid, id } = await runningJob();
  killWorkerAndWatchdog(worker.pid);
  await worker.exited;
  const status = await json(["status"]);
  expect(status.data.live_workers).toBe(0);
  expect(status.data.stranded).toEqual([
    expect.objectContaining({
      job_id: id,
      worker_pid: worker.pid,
      worker_state: "dead",
      fate: expect.stringContaining("reaped by the next worker"),
    }),
  ]);
  const human = await q.run(["status"], { env: FAST_KNOBS });
  expect(human.stdout).toContain(
    `running jobs whose worker is gone or silent: 1 (no worker is running: start one, spoolctl work ${selectionFlags({ dbPath: q.location().dbPath, source: "env" })})`,
  );
  const list = await json(["list"]);
  expect(list.data.jobs[0].worker_health).toMatchObject({ worker_state: "dead" });
  expect((await q.run(["list"], { env: FAST_KNOBS })).stdout).toContain("running (worker dead)");
  const show = await json(["show", String(id)]);
  expect(show.data.worker_health).toMatchObject({ job_id: id, worker_state: "dead" });
  expect((await q.run(["show", String(id)], { env: FAST_KNOBS })).stdout).toMatch(
    /worker state +dead: .*reaped by the next worker/,
  );
  const doctor = await json(["doctor"]);
  expect(doctor.data.checks.find((c: { id: string }) => c.id === "running_jobs")).toMatchObject({
    status: "warn",
    remediation: expect.stringContaining("no worker is running"),
  });
  // The orphaned job process still runs: nobody has reaped it yet.
  expect(processLives(jobPid)).toBe(true);
  // Once a worker runs, it is reaped (and its orphan killed before the requeue).
  const next = q.spawn(["work"], { env: FAST_KNOBS });
  spawned.push(next);
  await waitFor("the reap", async () => (await q.attempt(id, 1))?.state === "abandoned");
  expect(processLives(jobPid)).toBe(false);
});

test("cancel of a running job whose worker is dead kills the orphaned group itself and closes the attempt", async () => {
  const { worker, jobPid, id } = await runningJob();
  killWorkerAndWatchdog(worker.pid);
  await worker.exited;
  const r = await q.json(["cancel", String(id), "--running", "--yes"], { env: FAST_KNOBS });
  expect(r.code).toBe(0);
  expect(r.env.data).toEqual({ job_id: id, state: "canceled", was_running: true });
  expect(r.env.warnings).toEqual([]);
  expect(processLives(jobPid)).toBe(false);
  expect(groupsWithEnv(attemptMarker(await q.queueId(), id, 1))).toEqual([]);
  expect(await q.job(id)).toMatchObject({ state: "canceled", locked_by: null });
  expect(await q.attempt(id, 1)).toMatchObject({ state: "canceled", failure_reason: "canceled" });
  expect(await q.eventNames(id)).toEqual(["added", "claimed", "cancel_requested", "canceled"]);
});

test("wait with no live worker warns NO_WORKER instead of hanging without a word", async () => {
  const id = await q.addJob("--", "true");
  const human = await q.run(["wait", String(id), "--timeout", "4"], { env: FAST_KNOBS });
  expect(human.code).toBe(4);
  // Every command suggested carries the queue's selection, the warning's as the TIMEOUT's remediation.
  const db = selectionFlags({ dbPath: q.location().dbPath, source: "env" });
  expect(human.stderr).toContain(
    `spoolctl: warning: NO_WORKER: no live worker serves lane default: job 1 cannot finish until one runs (start one: spoolctl work ${db})\n`,
  );
  expect(human.stderr).toContain(
    `TIMEOUT: 1 of 1 job not finished after 4s: 1 (queued); no live worker serves lane default: job 1 cannot finish until one runs — start a worker (spoolctl work ${db}), then wait again; spoolctl workers ${db} lists the workers\n`,
  );
  expect(human.stderr).not.toMatch(/spoolctl (work|workers)\b(?! --db)/);
  const quiet = await q.json(["wait", String(id), "--timeout", "4"], { env: FAST_KNOBS });
  expect(quiet.env.errors[0]).toMatchObject({
    code: "TIMEOUT",
    remediation: `start a worker (spoolctl work ${db}), then wait again; spoolctl workers ${db} lists the workers`,
  });
  // With a worker, the job finishes and no warning is given.
  const worker = q.spawn(["work"], { env: FAST_KNOBS });
  spawned.push(worker);
  const r = await q.json(["wait", String(id), "--timeout", "30"], { env: FAST_KNOBS });
  expect([r.code, r.env.warnings]).toEqual([0, []]);
});

test("a SIGSTOPped worker is stale in workers; its job and wait say it is stopped (not gone); SIGCONT makes it live again", async () => {
  const { worker, id } = await runningJob();
  await waitFor("the worker to be live", async () => (await json(["workers"])).data.workers[0]?.status === "live");
  worker.kill("SIGSTOP");
  await waitFor(
    "the worker to look stale",
    async () => (await json(["workers"])).data.workers[0]?.status === "stale",
    30_000,
  );
  expect((await q.run(["workers"], { env: FAST_KNOBS })).stdout).toContain("stale");
  const status = await json(["status"]);
  expect(status.data.live_workers).toBe(0);
  // The text says silent, not gone, and does not tell the user to start another worker.
  const text = (await q.run(["status"], { env: FAST_KNOBS })).stdout;
  expect(text).toContain("running jobs whose worker is silent: 1");
  expect(text).not.toContain("start one");
  // list says stopped, not only "stale" (issue 21 item 5).
  expect((await q.run(["list"], { env: FAST_KNOBS })).stdout).toContain("running (worker stopped)");
  expect(status.data.stranded).toEqual([
    expect.objectContaining({
      job_id: id,
      worker_state: "stale",
      fate: expect.stringContaining(`(pid ${worker.pid}) is stopped (SIGSTOP or Ctrl-Z)`),
    }),
  ]);
  // wait names the stopped worker and how to continue it, never "start one".
  const waited = await q.json(["wait", String(id), "--timeout", "4"], { env: FAST_KNOBS });
  expect(waited.env.errors[0].code).toBe("TIMEOUT");
  expect(waited.env.errors[0].message).toContain(`(pid ${worker.pid}) is stopped (SIGSTOP or Ctrl-Z)`);
  expect(waited.env.errors[0].message).toContain(`kill -CONT ${worker.pid}`);
  expect(waited.env.errors[0].remediation).not.toContain("start a worker");
  const said = await q.run(["wait", String(id), "--timeout", "4"], { env: FAST_KNOBS });
  expect(said.stderr).toContain("warning: NO_WORKER: worker");
  expect(said.stderr).not.toContain("start one");
  // A stopped worker is never reaped: the job stays on attempt 1.
  expect((await q.job(id))!.last_attempt_no).toBe(1);
  worker.kill("SIGCONT");
  await waitFor(
    "the worker to be live again",
    async () => (await json(["workers"])).data.workers[0]?.status === "live",
    30_000,
  );
  expect((await json(["status"])).data.stranded).toEqual([]);
});
