/**
 * Lanes, claim order, fleet-wide slots and per-process concurrency (SPEC §4
 * "Claim order", "Lanes and slots"), with real worker processes.
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { patchJobs } from "./support/queue-fixtures.ts";
import { useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue();

const add = (...args: string[]) => q.addJob(...args);

/** Every job's state by id. */
async function states(): Promise<Record<number, string>> {
  return Object.fromEntries((await q.jobs()).map((j) => [j.id, j.state]));
}

/** Job ids in the order they were claimed. */
async function claimOrder(): Promise<number[]> {
  return (await q.allEvents()).filter((e) => e.event === "claimed").map((e) => e.job_id);
}

/**
 * A job that logs `start NAME` and `end NAME` around a short sleep, appending to
 * `log`. With `together`, it first waits (up to 10 s) until that many jobs have
 * started, so that jobs allowed to overlap do overlap, however loaded the machine.
 */
function loggingJob(log: string, name: string, seconds = 0.3, together = 0): string[] {
  const dir = `${log}.started`;
  const barrier = together
    ? `mkdir -p '${dir}'; touch '${dir}/${name}'; i=0; while [ "$(ls '${dir}' | wc -l)" -lt ${together} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; `
    : "";
  return ["-c", `echo "start ${name}" >> '${log}'; ${barrier}sleep ${seconds}; echo "end ${name}" >> '${log}'`];
}

/** The most jobs running at once according to a start/end log, checking it is well formed. */
function maxOverlap(log: string): { max: number; started: string[] } {
  const lines = readFileSync(log, "utf8").trim().split("\n");
  const running = new Set<string>();
  const started: string[] = [];
  let max = 0;
  for (const line of lines) {
    const [what, name] = line.split(" ");
    if (what === "start") {
      expect(running.has(name!)).toBe(false);
      running.add(name!);
      started.push(name!);
      max = Math.max(max, running.size);
    } else {
      expect(what).toBe("end");
      expect(running.delete(name!)).toBe(true);
    }
  }
  expect(running.size).toBe(0);
  return { max, started };
}

test("a worker with --queue X runs only lane X", async () => {
  const a1 = await add("--queue", "alpha", "--", "true");
  const b1 = await add("--queue", "beta", "--", "true");
  const d1 = await add("--", "true");
  const a2 = await add("--queue", "alpha", "--", "true");
  const r = await q.json(["work", "--queue", "alpha", "--drain"]);
  expect(r.code).toBe(0);
  expect(r.env.data.drained).toBe(true);
  expect(r.env.data.executed).toBe(2);
  expect(r.env.data.job_ids.sort()).toEqual([a1, a2]);
  expect(await states()).toEqual({ [a1]: "done", [b1]: "queued", [d1]: "queued", [a2]: "done" });

  // The default lane is "default"; lane names are case-sensitive.
  const upper = await q.json(["work", "--queue", "BETA", "--drain"]);
  expect(upper.env.data.executed).toBe(0);
  const def = await q.json(["work", "--drain"]);
  expect(def.env.data.job_ids).toEqual([d1]);
  expect((await states())[b1]).toBe("queued");
  const beta = await q.json(["work", "--queue", "beta", "--once"]);
  expect(beta.env.data.job_ids).toEqual([b1]);
  expect((await states())[b1]).toBe("done");

  // The lane is stored per job and shown by list --queue.
  const list = await q.json(["list", "--queue", "alpha"]);
  expect(list.env.data.jobs.map((j: any) => j.id).sort()).toEqual([a1, a2]);
});

test("claim order: priority DESC, then next_run_at, then id", async () => {
  const low = await add("--priority", "-5", "--", "true");
  const zeroLate = await add("--", "true");
  const highB = await add("--priority", "10", "--", "true");
  const zeroEarly = await add("--", "true");
  const highA = await add("--priority", "10", "--", "true");
  const zeroTie1 = await add("--", "true");
  const zeroTie2 = await add("--", "true");
  const top = await add("--priority", "2147483647", "--", "true");
  const bottom = await add("--priority", "-2147483648", "--", "true");
  const now = Date.now() / 1000;
  // Due times in the past, so that every job is due and only the order differs
  // (test-only shortcut: `--at` clamps a past time to now, so no verb can set these).
  await patchJobs(q, [zeroLate], { next_run_at: now - 50 });
  await patchJobs(q, [zeroEarly], { next_run_at: now - 100 });
  await patchJobs(q, [zeroTie1, zeroTie2], { next_run_at: now - 75 });
  await patchJobs(q, [highB], { next_run_at: now - 10 });
  await patchJobs(q, [highA], { next_run_at: now - 20 });
  await patchJobs(q, [low, top, bottom], { next_run_at: now - 30 });

  const r = await q.json(["work", "--drain"]);
  expect(r.code).toBe(0);
  expect(r.env.data.executed).toBe(9);
  expect(await claimOrder()).toEqual([top, highA, highB, zeroEarly, zeroTie1, zeroTie2, zeroLate, low, bottom]);
});

test("a job whose next_run_at is in the future is not claimed, whatever its priority", async () => {
  const later = await add("--priority", "100", "--after", "1h", "--", "true");
  const now1 = await add("--", "true");
  const r = await q.json(["work", "--drain"]);
  expect(r.env.data.job_ids).toEqual([now1]);
  expect((await states())[later]).toBe("queued");
  expect((await q.json(["show", String(later)])).env.data.job.scheduled).toBe(true);
});

test("--slots is a fleet-wide ceiling: two workers with --slots 1 never overlap", async () => {
  const log = join(q.dir, "log");
  const names = ["j1", "j2", "j3", "j4"];
  for (const n of names) await add("--queue", "slotted", ...loggingJob(log, n, 0.2));
  const w1 = q.spawn([
    "work",
    "--queue",
    "slotted",
    "--slots",
    "1",
    "--concurrency",
    "2",
    "--drain",
    "--json",
    "--worker-id",
    "w1",
  ]);
  const w2 = q.spawn([
    "work",
    "--queue",
    "slotted",
    "--slots",
    "1",
    "--concurrency",
    "2",
    "--drain",
    "--json",
    "--worker-id",
    "w2",
  ]);
  const [c1, c2] = await Promise.all([w1.exited, w2.exited]);
  expect(c1).toBe(0);
  expect(c2).toBe(0);
  const { max, started } = maxOverlap(log);
  expect(max).toBe(1);
  expect(started.sort()).toEqual(names);
  expect(Object.values(await states())).toEqual(["done", "done", "done", "done"]);
  // Each job ran exactly once.
  expect((await q.allAttempts()).length).toBe(4);
});

test("--slots N allows up to N at once within one worker's --concurrency", async () => {
  const log = join(q.dir, "log");
  for (const n of ["a", "b", "c", "d", "e"]) await add(...loggingJob(log, n, 0.2, 2));
  const r = await q.json(["work", "--concurrency", "3", "--slots", "2", "--drain"]);
  expect(r.code).toBe(0);
  expect(r.env.data.executed).toBe(5);
  const { max } = maxOverlap(log);
  // Both slots are used (the first two jobs wait for each other); a third is held back by the ceiling.
  expect(max).toBe(2);
});

test("--slots counts only the worker's lane", async () => {
  const release = join(q.dir, "release");
  // A long job running in another lane does not use up this lane's slot.
  await add("--queue", "other", "-c", `while [ ! -e '${release}' ]; do sleep 0.05; done`);
  const otherWorker = q.spawn(["work", "--queue", "other", "--once"]);
  try {
    await waitFor("the other lane's job to run", async () => (await q.job(1))?.state === "running");
    const mine = await add("--queue", "mine", "--", "true");
    const r = await q.json(["work", "--queue", "mine", "--slots", "1", "--drain"]);
    expect(r.env.data.job_ids).toEqual([mine]);
  } finally {
    writeFileSync(release, "");
    await otherWorker.exited;
  }
});

test("--concurrency N runs N jobs at once in one process", async () => {
  // Each job waits (up to 20 s) until all three have started: they can only
  // succeed if the worker runs them at the same time.
  const dir = q.dir;
  const job = (n: number) => [
    "-c",
    `touch '${dir}/started-${n}'; i=0; while [ ! -e '${dir}/started-1' ] || [ ! -e '${dir}/started-2' ] || [ ! -e '${dir}/started-3' ]; do i=$((i+1)); [ $i -gt 400 ] && exit 9; sleep 0.05; done`,
  ];
  for (const n of [1, 2, 3]) await add("--max-retries", "0", ...job(n));
  const r = await q.json(["work", "--concurrency", "3", "--drain"]);
  expect(r.code).toBe(0);
  expect(r.env.data.executed).toBe(3);
  expect(r.env.data.succeeded).toBe(3);
  expect(Object.values(await states())).toEqual(["done", "done", "done"]);
  const workers = new Set((await q.allAttempts()).map((a) => a.worker_id));
  expect(workers.size).toBe(1);
});

test("--concurrency N never runs more than N at once", async () => {
  const log = join(q.dir, "log");
  for (const n of ["a", "b", "c", "d", "e"]) await add(...loggingJob(log, n, 0.2, 2));
  const r = await q.json(["work", "--concurrency", "2", "--drain"]);
  expect(r.env.data.executed).toBe(5);
  expect(maxOverlap(log).max).toBe(2);
  expect(existsSync(log)).toBe(true);
});

test("the default --concurrency is 1", async () => {
  const log = join(q.dir, "log");
  for (const n of ["a", "b", "c"]) await add(...loggingJob(log, n, 0.2));
  await q.json(["work", "--drain"]);
  expect(maxOverlap(log).max).toBe(1);
});
