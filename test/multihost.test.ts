/**
 * Many machines, one queue (docs/architecture.md "Reaping", "Orphans",
 * "Fencing", "Heartbeat and lease"): workers on separate "hosts" — PID and UTS
 * namespaces with their own host names and colliding PID numbers
 * (test/support/hosts.ts) — share one real PostgreSQL database. Needs root
 * and util-linux; skipped (visibly) where namespaces cannot be made.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { openQueue } from "../src/store/index.ts";
import type { Store } from "../src/store/store.ts";
import { Host, type HostProcess, hostsUsable } from "./support/hosts.ts";
import { cliJson, hostEnv, runsOn } from "./support/pg-hosts.ts";
import { type PgServer, startPgServer } from "./support/pg-server.ts";
import { killWorkerAndWatchdog } from "./support/processes.ts";
import { CLI } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const USABLE = hostsUsable();
/** Heartbeat 0.2 s, lease (reap threshold) 1 s: for the tests that wait for a lease to expire. */
const SHORT_LEASE = { SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "0.2", SPOOLCTL_TEST_REAP_THRESHOLD: "1" };
/**
 * Heartbeat 0.5 s, lease 8 s: for the tests where no worker dies. A lease must
 * outlast the longest stall of a live worker, and on a loaded 2-core machine
 * running eight workers a 1 s lease expires under live workers.
 */
const LONG_LEASE = { SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "0.5", SPOOLCTL_TEST_REAP_THRESHOLD: "8" };
let KNOBS: Record<string, string> = SHORT_LEASE;

let server: PgServer;
let dir: string;
let dbCount = 0;
let url: string;
let store: Store;
const hosts: Host[] = [];

/** The environment of a process on host `name` (its own spool folder: output files stay on their host). */
function envFor(name: string): Record<string, string> {
  return hostEnv(KNOBS, url, dir, name);
}

/** The CLI from the test process (a third host), parsed `--json` envelope. */
function cli(...args: string[]): Promise<any> {
  return cliJson(envFor("client"), ...args);
}

async function addJob(...args: string[]): Promise<number> {
  const env = await cli("add", ...args);
  if (!env.ok) throw new Error(JSON.stringify(env));
  return env.data.job_id;
}

async function job(id: number) {
  return (await store.read(async (tx) => tx.getJob(id)))!;
}

/** Removes the output files of `id`'s attempts: the hosts of these tests share one file system, other machines would not. */
async function removeAttemptFiles(id: number): Promise<void> {
  for (const a of await store.read(async (tx) => tx.attemptsOf(id)))
    for (const path of [a.stdout_path, a.stderr_path]) rmSync(path);
}

async function startHost(name: string): Promise<Host> {
  const host = await Host.start(name);
  hosts.push(host);
  return host;
}

function worker(host: Host, ...args: string[]): Promise<HostProcess> {
  return host.spawn(["bun", CLI, "work", ...args], envFor(host.name));
}

beforeAll(async () => {
  if (!USABLE) return;
  dir = mkdtempSync(join(tmpdir(), "spoolctl-multihost-"));
  server = await startPgServer();
}, 120_000);

afterAll(async () => {
  if (!USABLE) return;
  await stopHosts(); // a test cut short before its afterEach: its hosts go too
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

// A fresh database per test, and every host torn down after it.
async function freshQueue(knobs = SHORT_LEASE): Promise<void> {
  KNOBS = knobs;
  url = await server.createDatabase(`multihost_${++dbCount}`);
  store = await openQueue({ dbPath: url, spoolDir: join(dir, "client.spool"), source: "flag" }, { create: true });
}

/** Tears down every host started so far; Host.stop never throws, so one host's trouble leaves none behind. */
async function stopHosts(): Promise<void> {
  await Promise.all(hosts.splice(0).map((host) => host.stop()));
}

afterEach(async () => {
  if (!USABLE) return;
  await stopHosts();
  await store?.close();
});

describe.skipIf(!USABLE)("many hosts, one PostgreSQL queue", () => {
  test("a worker SIGKILLed on host A is reaped by host B's worker after its lease; the next worker on host A kills the orphan", async () => {
    await freshQueue();
    const a = await startHost("host-a");
    const b = await startHost("host-b");
    const id = await addJob("--max-crashes", "0", "--", "sleep", "61");
    const wa = await worker(a, "--worker-id", "a1");
    await waitFor("the job to run on host A", async () => (await job(id)).locked_by === "a1", 30_000);
    await waitFor("the child to run on host A", () => runsOn(a, "sleep 61"));
    // Worker and watchdog die together (the watchdog alone would end the job at once): the orphan rules' case.
    killWorkerAndWatchdog(wa.outerPid);

    const wb = await worker(b, "--worker-id", "b1");
    // B cannot see A's PIDs: the expired lease alone is the verdict.
    await waitFor("host B to reap the job", async () => (await job(id)).state === "dead", 30_000);
    const events = await store.read(async (tx) => tx.eventsOf(id));
    expect(events.map((e) => e.event)).toEqual(["added", "claimed", "reaped", "dead"]);
    expect(events[2]!.worker_id).toBe("b1");
    const attempt = (await store.read(async (tx) => tx.getAttempt(id, 1)))!;
    expect(attempt.state).toBe("abandoned");
    expect(attempt.failure_reason).toBe("worker_crash");
    await waitFor(
      "B's log line",
      () => wb.stderr().includes(`reaped job ${id}`) && wb.stderr().includes("on host-a lost its lease"),
    );
    // The orphan still runs on A: nobody there has looked yet.
    expect(await runsOn(a, "sleep 61")).toBe(true);

    const wa2 = await worker(a, "--worker-id", "a2");
    await waitFor("the orphan on host A to be killed", async () => !(await runsOn(a, "sleep 61")), 30_000);
    await waitFor("A's log line", () => wa2.stderr().includes("killed 1 orphaned process group"));
    expect(wa2.stderr()).toContain(`job ${id} attempt 1`);
  }, 150_000);

  test("a drain on host B held open by host A's dead worker says what it waits for, then reaps the job and runs it", async () => {
    await freshQueue({ SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "0.5", SPOOLCTL_TEST_REAP_THRESHOLD: "5" });
    const a = await startHost("host-a");
    const b = await startHost("host-b");
    const id = await addJob("--", "sh", "-c", '[ "$(hostname)" = host-b ] || exec sleep 64');
    const wa = await worker(a, "--worker-id", "a1");
    await waitFor("the child to run on host A", () => runsOn(a, "sleep 64"), 30_000);
    process.kill(wa.outerPid, "SIGKILL");
    const wb = await worker(b, "--drain", "--worker-id", "b1");
    expect(await wb.proc.exited).toBe(0);
    const lines = wb.stderr().split("\n");
    const waiting = lines.findIndex((l) =>
      l.startsWith(
        `spoolctl: drain of lane default waits for running jobs of other workers: job ${id} on worker a1 (host-a), silent `,
      ),
    );
    const reaped = lines.findIndex((l) => l.includes(`reaped job ${id}`));
    expect(waiting).toBeGreaterThanOrEqual(0);
    expect(lines[waiting]).toEndWith("(a job whose worker stays silent 5s is reaped and run here)");
    expect(reaped).toBeGreaterThan(waiting);
    expect((await job(id)).state).toBe("done");
  }, 150_000);

  test("a worker SIGKILLed on host A: another host's status, list, workers, cancel and stop say its lease expired and the next worker reaps the job", async () => {
    await freshQueue();
    const a = await startHost("host-a");
    const id = await addJob("--", "sleep", "63");
    const wa = await worker(a, "--worker-id", "a1");
    await waitFor("the job to run on host A", () => runsOn(a, "sleep 63"), 30_000);
    process.kill(wa.outerPid, "SIGKILL");
    // From here (another host) A's PIDs cannot be judged: the lease decides once it has run out.
    await waitFor(
      "the lease to expire in status",
      async () => (await cli("status")).data.stranded[0]?.worker_state === "lease_expired",
      30_000,
    );
    const stranded = (await cli("status")).data.stranded[0];
    expect(stranded).toMatchObject({
      job_id: id,
      worker_id: "a1",
      worker_host: "host-a",
      fate: expect.stringContaining("reaped by the next worker"),
    });
    expect((await cli("list")).data.jobs[0].worker_health).toMatchObject({ worker_state: "lease_expired" });
    // workers judges the row as the reaper would: lease expired by the database's clock, so `lease_expired`, not `stale` for ever.
    const workers = await cli("workers");
    expect(workers.data.workers.map((w: any) => [w.worker_id, w.status, w.running_jobs])).toEqual([
      ["a1", "lease_expired", [id]],
    ]);
    expect((await cli("status")).data.live_workers).toBe(0);
    const text = Bun.spawnSync(["bun", CLI, "workers"], { env: envFor("client") }).stdout.toString();
    expect(text).toMatch(/^a1 +\d+ +host-a +default +lease_expired /m);
    const cancel = await cli("cancel", String(id), "--running", "--yes");
    expect(cancel.data).toMatchObject({ job_id: id, state: "running" }); // not ours to kill: it runs on host A
    expect(cancel.warnings[0]).toMatchObject({
      code: "KILL_ASYNC",
      message: expect.stringContaining("the cancel is honoured when the job is reaped"),
    });
    // stop --wait does not wait for a lease_expired worker: it will never answer.
    const stop = await cli("stop", "--wait", "--timeout", "20");
    expect([stop.ok, stop.errors, stop.data.requested]).toEqual([true, [], []]); // not even asked: it will never answer
  }, 150_000);

  test("a worker SIGKILLed on host A before its first heartbeat, whose job cleared its environment (env -i): the next worker on host A still kills the orphan", async () => {
    await freshQueue();
    const a = await startHost("host-a");
    const b = await startHost("host-b");
    const id = await addJob("--max-crashes", "0", "--", "sh", "-c", "exec env -i sleep 62");
    // The process group rides on the first heartbeat, here a minute away: A dies before it.
    const wa = await a.spawn(["bun", CLI, "work", "--worker-id", "a1"], {
      ...envFor(a.name),
      SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "60",
    });
    await waitFor("the child to run on host A", () => runsOn(a, "sleep 62"), 30_000);
    killWorkerAndWatchdog(wa.outerPid);
    expect((await store.read(async (tx) => tx.getAttempt(id, 1)))!.pgid).toBeNull();

    await worker(b, "--worker-id", "b1");
    await waitFor("host B to reap the job", async () => (await job(id)).state === "dead", 30_000);
    expect(await runsOn(a, "sleep 62")).toBe(true); // no marker left in its environment

    const wa2 = await worker(a, "--worker-id", "a2");
    await waitFor("the orphan on host A to be killed", async () => !(await runsOn(a, "sleep 62")), 30_000);
    await waitFor("A's log line", () => wa2.stderr().includes("killed 1 orphaned process group"));
    expect(wa2.stderr()).toContain(`job ${id} attempt 1`);
  }, 150_000);

  test("a SIGSTOPped worker past its lease changes nothing when it resumes, kills its child and says so", async () => {
    await freshQueue();
    const a = await startHost("host-a");
    const b = await startHost("host-b");
    // On host A the job would run for a minute; wherever else it runs, it ends at once.
    const id = await addJob(
      "--",
      "sh",
      "-c",
      'if [ "$(hostname)" = host-a ]; then exec sleep 62; else echo ran on $(hostname); fi',
    );
    const wa = await worker(a, "--worker-id", "a1");
    await waitFor("the job to run on host A", () => runsOn(a, "sleep 62"), 30_000);
    process.kill(wa.outerPid, "SIGSTOP");

    const wb = await worker(b, "--worker-id", "b1");
    // A stop that lands inside A's transaction holds the job's row until the server ends it (20 s), then B reaps.
    await waitFor("host B to reap and re-run the job", async () => (await job(id)).state === "done", 60_000);
    expect((await job(id)).last_attempt_no).toBe(2);

    process.kill(wa.outerPid, "SIGCONT");
    await waitFor("A's child to be killed", async () => !(await runsOn(a, "sleep 62")), 30_000);
    await waitFor(
      "A to say it lost the job",
      () => wa.stderr().includes(`job ${id} attempt 1 ended after the job was taken from this worker`),
      30_000,
    );
    // The late result changed nothing: attempt 1 stays abandoned, the job done by B's attempt 2.
    const attempts = await store.read(async (tx) => tx.attemptsOf(id));
    expect(attempts.map((x) => [x.attempt_no, x.state, x.worker_id])).toEqual([
      [1, "abandoned", "a1"],
      [2, "succeeded", "b1"],
    ]);
    expect((await job(id)).state).toBe("done");
    expect(wb.stderr()).toContain(`reaped job ${id}`);
  }, 150_000);

  test("output of a job run on another host is read through the database (output, --raw, feedback)", async () => {
    await freshQueue();
    const b = await startHost("host-b");
    const id = await addJob("--", "sh", "-c", "echo out-from-$(hostname); echo err-from-$(hostname) >&2");
    const wb = await worker(b, "--drain");
    expect(await wb.proc.exited).toBe(0);
    expect((await job(id)).state).toBe("done");
    // The hosts share this machine's files: remove the attempt's, as another machine would not have them.
    await removeAttemptFiles(id);
    const out = await cli("output", String(id));
    expect(out.data.attempts[0].stdout.text).toBe("out-from-host-b\n");
    expect(out.data.attempts[0].stderr.text).toBe("err-from-host-b\n");
    const raw = Bun.spawnSync(["bun", CLI, "output", String(id), "--stream", "stdout", "--raw"], {
      env: envFor("client"),
    });
    expect(raw.stdout.toString()).toBe("out-from-host-b\n");
    const feedback = await cli("feedback", String(id));
    expect(feedback.data.streams.stderr.tail).toBe("err-from-host-b\n");
    const show = await cli("show", String(id));
    expect(show.data.attempts[0].host).toBe("host-b");
  }, 60_000);

  test("output past one shipped chunk and past output_cap: the cap's bytes arrive in order, then the truncation mark", async () => {
    await freshQueue();
    const b = await startHost("host-b");
    expect((await cli("config", "set", "output_cap", "300000")).ok).toBe(true);
    // 400,000 bytes of stdout (over the 256 KiB chunk and the cap), 200,000 of stderr (over one chunk, under the cap).
    const id = await addJob("--", "sh", "-c", "seq 1 100000 | head -c 400000; seq 1 100000 | head -c 200000 >&2");
    const wb = await worker(b, "--drain");
    expect(await wb.proc.exited).toBe(0);
    const expected = (n: number) => Bun.spawnSync(["sh", "-c", `seq 1 100000 | head -c ${n}`]).stdout.toString();
    await removeAttemptFiles(id); // the shipped copy, as another machine reads it
    const out = await cli("output", String(id));
    expect(out.data.attempts[0].stdout.text).toBe(
      `${expected(300000)}\n[spoolctl: output truncated at 300000 bytes (the output_cap setting)]\n`,
    );
    expect(out.data.attempts[0].stderr.text).toBe(expected(200000));
  }, 60_000);

  test("8 workers on 2 hosts drain 2,000 jobs, each run exactly once", async () => {
    await freshQueue(LONG_LEASE);
    const a = await startHost("host-a");
    const b = await startHost("host-b");
    const lines = Array.from({ length: 2000 }, (_, i) =>
      JSON.stringify({ argv: ["true"], tags: { n: String(i) } }),
    ).join("\n");
    const file = join(dir, "jobs.ndjson");
    writeFileSync(file, `${lines}\n`);
    expect((await cli("add", "--from", file)).ok).toBe(true);
    const workers: HostProcess[] = [];
    for (let i = 0; i < 4; i++)
      workers.push(
        await worker(a, "--drain", "--worker-id", `a${i}`),
        await worker(b, "--drain", "--worker-id", `b${i}`),
      );
    for (const w of workers) expect(await w.proc.exited).toBe(0);
    const sql = new SQL(url, { max: 1 });
    try {
      const [counts] =
        await sql`SELECT count(*)::int AS jobs, count(*) FILTER (WHERE state = 'done')::int AS done, max(last_attempt_no)::int AS max_attempt FROM jobs`;
      expect(counts).toEqual({ jobs: 2000, done: 2000, max_attempt: 1 });
      const [claims] =
        await sql`SELECT count(*)::int AS n, count(DISTINCT job_id)::int AS jobs FROM job_events WHERE event = 'claimed'`;
      expect(claims).toEqual({ n: 2000, jobs: 2000 });
      const byHost =
        await sql`SELECT w.host, count(*)::int AS n FROM attempts a JOIN workers w ON w.worker_id = a.worker_id GROUP BY w.host ORDER BY w.host`;
      expect(byHost.map((r: any) => r.host)).toEqual(["host-a", "host-b"]);
    } finally {
      await sql.close();
    }
  }, 240_000);

  test("connections cut mid-claim and mid-record (pg_terminate_backend, again and again): nothing lost, nothing run twice", async () => {
    await freshQueue(LONG_LEASE);
    const a = await startHost("host-a");
    const b = await startHost("host-b");
    const runs = join(dir, "runs.log");
    writeFileSync(runs, "");
    const lines = Array.from({ length: 150 }, (_, i) =>
      JSON.stringify({ argv: ["sh", "-c", `echo ${i} >> ${runs}`] }),
    ).join("\n");
    writeFileSync(join(dir, "cut.ndjson"), `${lines}\n`);
    expect((await cli("add", "--from", join(dir, "cut.ndjson"))).ok).toBe(true);
    const admin = new SQL(server.url("postgres"), { max: 1 });
    const dbName = new URL(url).pathname.slice(1);
    let cutting = true;
    let cuts = 0;
    // Every worker connection is cut every 250 ms, 20 rounds: claims and records are cut mid-way many times.
    const cutter = (async () => {
      for (let round = 0; cutting && round < 20; round++) {
        await Bun.sleep(250); // the cutter's own rhythm, not a wait for a state
        const killed =
          await admin`SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = ${dbName} AND pid <> pg_backend_pid() AND backend_type = 'client backend'`;
        cuts += killed[0].n;
      }
    })();
    const workers = [
      await worker(a, "--drain", "--concurrency", "2"),
      await worker(b, "--drain", "--concurrency", "2"),
    ];
    try {
      for (const w of workers) await w.proc.exited;
    } finally {
      cutting = false;
      await cutter;
      await admin.close();
    }
    expect(cuts).toBeGreaterThan(0);
    if (workers.some((w) => w.proc.exitCode !== 0)) throw new Error(workers.map((w) => w.stderr()).join("\n---\n"));
    // Every job ran exactly once and is done (a lost commit answer is given back, not run again).
    const ran = (await Bun.file(runs).text())
      .trim()
      .split("\n")
      .map(Number)
      .sort((x, y) => x - y);
    expect(ran).toEqual(Array.from({ length: 150 }, (_, i) => i));
    const status = await cli("status");
    expect(status.data.counts.done).toBe(150);
  }, 240_000);

  test("the server restarted under load: the workers ride it out and finish every job once", async () => {
    await freshQueue(LONG_LEASE);
    const a = await startHost("host-a");
    const b = await startHost("host-b");
    const runs = join(dir, "restart-runs.log");
    writeFileSync(runs, "");
    const lines = Array.from({ length: 200 }, (_, i) =>
      JSON.stringify({ argv: ["sh", "-c", `echo ${i} >> ${runs}; sleep 0.05`] }),
    ).join("\n");
    writeFileSync(join(dir, "restart.ndjson"), `${lines}\n`);
    expect((await cli("add", "--from", join(dir, "restart.ndjson"))).ok).toBe(true);
    const workers = [await worker(a, "--drain"), await worker(b, "--drain")];
    await waitFor("some jobs to be done", async () => (await Bun.file(runs).text()).split("\n").length > 20, 60_000);
    await store.close();
    await server.restart("fast");
    // The restart must land mid-drain, or the test proves nothing. Whether a worker logs
    // "will retry" depends on whether it had a statement in flight at that moment (an idle
    // connection is re-opened silently), so the proof is the count of runs, not the log.
    const ranBeforeRestart = (await Bun.file(runs).text()).trim().split("\n").length;
    expect(ranBeforeRestart).toBeLessThan(200);
    store = await openQueue({ dbPath: url, spoolDir: join(dir, "client.spool"), source: "flag" }, { create: true });
    for (const w of workers) await w.proc.exited;
    if (workers.some((w) => w.proc.exitCode !== 0)) throw new Error(workers.map((w) => w.stderr()).join("\n---\n"));
    const ran = (await Bun.file(runs).text())
      .trim()
      .split("\n")
      .map(Number)
      .sort((x, y) => x - y);
    expect(ran).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect((await cli("status")).data.counts.done).toBe(200);
  }, 240_000);
});
