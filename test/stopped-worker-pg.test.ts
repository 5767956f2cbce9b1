/**
 * A stopped worker on a shared PostgreSQL queue (docs/architecture.md "Heartbeat
 * and lease", "A stopped worker"): its jobs run in sessions of their own, so
 * SIGSTOP or Ctrl-Z stops the worker but not them. Before its lease can expire
 * (and a worker on another host may reap and re-run the job), the worker's
 * watchdog, a process of its own, ends them; so no job ever runs on two hosts
 * at once. Hosts are PID and UTS namespaces (test/support/hosts.ts) sharing one
 * real PostgreSQL server. Needs root and util-linux; skipped (visibly) where
 * namespaces cannot be made.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openQueue } from "../src/store/index.ts";
import type { Store } from "../src/store/store.ts";
import { WATCHDOG_ARG } from "../src/worker/watchdog.ts";
import { addGuardedJobs, overlapsIn, ticking } from "./support/guarded-jobs.ts";
import { Host, type HostProcess, hostsUsable } from "./support/hosts.ts";
import { cliJson, hostEnv, pidsOn, runsOn } from "./support/pg-hosts.ts";
import { type PgServer, startPgServer } from "./support/pg-server.ts";
import { CLI } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const USABLE = hostsUsable();
/**
 * Heartbeat 0.5 s, lease 4 s: the watchdog acts after 3.5 s without a renewal,
 * and a live worker on this loaded 2-core machine renews well within that.
 */
const KNOBS = { SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "0.5", SPOOLCTL_TEST_REAP_THRESHOLD: "4" };

let server: PgServer;
let dir: string;
let dbCount = 0;
let url: string;
let store: Store;
const hosts: Host[] = [];

function envFor(name: string): Record<string, string> {
  return hostEnv(KNOBS, url, dir, name);
}

function cli(...args: string[]): Promise<any> {
  return cliJson(envFor("client"), ...args);
}

async function job(id: number) {
  return (await store.read(async (tx) => tx.getJob(id)))!;
}

async function startHost(name: string): Promise<Host> {
  const host = await Host.start(name);
  hosts.push(host);
  return host;
}

function worker(host: Host, ...args: string[]): Promise<HostProcess> {
  return host.spawn(["bun", CLI, "work", ...args], envFor(host.name));
}

/** The state letter of process `pid` (`T`: stopped), or null when it is gone. */
function stateOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  } catch {
    return null;
  }
}

/** The session id of process `pid` as this (outer) namespace numbers it: NSsid's last field. */
function sessionOf(pid: number): number | null {
  try {
    const line = readFileSync(`/proc/${pid}/status`, "utf8")
      .split("\n")
      .find((l) => l.startsWith("NSsid:"));
    return line ? Number(line.split(/\s+/)[1]) : null;
  } catch {
    return null;
  }
}

beforeAll(async () => {
  if (!USABLE) return;
  dir = mkdtempSync(join(tmpdir(), "spoolctl-stopped-"));
  server = await startPgServer();
}, 120_000);

afterAll(async () => {
  if (!USABLE) return;
  await Promise.all(hosts.splice(0).map((host) => host.stop()));
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

afterEach(async () => {
  if (!USABLE) return;
  await Promise.all(hosts.splice(0).map((host) => host.stop()));
  await store?.close();
});

async function freshQueue(): Promise<void> {
  url = await server.createDatabase(`stopped_${++dbCount}`);
  store = await openQueue({ dbPath: url, spoolDir: join(dir, "client.spool"), source: "flag" }, { create: true });
}

/**
 * Four guarded jobs run on host A's worker; `stop` stops that worker alone (not
 * its jobs); host B's worker reaps them after the lease and runs them again.
 * Returns the overlaps found and A's worker.
 */
async function stopWorkerOnA(
  stop: (wa: HostProcess, a: Host) => unknown,
  stopped: (state: string | null) => boolean = (state) => state === "T",
): Promise<{ overlaps: string[]; wa: HostProcess; ids: number[] }> {
  await freshQueue();
  const a = await startHost("host-a");
  const b = await startHost("host-b");
  const logs = await addGuardedJobs(
    async (argv) => {
      const added = await cli("add", "--max-retries", "0", "--", ...argv);
      if (!added.ok) throw new Error(JSON.stringify(added));
      return added.data.job_id;
    },
    dir,
    String(dbCount),
    4,
  );
  const wa = await worker(a, "--worker-id", "a1", "--concurrency", "4");
  await waitFor("four jobs to tick on host A", () => ticking(logs.ticks, "host-a") === 4, 30_000);
  await stop(wa, a);
  await waitFor("A's worker to be stopped", () => stopped(stateOf(wa.outerPid)), 10_000);
  const wb = await worker(b, "--worker-id", "b1", "--concurrency", "4");
  await waitFor(
    "host B to reap and re-run the four jobs",
    async () => {
      for (const id of logs.ids) if (!["done", "dead"].includes((await job(id)).state)) return false;
      return true;
    },
    // SIGSTOP may land inside a transaction of A's: its row locks then hold B's reap back until
    // the server ends that transaction (idle_in_transaction_session_timeout, 60 s).
    150_000,
  ).catch((error) => {
    throw new Error(`${error.message}\n--- A:\n${wa.stderr()}\n--- B:\n${wb.stderr()}`);
  });
  // A's runs, had they outlived its lease, would tick on: the logs are final once none is left on A.
  await waitFor("no run of the jobs left on host A", async () => !(await runsOn(a, logs.ticks)), 30_000).catch(
    (error) => {
      throw new Error(`${error.message}; overlaps so far: ${overlapsIn(logs).join("; ")}\n--- A:\n${wa.stderr()}`);
    },
  );
  const overlaps = overlapsIn(logs);
  expect(wb.stderr()).toContain(`reaped job ${logs.ids[0]}`);
  return { overlaps, wa, ids: logs.ids };
}

describe.skipIf(!USABLE)("a stopped worker on PostgreSQL: its jobs never run beside their re-run", () => {
  test("kill -STOP of the worker alone: its jobs end before its lease expires; host B re-runs them with no overlap", async () => {
    const { overlaps, wa, ids } = await stopWorkerOnA((wa) => process.kill(wa.outerPid, "SIGSTOP"));
    console.log(`SIGSTOP: ${overlaps.length} overlap(s)\n${overlaps.join("\n")}`);
    expect(overlaps).toEqual([]);
    for (const id of ids) expect((await job(id)).state).toBe("done");
    // Resumed, A finds it lost the jobs and writes nothing.
    try {
      process.kill(wa.outerPid, "SIGCONT");
    } catch (error) {
      throw new Error(
        `A's worker is gone while stopped (${error}); exit ${wa.proc.exitCode}, signal ${wa.proc.signalCode}\n--- A:\n${wa.stderr()}`,
      );
    }
    await waitFor(
      "A to say it lost the jobs",
      () =>
        ids.every((id) => wa.stderr().includes(`job ${id} attempt 1 ended after the job was taken from this worker`)),
      90_000,
    ).catch((error) => {
      throw new Error(`${error.message}\n--- A:\n${wa.stderr()}`);
    });
    const attempts = await store.read(async (tx) => tx.attemptsOf(ids[0]!));
    expect(attempts.map((x) => [x.attempt_no, x.state, x.worker_id])).toEqual([
      [1, "abandoned", "a1"],
      [2, "succeeded", "b1"],
    ]);
    expect(wa.stderr()).toMatch(
      /watchdog of worker a1: no lease renewal for \d+\.\ds \(the worker is stopped \(SIGSTOP or Ctrl-Z\)\); ending its 4 running jobs/,
    );
  }, 240_000);

  test("Ctrl-Z (SIGTSTP) of the worker: it stops itself between its transactions, its jobs end before its lease expires, no overlap", async () => {
    const { overlaps, ids } = await stopWorkerOnA((wa) => process.kill(wa.outerPid, "SIGTSTP"));
    console.log(`SIGTSTP: ${overlaps.length} overlap(s)\n${overlaps.join("\n")}`);
    expect(overlaps).toEqual([]);
    for (const id of ids) expect((await job(id)).state).toBe("done");
  }, 240_000);

  test("kill -KILL of the worker alone (the OOM killer): its watchdog ends its jobs at once; host B re-runs them with no overlap", async () => {
    const { overlaps, wa, ids } = await stopWorkerOnA(
      (wa) => process.kill(wa.outerPid, "SIGKILL"),
      (state) => state === null || state === "Z",
    );
    console.log(`SIGKILL: ${overlaps.length} overlap(s)\n${overlaps.join("\n")}`);
    expect(overlaps).toEqual([]);
    for (const id of ids) expect((await job(id)).state).toBe("done");
    expect(wa.stderr()).toMatch(/watchdog of worker a1: the worker \(pid \d+\) died; ending its 4 running jobs/);
  }, 240_000);

  test("kill -KILL of the watchdog, then kill -STOP of the worker: a new watchdog ends its jobs; no overlap", async () => {
    const { overlaps, wa, ids } = await stopWorkerOnA(async (wa, a) => {
      const [first] = await pidsOn(a, WATCHDOG_ARG);
      process.kill(first!, "SIGKILL");
      // Stopped as soon as it has seen its watchdog die: before its next renewal.
      await waitFor("the worker to see its watchdog die", () => wa.stderr().includes("watchdog exited"), 15_000, 5);
      process.kill(wa.outerPid, "SIGSTOP");
    });
    console.log(`watchdog SIGKILL + SIGSTOP: ${overlaps.length} overlap(s)\n${overlaps.join("\n")}`);
    expect(overlaps).toEqual([]);
    for (const id of ids) expect((await job(id)).state).toBe("done");
    expect(wa.stderr()).toContain("this worker's watchdog exited");
    expect(wa.stderr()).toMatch(/watchdog of worker a1: no lease renewal for .*ending its 4 running jobs/);
    process.kill(wa.outerPid, "SIGCONT");
  }, 240_000);

  test("with no other worker about, a worker resumed after its watchdog ended its job requeues it without charge and runs it again", async () => {
    await freshQueue();
    const a = await startHost("host-a");
    // Attempt 1 would sleep for a minute; any later attempt ends at once.
    const added = await cli(
      "add",
      "--",
      "sh",
      "-c",
      'case "$SPOOLCTL_ATTEMPT_TOKEN" in *-1) exec sleep 61;; esac; echo again',
    );
    const id = added.data.job_id as number;
    const wa = await worker(a, "--worker-id", "a1");
    await waitFor("the job to run on host A", () => runsOn(a, "sleep 61"), 30_000);
    process.kill(wa.outerPid, "SIGSTOP");
    await waitFor("the watchdog to end the job", async () => !(await runsOn(a, "sleep 61")), 30_000);
    // Its line was written before the kill, but the pipe is read in the background.
    await waitFor("the watchdog's line", () => wa.stderr().includes("watchdog of worker a1: no lease renewal for"));
    process.kill(wa.outerPid, "SIGCONT");
    await waitFor("the job to run again and succeed", async () => (await job(id)).state === "done", 30_000);
    const attempts = await store.read(async (tx) => tx.attemptsOf(id));
    expect(attempts.map((x) => [x.attempt_no, x.state, x.worker_id])).toEqual([
      [1, "canceled", "a1"],
      [2, "succeeded", "a1"],
    ]);
    expect(attempts[0]!.error).toContain("ended by this worker's watchdog");
    const done = await job(id);
    expect([done.attempts, done.crashes]).toEqual([0, 0]); // the ended attempt charged no budget
    expect(wa.stderr()).toContain(`job ${id} attempt 1 interrupted`);
  }, 120_000);

  test("the watchdog leaves a worker stopped for less than its guard alone, lives in a session of its own, and ends with its worker", async () => {
    await freshQueue();
    const a = await startHost("host-a");
    await cli("add", "--", "sleep", "62");
    const wa = await worker(a, "--worker-id", "a1");
    await waitFor("the job to run on host A", () => runsOn(a, "sleep 62"), 30_000);
    const [watchdog] = await pidsOn(a, WATCHDOG_ARG);
    const [sleeper] = await pidsOn(a, "sleep 62");
    expect(watchdog).toBeDefined();
    // Its own session: a Ctrl-Z at the worker's terminal stops the worker's group, not the watchdog.
    expect(sessionOf(watchdog!)).toBe(watchdog!);
    process.kill(wa.outerPid, "SIGSTOP");
    await Bun.sleep(1500); // well within the guard (3.5 s)
    process.kill(wa.outerPid, "SIGCONT");
    await Bun.sleep(4000); // past the guard, had the renewals not resumed
    expect(await pidsOn(a, "sleep 62")).toEqual([sleeper!]);
    expect(wa.stderr()).not.toContain("watchdog of worker");
    process.kill(wa.outerPid, "SIGKILL");
    await waitFor(
      "the watchdog to end with its worker",
      () => stateOf(watchdog!) === null || stateOf(watchdog!) === "Z",
      30_000,
    );
  }, 120_000);
});
