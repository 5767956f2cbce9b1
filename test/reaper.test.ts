/**
 * The reaper (issue 3, test c; SPEC §4 "Reaping", "Orphans"): a stale heartbeat
 * alone never reaps — the worker must be confirmed dead. A SIGSTOPped worker is
 * alive, however stale; once SIGKILLed it is reaped, and the orphaned process
 * group of its job is killed before the job is requeued. With the test knobs.
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { add } from "./support/jobs.ts";
import { groupMembers, killWorkerAndWatchdog, procState, startWorker, stopProcessesOf } from "./support/processes.ts";
import { forgetAttemptGroups } from "./support/queue-fixtures.ts";
import { FAST_KNOBS, ON_POSTGRES, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue({ teardown: stopProcessesOf });

const THRESHOLD = Number(FAST_KNOBS.SPOOLCTL_TEST_REAP_THRESHOLD);

test("a SIGSTOPped worker is not reaped while it lives; after SIGKILL it is, and its orphan dies before the requeue", async () => {
  // The job ticks into a file and ignores SIGTERM (inherited by its children), so
  // killing its group takes the full grace and a SIGKILL: were the job requeued
  // before its orphan is dead, the test would see the two at once for 5 s.
  const tick = `${q.dir}/tick`;
  // (It ends with the test's folder: a re-run the test leaves behind cannot outlive it.)
  const id = await add(q, "-c", `trap '' TERM; while [ -d '${q.dir}' ]; do date +%s.%N >> '${tick}'; sleep 0.05; done`);
  const a = startWorker(q, ["--worker-id", "A"], { env: FAST_KNOBS });
  const pgid = await waitFor("the job to run", async () => (await q.attempt(id))?.pgid as number | undefined, 30000);
  await waitFor("the job to tick", () => existsSync(tick) && readFileSync(tick, "utf8").length > 0);

  a.proc.kill("SIGSTOP");
  await waitFor("worker A to be stopped", () => procState(a.pid) === "T");
  const b = startWorker(q, ["--worker-id", "B"], { env: FAST_KNOBS });
  await waitFor("worker B to register", () => q.registered("B"));
  await waitFor(
    "the job's heartbeat to go stale",
    async () => Date.now() / 1000 - (await q.job(id))!.heartbeat_at! > THRESHOLD * 1.5,
    30000,
  );
  // Proving a non-event: B runs its reaper every heartbeat (0.2 s) all this time.
  await Bun.sleep(THRESHOLD * 3000);
  expect(Date.now() / 1000 - (await q.job(id))!.heartbeat_at!).toBeGreaterThan(THRESHOLD * 3);
  const held = (await q.job(id))!;
  expect({
    state: held.state,
    locked_by: held.locked_by,
    crashes: held.crashes,
    attempt: (await q.attempt(id))!.state,
  }).toEqual({
    state: "running",
    locked_by: "A",
    crashes: 0,
    attempt: "running",
  });
  expect(await q.eventNames(id)).toEqual(["added", "claimed"]);
  expect(b.stderr()).not.toContain("reaped");
  // On one host's queue the job runs on; on a shared one (PostgreSQL) the worker's watchdog ended
  // it before the lease ran out, since a worker on another host could have reaped it
  // (docs/architecture.md "A stopped worker").
  if (ON_POSTGRES) expect(groupMembers(pgid)).toEqual([]);
  else expect(groupMembers(pgid).length).toBeGreaterThan(0);

  killWorkerAndWatchdog(a.pid);
  await a.exited;
  // Watch closely for the moment the attempt is settled: by then the orphan must be gone.
  const settled = await waitFor(
    "the attempt to be reaped",
    async () => {
      const row = (await q.attempt(id))!;
      if (row.state === "running") return null;
      const members = groupMembers(pgid); // at once: the orphan must be gone by the time the attempt is settled
      return { row, j: (await q.job(id))!, members };
    },
    30000,
    5,
  );
  expect(settled.members).toEqual([]);
  expect(settled.row.state).toBe("abandoned");
  expect(settled.row.failure_reason).toBe("worker_crash");
  expect(settled.j.state).toBe("queued");
  expect(settled.j.crashes).toBe(1);
  expect(settled.j.attempts).toBe(0); // a crash is not charged to the retry budget
  expect(settled.j.next_run_at - settled.row.finished_at!).toBeCloseTo(2, 3); // backoff 2^1
  const ticks = readFileSync(tick, "utf8").trim().split("\n").map(Number);
  expect(Math.max(...ticks)).toBeLessThan(settled.row.finished_at!); // no tick after the requeue
  expect((await q.eventNames(id)).slice(0, 3)).toEqual(["added", "claimed", "reaped"]);
  // show's TOOK of an abandoned attempt runs to the reap, and says so.
  expect((await q.run(["show", String(id)])).stdout).toMatch(/^1 +abandoned +\S+ +\S+ +\S+ until reaped /m);
  expect((await q.events(id)).filter((e) => e.event === "reaped").map((e) => ({ worker_id: e.worker_id }))).toEqual([
    { worker_id: "B" },
  ]);
  await waitFor("B's reaped line", () => b.stderr().includes("reaped"));
  expect(b.stderr()).toContain(`spoolctl: reaped job ${id} (worker pid ${a.pid} died); now queued\n`);
  // When its backoff is over, B runs it again and says why (README "Running jobs").
  await waitFor(
    "B's re-run line",
    () => b.stderr().includes(`spoolctl: job ${id} attempt 2 started in lane default again (previous: worker `),
    30000,
  );
  expect(b.stderr()).toMatch(
    new RegExp(
      `spoolctl: job ${id} attempt 2 started in lane default again \\(previous: worker A \\(pid ${a.pid}\\) [^\\n]*; 1 crash requeue \\(unlimited\\)\\): `,
    ),
  );
}, 60000);

test("a worker SIGKILLed before its first heartbeat, whose job cleared its environment (env -i): the orphan is still killed before the re-run", async () => {
  // The real window of the two-commit hot path: the group rides on the first heartbeat,
  // here 60 s away, and the job drops the attempt marker with env -i. Only its output
  // files, still its stdout and stderr, tell its processes apart.
  const pidFile = `${q.dir}/pid`;
  const id = await add(q, "-c", `echo $$ > '${pidFile}'; exec env -i /bin/sleep 60`);
  const a = startWorker(q, ["--worker-id", "A"], {
    env: { SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "60", SPOOLCTL_TEST_REAP_THRESHOLD: "1" },
  });
  const pid = await waitFor(
    "the job to exec its sleep",
    () => {
      const text = existsSync(pidFile) ? readFileSync(pidFile, "utf8").trim() : "";
      return text && readFileSync(`/proc/${text}/cmdline`, "utf8").startsWith("/bin/sleep") ? Number(text) : null;
    },
    30000,
  );
  killWorkerAndWatchdog(a.pid);
  await a.exited;
  expect((await q.attempt(id))!.pgid).toBeNull(); // died inside the window
  expect(readFileSync(`/proc/${pid}/environ`, "utf8")).not.toContain("SPOOLCTL_ATTEMPT_TOKEN");
  expect(groupMembers(pid)).toEqual([pid]); // the orphan runs on

  startWorker(q, ["--worker-id", "B"], { env: FAST_KNOBS });
  const settled = await waitFor(
    "the attempt to be reaped",
    async () => {
      const row = (await q.attempt(id))!;
      return row.state === "running" ? null : { row, members: groupMembers(pid) };
    },
    30000,
    5,
  );
  expect(settled.members).toEqual([]);
  expect(settled.row.state).toBe("abandoned");
  expect((await q.job(id))!.crashes).toBe(1);
}, 60000);

test.skipIf(ON_POSTGRES)(
  "a queue removed and made again at the same place: a new worker's orphan sweep leaves the old queue's running job alone",
  async () => {
    // The old worker still runs its job, writing to output/1.1.stdout of a spool now deleted;
    // the new queue's job 1 has the same file name. Only the marker says whose the job is.
    const pidFile = `${q.dir}/pid`;
    await add(q, "-c", `echo $$ > '${pidFile}'; exec sleep 60`);
    const a = startWorker(q, ["--worker-id", "A"], { env: FAST_KNOBS });
    const pid = await waitFor(
      "the old job to run",
      () => (existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8")) || null : null),
      30000,
    );
    // A would notice its file gone at once and stop its job (docs/architecture.md "A vanished or
    // replaced file"): stopped, it cannot, while B's orphan sweep runs. (On one host a stopped worker is alive.)
    a.proc.kill("SIGSTOP");
    for (const name of ["queue.db", "queue.db-wal", "queue.db-shm", "queue.spool"])
      rmSync(`${q.dir}/${name}`, { recursive: true, force: true });
    const id = await add(q, "--", "true");
    expect(id).toBe(1);
    const b = startWorker(q, ["--worker-id", "B"], { env: FAST_KNOBS });
    await waitFor("the new queue's job to be done", async () => (await q.job(id))?.state === "done", 30000);
    expect(b.stderr()).not.toContain("orphaned");
    expect(procState(pid)).toBe("S"); // the old queue's job runs on under its live worker
    expect(a.proc.exitCode).toBeNull();
    // Resumed, A finds its file gone: it stops its own job and exits with QUEUE_REPLACED.
    a.proc.kill("SIGCONT");
    expect(await a.exited).toBe(3);
    expect(a.stderr()).toContain("QUEUE_REPLACED");
    await waitFor("the old job to be stopped by its worker", () => procState(pid) === null, 15000);
  },
  90000,
);

test("--max-crashes 0: a reaped job goes dead, and its orphan is killed", async () => {
  const id = await add(q, "--max-crashes", "0", "--", "sleep", "60");
  const a = startWorker(q, ["--worker-id", "A"], { env: FAST_KNOBS });
  const pgid = await waitFor("the job to run", async () => (await q.attempt(id))?.pgid as number | undefined, 30000);
  expect(groupMembers(pgid).length).toBeGreaterThan(0);
  killWorkerAndWatchdog(a.pid);
  await a.exited;
  expect(groupMembers(pgid).length).toBeGreaterThan(0); // the orphan outlives its worker

  const b = startWorker(q, ["--worker-id", "B"], { env: FAST_KNOBS });
  await waitFor("the job to be dead", async () => (await q.job(id))?.state === "dead", 30000);
  expect(groupMembers(pgid)).toEqual([]);
  const j = (await q.job(id))!;
  expect({ crashes: j.crashes, attempts: j.attempts, locked_by: j.locked_by }).toEqual({
    crashes: 1,
    attempts: 0,
    locked_by: null,
  });
  const row = (await q.attempt(id))!;
  expect({ state: row.state, failure_reason: row.failure_reason }).toEqual({
    state: "abandoned",
    failure_reason: "worker_crash",
  });
  expect(await q.eventNames(id)).toEqual(["added", "claimed", "reaped", "dead"]);
  await waitFor("B's reaped line", () => b.stderr().includes("reaped"));
  expect(b.stderr()).toContain(`spoolctl: reaped job ${id} (worker pid ${a.pid} died); now dead\n`);
}, 60000);

test("an orphan whose process group was never recorded (worker killed right after spawning it) is still killed before the requeue", async () => {
  // The window: the worker spawned the child but died before writing its group to
  // the attempt. Simulated by clearing the recorded group after the SIGKILL.
  const id = await add(q, "-c", "sleep 60 & sleep 60");
  const a = startWorker(q, ["--worker-id", "A"], { env: FAST_KNOBS });
  const pgid = await waitFor("the job to run", async () => (await q.attempt(id))?.pgid as number | undefined, 30000);
  await waitFor("the grandchild", () => groupMembers(pgid).length >= 2);
  killWorkerAndWatchdog(a.pid);
  await a.exited;
  await forgetAttemptGroups(q, id);
  expect(groupMembers(pgid).length).toBeGreaterThanOrEqual(2); // the orphan runs on

  startWorker(q, ["--worker-id", "B"], { env: FAST_KNOBS });
  const settled = await waitFor(
    "the attempt to be reaped",
    async () => {
      const row = (await q.attempt(id))!;
      return row.state === "running" ? null : { row, members: groupMembers(pgid) };
    },
    30000,
    5,
  );
  expect(settled.members).toEqual([]);
  expect(settled.row.state).toBe("abandoned");
  expect((await q.job(id))!.crashes).toBe(1);
}, 60000);
