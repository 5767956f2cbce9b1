/**
 * Crash recovery on one machine is immediate when death is certain (issue 19
 * item 5; docs/architecture.md "Reaping"): at DEFAULT timing (no test knobs: a
 * 5 s heartbeat, a 30 s lease), a worker SIGKILLed on this host has its job
 * reaped by the next worker at once — its orphan killed first — not once the
 * 30 s lease has run out; and a drain started meanwhile does not say it waits
 * for the dead worker. Both drivers (the worker's registry row says this host).
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { add } from "./support/jobs.ts";
import { groupMembers, killWorkerAndWatchdog, startWorker, stopProcessesOf } from "./support/processes.ts";
import { useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue({ teardown: stopProcessesOf });

/** Default timing: the knobs emptied, whatever the test runner's environment says. */
const DEFAULTS = { SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "", SPOOLCTL_TEST_REAP_THRESHOLD: "" };
/** Well below the 30 s lease: a re-run before this can only come from the immediate reap. */
const BEFORE_THE_LEASE_MS = 20000;

/** A job that sleeps 60 s on its first run (its PID in `pidFile`) and exits 0 on the next. */
async function sleeperOnce(): Promise<{ id: number; pidFile: string }> {
  const pidFile = `${q.dir}/pid`;
  const id = await add(q, "-c", `if [ -e '${pidFile}' ]; then exit 0; fi; echo $$ > '${pidFile}'; exec sleep 60`);
  return { id, pidFile };
}

async function killWorkerRunning(id: number, pidFile: string): Promise<{ sleepPid: number; killedAt: number }> {
  const a = startWorker(q, ["--worker-id", "A"], { env: DEFAULTS });
  const sleepPid = await waitFor(
    "the job's sleep to run",
    () => {
      const text = existsSync(pidFile) ? readFileSync(pidFile, "utf8").trim() : "";
      return text && readFileSync(`/proc/${text}/cmdline`, "utf8").startsWith("sleep") ? Number(text) : null;
    },
    30000,
  );
  expect((await q.job(id))!.state).toBe("running");
  killWorkerAndWatchdog(a.pid);
  const killedAt = Date.now() / 1000;
  await a.exited;
  expect(groupMembers(sleepPid)).toEqual([sleepPid]); // the orphan runs on
  return { sleepPid, killedAt };
}

test("kill -9 of a worker running sleep 60: a new worker re-runs the job long before the lease, its orphan killed first", async () => {
  const { id, pidFile } = await sleeperOnce();
  const { sleepPid, killedAt } = await killWorkerRunning(id, pidFile);
  const b = startWorker(q, ["--worker-id", "B"], { env: DEFAULTS });
  const reaped = await waitFor(
    "the attempt to be reaped",
    async () => {
      const row = (await q.attempt(id))!;
      return row.state === "running" ? null : { row, members: groupMembers(sleepPid) };
    },
    BEFORE_THE_LEASE_MS,
    5,
  );
  expect(reaped.members).toEqual([]); // killed before the attempt was settled
  expect(reaped.row.state).toBe("abandoned");
  expect(reaped.row.failure_reason).toBe("worker_crash");
  const rerun = await waitFor("the re-run to start", () => q.attempt(id, 2), BEFORE_THE_LEASE_MS, 5);
  const rerunMs = (rerun.started_at - killedAt) * 1000; // the re-run's own start, on the queue's clock
  await waitFor("the job to succeed", async () => (await q.job(id))!.state === "done", 30000);
  expect(b.stderr()).toContain(`spoolctl: reaped job ${id} (worker pid `);
  // Figures for the closing note (not asserted: no wall-clock claims on a shared machine).
  const reapMs = (reaped.row.finished_at! - killedAt) * 1000;
  console.log(
    `[measure] ${q.driver}: kill -9 to reap ${Math.round(reapMs)} ms, to re-run start ${Math.round(rerunMs)} ms (crash backoff 2 s)`,
  );
}, 90000);

test("a drain started after kill -9 reaps the dead worker's job at once and never says it waits for that worker", async () => {
  const { id, pidFile } = await sleeperOnce();
  await killWorkerRunning(id, pidFile);
  const d = startWorker(q, ["--drain", "--worker-id", "D"], { env: DEFAULTS });
  const code = await Promise.race([d.exited, Bun.sleep(BEFORE_THE_LEASE_MS).then(() => "still running")]);
  expect({ code, stderr: d.stderr() }).toEqual({ code: 0, stderr: expect.not.stringContaining("waits for") });
  expect((await q.job(id))!.state).toBe("done");
  expect(d.stderr()).toContain(`reaped job ${id}`);
}, 90000);
