/**
 * Chaos (issue 3, test b; SPEC §4 "Reaping", "Orphans"): workers running jobs are SIGKILLed
 * at random moments (seeded RNG; the seed is printed, CHAOS_SEED=N replays it)
 * while 200 jobs run, and replaced by new workers. Every job reaches `done`,
 * every job ran at least once, no two runs of one job overlapped — orphans
 * included — and the crash counts match the kills that hit a job.
 *
 * How overlap is judged: each run appends `start`/`end` lines under a lock
 * (see RUN_LOGGER), so the log's order is the order of events. A run that
 * logged its end is over at that line. A run killed by a signal logs no end; it
 * must be an attempt the reaper abandoned after killing its process group, so
 * it is over at that attempt's `finished_at` (written after the kill), and the
 * next run must start after that.
 */
import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { addMany } from "./support/jobs.ts";
import { type BgProc, startWorker, stopProcessesOf } from "./support/processes.ts";
import { parseRunLog, RUN_LOGGER, runsByJob } from "./support/run-log.ts";
import { ON_POSTGRES, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue({ teardown: stopProcessesOf });

/** mulberry32: a small seeded PRNG, uniform in [0, 1). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const JOBS = 200;
const WORKERS = 4;
const CONCURRENCY = 2;
/**
 * Every 16th job runs long, so that its run outlives a killed worker's reaping:
 * orphans get killed. Long jobs have priority 1 and become due one by one
 * (LONG_SPACING apart), so a reaped long job is claimed again as soon as its
 * short backoff is over while short jobs churn through the other slots: were its
 * orphan left alive, the two runs would overlap and the log would show it.
 */
const LONG_SECONDS = 3;
const LONG_SPACING = 0.6;
const isLong = (id: number) => id % 16 === 8;
/**
 * A 0.1 s heartbeat records a run's process group soon after its spawn. The lease: 0.5 s on SQLite,
 * where a job is reaped only once its worker is confirmed dead and nobody stops a job for a late
 * renewal. On PostgreSQL a worker whose renewal is late past its lease's margin ends its jobs itself
 * (docs/architecture.md "Heartbeat and lease", "A stopped worker"), and on a loaded 2-core machine
 * renewals are late by more than 0.4 s again and again: with that lease no 3 s job would ever finish.
 * Its workers' deaths are certain on this host, so they are reaped at once whatever the lease.
 */
const KNOBS = {
  SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "0.1",
  SPOOLCTL_TEST_REAP_THRESHOLD: ON_POSTGRES ? "5" : "0.5",
};
const MIN_KILLS = 8;
const MAX_KILLS = 14;

interface Kill {
  workerId: string;
  at: number;
  /** Jobs the worker was running when it died (frozen in the database: a dead worker writes nothing). */
  runningJobs: number[];
}

test(`SIGKILLed workers under ${JOBS} jobs: all done, no overlapping runs, crash counts match the kills`, async () => {
  const seed = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  console.log(`chaos seed ${seed} (replay: CHAOS_SEED=${seed} bun test test/chaos.test.ts)`);
  const random = rng(seed);

  const script = `${q.dir}/job.sh`;
  const log = `${q.dir}/runs.log`;
  const lock = `${q.dir}/runs.lock`;
  writeFileSync(script, RUN_LOGGER);
  writeFileSync(log, "");
  const specs = Array.from({ length: JOBS }, (_, i) => {
    const id = i + 1;
    const argv = ["bash", script, String(id), "", log, lock];
    if (!isLong(id)) return { argv: argv.with(3, (0.02 + random() * 0.06).toFixed(3)) };
    return {
      argv: argv.with(3, String(LONG_SECONDS)),
      priority: 1,
      after: (Math.floor(id / 16) * LONG_SPACING).toFixed(1),
    };
  });
  const ids = await addMany(q, specs);
  expect(ids.length).toBe(JOBS);
  // A short crash backoff, so a killed job is retried soon — and an orphan that
  // nobody killed would still be running when its job runs again.
  await q.setConfig("backoff_cap", "0.2");

  let next = 0;
  const live = new Map<string, BgProc>();
  const spawnWorker = () => {
    const id = `c${++next}`;
    const bg = startWorker(q, ["--concurrency", String(CONCURRENCY), "--worker-id", id], { env: KNOBS });
    live.set(id, bg);
  };
  for (let n = 0; n < WORKERS; n++) spawnWorker();

  const remaining = async () => (await q.jobs()).filter((j) => j.state !== "done").length;
  const kills: Kill[] = [];
  let freshLongHit = false;
  while ((await remaining()) > 0 && (kills.length < MIN_KILLS || (!freshLongHit && kills.length < MAX_KILLS))) {
    // A random moment (sleeping here is the randomness, not a wait for a state).
    await Bun.sleep(150 + random() * 650);
    // Workers that run a job (a new one on a loaded machine takes a while to claim one), read at once:
    // each read opens the queue (on PostgreSQL a connection), and kills must keep their pace.
    const busy = await q.read(async (tx) => {
      const up = new Set((await tx.listWorkers(1000)).filter((w) => w.stopped_at === null).map((w) => w.worker_id));
      return new Set((await tx.runningJobsByWorker()).map((r) => r.worker_id).filter((id) => up.has(id)));
    });
    const candidates = [...live.keys()].filter((id) => busy.has(id));
    if (candidates.length === 0) continue;
    const victim = candidates[Math.floor(random() * candidates.length)]!;
    const bg = live.get(victim)!;
    const at = Date.now() / 1000;
    bg.proc.kill("SIGKILL");
    await bg.exited;
    live.delete(victim);
    // What the dead worker held: attempts it never finished (still running, or already reaped).
    const held = (await q.allAttempts()).filter(
      (a) => a.worker_id === victim && (a.state === "running" || a.state === "abandoned"),
    );
    kills.push({ workerId: victim, at, runningJobs: held.map((h) => h.job_id) });
    if (held.some((h) => isLong(h.job_id) && h.started_at > at - 1)) freshLongHit = true;
    spawnWorker();
  }
  console.log(`${kills.length} kills: ${kills.map((k) => `${k.workerId}[${k.runningJobs.join(",")}]`).join(" ")}`);

  await waitFor("every job to be done", async () => (await remaining()) === 0, 120000, 100);
  for (const bg of live.values()) bg.proc.kill("SIGTERM");
  for (const [id, bg] of live) expect({ worker: id, code: await bg.exited }).toEqual({ worker: id, code: 0 });

  // --- Every job done; every attempt settled; the only failures are reaped crashes.
  const { jobs, attempts, events } = await q.snapshot();
  const countBy = <T>(rows: T[], key: (row: T) => string) =>
    rows.reduce<Record<string, number>>((acc, r) => {
      acc[key(r)] = (acc[key(r)] ?? 0) + 1;
      return acc;
    }, {});
  expect(countBy(jobs, (j) => j.state)).toEqual({ done: JOBS });
  expect(attempts.filter((a) => a.state === "running")).toEqual([]);
  // A worker whose heartbeat is late past its lease's margin (PostgreSQL, a loaded machine, these short
  // knobs) stops its own job and requeues it without charge: the one other way an attempt may end here.
  const leaseStop = (a: { state: string; error: string | null }) =>
    a.state === "canceled" && (a.error ?? "").includes("could not renew its lease");
  expect(attempts.filter((a) => a.state !== "succeeded" && a.state !== "abandoned" && !leaseStop(a))).toEqual([]);
  expect(attempts.filter((a) => a.state === "abandoned" && a.failure_reason !== "worker_crash")).toEqual([]);
  expect(jobs.filter((j) => j.attempts !== 0)).toEqual([]);

  // --- Crash counts match the kills: a worker killed while running K jobs leaves K reaped attempts.
  const abandonedBy = new Map<string, number[]>();
  for (const a of attempts.filter((a) => a.state === "abandoned"))
    abandonedBy.set(a.worker_id, [...(abandonedBy.get(a.worker_id) ?? []), a.job_id]);
  for (const ids of abandonedBy.values()) ids.sort((a, b) => a - b);
  const killed = new Set(kills.map((k) => k.workerId));
  for (const k of kills)
    expect({ worker: k.workerId, reaped: abandonedBy.get(k.workerId) ?? [] }).toEqual({
      worker: k.workerId,
      reaped: k.runningJobs,
    });
  expect([...abandonedBy.keys()].filter((w) => !killed.has(w))).toEqual([]); // no live worker was ever reaped
  const totalHit = kills.reduce((n, k) => n + k.runningJobs.length, 0);
  expect(jobs.reduce((n, j) => n + j.crashes, 0)).toBe(totalHit);
  expect(events.filter((e) => e.event === "reaped")).toHaveLength(totalHit);
  expect(
    jobs
      .filter((j) => j.crashes !== attempts.filter((a) => a.job_id === j.id && a.state === "abandoned").length)
      .map((j) => j.id),
  ).toEqual([]);
  expect(totalHit).toBeGreaterThan(0);

  // --- The run log: every job ran, its last run ended, no two runs of a job overlapped.
  const { runs, problems } = parseRunLog(readFileSync(log, "utf8"));
  expect(problems).toEqual([]);
  const byPgid = new Map(attempts.filter((a) => a.pgid !== null).map((a) => [`${a.job_id}/${a.pgid}`, a]));
  /** The attempt a run belongs to: by its recorded group, or — when its worker died before recording one — by time. */
  const attemptOfRun = (run: { job: number; pid: number; start: number }) =>
    byPgid.get(`${run.job}/${run.pid}`) ??
    attempts.find(
      (a) =>
        a.job_id === run.job &&
        a.pgid === null &&
        a.started_at <= run.start &&
        (a.finished_at === null || run.start <= a.finished_at),
    );
  const by = runsByJob(runs);
  const violations: string[] = [];
  let orphansKilled = 0;
  let unrecordedKilled = 0; // found by their open output files: the worker died before recording the group
  for (const id of ids) {
    const rs = (by.get(id) ?? []).sort((a, b) => a.startLine - b.startLine);
    if (rs.length === 0) {
      violations.push(`job ${id} never ran`);
      continue;
    }
    const last = rs[rs.length - 1]!;
    if (last.end === null) violations.push(`job ${id}: its last run (pid ${last.pid}) never ended`);
    const lastAttempt = attemptOfRun(last);
    if (lastAttempt?.state !== "succeeded")
      violations.push(
        `job ${id}: its last run (pid ${last.pid}) is attempt ${JSON.stringify(lastAttempt)}, not the succeeded one`,
      );
    for (let i = 0; i + 1 < rs.length; i++) {
      const prev = rs[i]!;
      const nextRun = rs[i + 1]!;
      if (prev.end !== null) {
        if (prev.endLine! > nextRun.startLine) {
          const history = attempts
            .filter((a) => a.job_id === id)
            .map((a) => `#${a.attempt_no} ${a.state} pgid=${a.pgid} finished=${a.finished_at}`);
          const why = byPgid.has(`${id}/${prev.pid}`)
            ? ""
            : ` — no attempt recorded pid ${prev.pid} as its process group: its worker died between spawning it and recording the group, and the reaper did not find the orphan`;
          violations.push(
            `job ${id}: run pid ${nextRun.pid} (start ${nextRun.start}) started while run pid ${prev.pid} (${prev.start}–${prev.end}) was still running; attempts: ${history.join("; ")}${why}`,
          );
        }
        continue;
      }
      // No end line: killed. The reaper kills, and abandons the attempt after the kill; or the
      // worker itself when its lease lapsed, recording the attempt once its group is gone.
      const a = attemptOfRun(prev);
      if (a && leaseStop(a) && a.finished_at !== null) {
        if (!(nextRun.start > a.finished_at))
          violations.push(
            `job ${id}: run pid ${nextRun.pid} started before its lease-stopped run pid ${prev.pid} ended`,
          );
        continue;
      }
      if (a?.state !== "abandoned" || a.finished_at === null) {
        violations.push(
          `job ${id}: run pid ${prev.pid} never ended and no abandoned attempt accounts for it (${JSON.stringify(a ?? null)})`,
        );
        continue;
      }
      orphansKilled++;
      if (a.pgid === null) unrecordedKilled++;
      if (!(nextRun.start > a.finished_at))
        violations.push(
          `job ${id}: run pid ${nextRun.pid} started at ${nextRun.start}, before run pid ${prev.pid} was reaped at ${a.finished_at}`,
        );
    }
  }
  expect(violations).toEqual([]);
  console.log(
    `${runs.length} runs for ${JOBS} jobs; ${totalHit} reaped attempts; ${orphansKilled} orphaned runs killed by the reaper (${unrecordedKilled} of them with no recorded group)`,
  );
  // A kill hit a long job early in its run, so its orphan outlived the reaping and was killed then.
  expect(freshLongHit).toBe(true);
  expect(orphansKilled).toBeGreaterThan(0);
}, 180000);
