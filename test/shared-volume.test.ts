/**
 * One queue shared by two PID namespaces — containers on one volume (issue 30
 * item 1; docs/architecture.md "A stopped worker", "Reaping"). Namespace B
 * cannot look at namespace A's PIDs, so it judges A's workers by their lease;
 * whatever stops A's worker (SIGKILL of the worker alone, SIGSTOP, its watchdog
 * killed first), its runs must end before that lease can expire, and a worker
 * that keeps no watchdog (a SQLite worker of the machine's first namespace) is
 * never reaped from another namespace. Hosts are `unshare --pid --uts`
 * namespaces (test/support/hosts.ts); jobs are `flock -n`-guarded
 * (test/support/guarded-jobs.ts). Both drivers (the last test SQLite only);
 * needs root and util-linux.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { WATCHDOG_ARG } from "../src/worker/watchdog.ts";
import { addGuardedJobs, overlapsIn, ticking } from "./support/guarded-jobs.ts";
import { Host, type HostProcess, hostsUsable } from "./support/hosts.ts";
import { pidsOn } from "./support/pg-hosts.ts";
import { CLI, ON_POSTGRES, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const USABLE = hostsUsable();
/** Heartbeat 0.5 s, lease 4 s: a watchdog acts after 3.5 s without a renewal. */
const KNOBS = { SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "0.5", SPOOLCTL_TEST_REAP_THRESHOLD: "4" };

const hosts: Host[] = [];
const q = useTempQueue({
  teardown: async () => {
    await Promise.all(hosts.splice(0).map((h) => h.stop()));
  },
});

async function startHost(name: string): Promise<Host> {
  const host = await Host.start(name);
  hosts.push(host);
  return host;
}

function worker(host: Host, id: string, concurrency = "2"): Promise<HostProcess> {
  return host.spawn(["bun", CLI, "work", "--worker-id", id, "--concurrency", concurrency], q.env(KNOBS), q.dir);
}

const add = (argv: string[]) => q.addJob("--max-retries", "0", "--", ...argv);

/** The state letter of process `pid` (`T`: stopped), or null when it is gone. */
function stateOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  } catch {
    return null;
  }
}

/**
 * SIGSTOPs `pids`, again until none is stopped holding the queue's write lock
 * (`kill -STOP` may land inside a SQLite write, and then nobody can write until
 * it is continued): a write of the test's own gets through. On PostgreSQL once.
 */
async function stopOutsideWrites(pids: number[]): Promise<void> {
  for (let tries = 0; tries < 10; tries++) {
    for (const pid of pids) process.kill(pid, "SIGSTOP");
    if (q.driver === "postgres") return; // the server ends a stopped worker's transaction (60 s)
    const probe = await q.run(["add", "--queue", "probe", "--json", "--", "true"], {
      env: { SPOOLCTL_LOCK_WAIT: "0" },
    });
    if (probe.code === 0) return;
    for (const pid of pids) process.kill(pid, "SIGCONT");
    await Bun.sleep(200);
  }
  throw new Error("the workers were stopped inside a write ten times in a row");
}

/**
 * Four guarded jobs run on namespace A's two workers (two each); B's worker
 * serves the queue; `stop` stops A's workers alone (not their jobs). B reaps the
 * jobs once their lease expires and runs them again. Returns the overlaps found.
 */
async function stopWorkersOnA(
  stop: (workers: HostProcess[], a: Host) => Promise<void>,
  stopped: (state: string | null) => boolean,
): Promise<{ overlaps: string[]; wa: HostProcess[]; wb: HostProcess; ids: number[] }> {
  const a = await startHost("host-a");
  const b = await startHost("host-b");
  const logs = await addGuardedJobs(add, q.dir, "a", 4);
  const wa = [await worker(a, "a1"), await worker(a, "a2")];
  await waitFor("four jobs to tick in namespace A", () => ticking(logs.ticks, "host-a") === 4, 60_000);
  const wb = await worker(b, "b1", "4");
  await waitFor("B's worker to register", () => q.registered("b1"), 30_000);
  await stop(wa, a);
  for (const w of wa) await waitFor("A's worker to be stopped", () => stopped(stateOf(w.outerPid)), 10_000);
  const said = () => `\n--- A:\n${wa.map((w) => w.stderr()).join("\n")}\n--- B:\n${wb.stderr()}`;
  await waitFor(
    "B to reap and re-run the four jobs",
    async () => {
      for (const id of logs.ids) if (!["done", "dead"].includes((await q.job(id))!.state)) return false;
      return true;
    },
    150_000,
  ).catch((error) => {
    throw new Error(`${error.message}${said()}`);
  });
  await Bun.sleep(500); // A's runs, if they still ran, would tick on: time to show it
  const overlaps = overlapsIn(logs);
  if (!wb.stderr().includes(`reaped job ${logs.ids[0]}`))
    throw new Error(`B did not say it reaped job ${logs.ids[0]}${said()}`);
  return { overlaps, wa, wb, ids: logs.ids };
}

test.skipIf(!USABLE)(
  "kill -KILL of namespace A's workers alone: their watchdogs end their jobs at once; B re-runs them with no overlap",
  async () => {
    const { overlaps, wa, ids } = await stopWorkersOnA(
      async (workers) => {
        for (const w of workers) process.kill(w.outerPid, "SIGKILL");
      },
      (state) => state === null || state === "Z",
    );
    console.log(`SIGKILL: ${overlaps.length} overlap(s)\n${overlaps.join("\n")}`);
    expect(overlaps).toEqual([]);
    for (const id of ids) expect((await q.job(id))!.state).toBe("done");
    await waitFor("the watchdogs' lines", () =>
      ["a1", "a2"].every((id, i) =>
        new RegExp(`watchdog of worker ${id}: the worker \\(pid \\d+\\) died; ending its 2 running jobs`).test(
          wa[i]!.stderr(),
        ),
      ),
    );
  },
  240_000,
);

test.skipIf(!USABLE)(
  "kill -STOP of namespace A's workers: their watchdogs end their jobs before the lease expires; B re-runs them with no overlap",
  async () => {
    const { overlaps, wa, ids } = await stopWorkersOnA(
      (workers) => stopOutsideWrites(workers.map((w) => w.outerPid)),
      (state) => state === "T",
    );
    console.log(`SIGSTOP: ${overlaps.length} overlap(s)\n${overlaps.join("\n")}`);
    expect(overlaps).toEqual([]);
    for (const id of ids) expect((await q.job(id))!.state).toBe("done");
    for (const [i, id] of ["a1", "a2"].entries())
      expect(wa[i]!.stderr()).toMatch(
        new RegExp(
          `watchdog of worker ${id}: no lease renewal for .*the worker is stopped .*ending its 2 running jobs`,
        ),
      );
    for (const w of wa) process.kill(w.outerPid, "SIGCONT");
  },
  240_000,
);

test.skipIf(!USABLE)(
  "kill -KILL of A's watchdogs, then kill -STOP of A's workers: new watchdogs end their jobs; no overlap",
  async () => {
    const { overlaps, wa, ids } = await stopWorkersOnA(
      async (workers, a) => {
        const watchdogs = await pidsOn(a, WATCHDOG_ARG);
        expect(watchdogs).toHaveLength(2);
        for (const pid of watchdogs) process.kill(pid, "SIGKILL");
        // Stopped as soon as they have seen their watchdogs die: before their next renewal.
        await waitFor(
          "the workers to see their watchdogs die",
          () => workers.every((w) => w.stderr().includes("watchdog exited")),
          30_000,
          5,
        ).catch((error) => {
          throw new Error(
            `${error.message} (killed ${watchdogs.join(", ")})\n${workers.map((w) => w.stderr()).join("\n")}`,
          );
        });
        await stopOutsideWrites(workers.map((w) => w.outerPid));
      },
      (state) => state === "T",
    );
    console.log(`watchdog SIGKILL + SIGSTOP: ${overlaps.length} overlap(s)\n${overlaps.join("\n")}`);
    expect(overlaps).toEqual([]);
    for (const id of ids) expect((await q.job(id))!.state).toBe("done");
    for (const w of wa)
      expect(w.stderr()).toMatch(/watchdog of worker a\d: no lease renewal for .*ending its 2 running jobs/);
    for (const w of wa) process.kill(w.outerPid, "SIGCONT");
  },
  240_000,
);

/** PIDs of the watchdogs whose parent is `pid`. */
function watchdogsOf(pid: number): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, "utf8");
        return (
          Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid &&
          readFileSync(`/proc/${name}/cmdline`, "utf8").includes(WATCHDOG_ARG)
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}

test.skipIf(!USABLE || ON_POSTGRES)(
  "a SQLite worker outside any container keeps no watchdog, and another namespace never reaps its jobs by lease; a worker beside it does",
  async () => {
    const b = await startHost("host-b");
    // Attempt 1 runs for five minutes; a re-run ends in half a second.
    const logs = await addGuardedJobs(
      add,
      q.dir,
      "h",
      4,
      'case "$SPOOLCTL_ATTEMPT_TOKEN" in *-1) true;; *) false;; esac',
    );
    const h1 = q.spawn(["work", "--worker-id", "h1", "--concurrency", "4"], { env: KNOBS });
    await waitFor("four jobs to tick outside any container", () => ticking(logs.ticks, readHost()) === 4, 60_000);
    const wb = await worker(b, "b1", "4");
    await waitFor("B's worker to register", () => q.registered("b1"), 30_000);
    expect(watchdogsOf(h1.pid)).toEqual([]); // light: its PID is looked at instead
    h1.kill("SIGKILL");
    await h1.exited;
    // A non-event: B looks every 0.5 s, and the lease (4 s) runs out well within this.
    await Bun.sleep(12_000);
    for (const id of logs.ids)
      expect({ state: (await q.job(id))!.state, by: (await q.job(id))!.locked_by }).toEqual({
        state: "running",
        by: "h1",
      });
    expect(wb.stderr()).not.toContain("reaped");
    expect(overlapsIn(logs)).toEqual([]);
    // Seen from the container, the views say who will reap them (not "the next worker").
    const status = JSON.parse((await b.run(["bun", CLI, "status", "--json"], q.env(KNOBS))).stdout);
    expect(status.data.stranded).toHaveLength(4);
    for (const h of status.data.stranded) {
      expect(h.worker_state).toBe("lease_expired");
      expect(h.fate).toContain("kept no watchdog");
    }
    // Its id cannot be taken from the container either: its lease proves nothing.
    const taken = await b.run(["bun", CLI, "work", "--worker-id", "h1", "--drain", "--json"], q.env(KNOBS));
    expect(taken.code).toBe(5);
    expect(JSON.parse(taken.stdout).errors[0]).toMatchObject({ code: "CONFLICT" });
    expect(JSON.parse(taken.stdout).errors[0].message).toContain("kept no watchdog");
    expect(overlapsIn(logs)).toEqual([]);
    // A worker where h1's PID can be looked at reaps the jobs at once, ending what h1 left running first.
    const h2 = q.spawn(["work", "--worker-id", "h2", "--concurrency", "4"], { env: KNOBS });
    try {
      await waitFor(
        "the jobs to be reaped and run again",
        async () => {
          for (const id of logs.ids) if ((await q.job(id))!.state !== "done") return false;
          return true;
        },
        90_000,
      );
    } finally {
      h2.kill("SIGKILL");
    }
    const overlaps = overlapsIn(logs);
    console.log(`SIGKILL of a worker outside any container: ${overlaps.length} overlap(s)\n${overlaps.join("\n")}`);
    expect(overlaps).toEqual([]);
  },
  240_000,
);

/** This machine's host name, as the jobs outside any namespace log it. */
function readHost(): string {
  return readFileSync("/proc/sys/kernel/hostname", "utf8").trim();
}
