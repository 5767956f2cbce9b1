/**
 * Chaos over a dependency graph (issue 20; docs/architecture.md
 * "Dependencies"): 150 jobs, each needing 0–3 earlier ones (with fan-in and
 * fan-out), run by 4 workers of which one is SIGKILLed every 0.5 s and
 * replaced (seeded RNG; NEEDS_CHAOS_SEED=N replays). Every job ends done (none
 * lost), and no run of a job started before its needs' successful runs ended
 * (the run log, written under flock) nor was claimed before their success
 * committed (the ledger). Runs on PostgreSQL with SPOOLCTL_TEST_DB=postgres://….
 */
import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { graphLines, ledgerViolations, randomGraph, rng, runLogViolations } from "./support/needs.ts";
import { type BgProc, startWorker, stopProcessesOf } from "./support/processes.ts";
import { parseRunLog, RUN_LOGGER } from "./support/run-log.ts";
import { ON_POSTGRES, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue({ teardown: stopProcessesOf });

const JOBS = 150;
/**
 * The lease: 5 s on PostgreSQL, where a worker whose renewal is late past its lease's margin ends its
 * jobs itself, and a loaded 2-core machine makes renewals late by more than 0.4 s again and again
 * (see test/chaos.test.ts). Kills are reaped at once whatever the lease: their deaths are certain here.
 */
const KNOBS = {
  SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "0.1",
  SPOOLCTL_TEST_REAP_THRESHOLD: ON_POSTGRES ? "5" : "0.5",
};

test(`SIGKILLed workers every 0.5 s over a ${JOBS}-job graph: all done, none started before its needs succeeded`, async () => {
  const seed = Number(process.env.NEEDS_CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  console.log(`needs chaos seed ${seed} (replay: NEEDS_CHAOS_SEED=${seed})`);
  const random = rng(seed);
  const script = `${q.dir}/job.sh`;
  const log = `${q.dir}/runs.log`;
  writeFileSync(script, RUN_LOGGER);
  writeFileSync(log, "");
  const needs = randomGraph(JOBS, random);
  // Job ids of a fresh queue are 1…N in line order; each run logs its own id.
  const sleeps = needs.map(() => (0.03 + random() * 0.12).toFixed(3));
  const r = await q.run(["add", "--from", "-", "--json"], {
    stdin: graphLines(needs, (i) => ["bash", script, String(i + 1), sleeps[i]!, log, `${q.dir}/runs.lock`]),
  });
  expect(r.code).toBe(0);
  const ids = (r.json.data.jobs as { job_id: number }[]).map((j) => j.job_id);
  expect(ids).toEqual(needs.map((_, i) => i + 1));
  await q.setConfig("backoff_cap", "0.2");

  let next = 0;
  const live = new Map<string, BgProc>();
  const spawnWorker = () => {
    const id = `k${++next}`;
    live.set(id, startWorker(q, ["--concurrency", "2", "--worker-id", id], { env: KNOBS }));
  };
  for (let n = 0; n < 4; n++) spawnWorker();
  const remaining = async () => (await q.jobs()).filter((j) => j.state !== "done").length;
  let kills = 0;
  const deadline = Date.now() + 150_000;
  while ((await remaining()) > 0 && Date.now() < deadline) {
    await Bun.sleep(500); // the chaos' own rhythm, not a wait for a state
    const victims = [...live.keys()];
    const victim = victims[Math.floor(random() * victims.length)]!;
    const bg = live.get(victim)!;
    bg.proc.kill("SIGKILL");
    await bg.exited;
    live.delete(victim);
    kills++;
    spawnWorker();
  }
  await waitFor("every job to be done", async () => (await remaining()) === 0, 120_000, 100);
  for (const bg of live.values()) bg.proc.kill("SIGTERM");
  for (const bg of live.values()) await bg.exited;

  const snap = await q.snapshot();
  expect(snap.jobs.filter((j) => j.state !== "done").map((j) => [j.id, j.state])).toEqual([]);
  const { runs, problems } = parseRunLog(readFileSync(log, "utf8"));
  expect(problems).toEqual([]);
  expect(runLogViolations(runs, needs, ids)).toEqual([]);
  expect(ledgerViolations(snap, needs, ids)).toEqual([]);
  const reaped = snap.events.filter((e) => e.event === "reaped").length;
  console.log(`${kills} kills, ${reaped} reaped attempts, ${runs.length} runs for ${JOBS} jobs (${q.driver})`);
  expect(kills).toBeGreaterThan(4);
  expect(reaped).toBeGreaterThan(0);
}, 300_000);
