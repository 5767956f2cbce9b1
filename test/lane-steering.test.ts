/**
 * Lanes an operator steers, with real worker processes (docs/architecture.md
 * "Lanes and slots"; README "Lanes"): pause and resume reach a running worker
 * and survive its restart; `pause --for` ends by itself; `lane set --slots`
 * is followed by a running fleet; a worker serves several lanes, or all; `add`
 * says when no live worker serves a lane, once. SQLite by default, PostgreSQL
 * with SPOOLCTL_TEST_DB.
 */
import { beforeEach, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { gatedJob } from "./support/jobs.ts";
import { useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

let workers: { proc: Subprocess<"ignore", "pipe", "pipe">; err: string[] }[] = [];
const q = useTempQueue({
  teardown: async () => {
    for (const w of workers) if (w.proc.exitCode === null) w.proc.kill("SIGKILL");
    await Promise.all(workers.map((w) => w.proc.exited));
  },
});
beforeEach(() => {
  workers = [];
});

/** Heartbeat interval of the workers here, seconds: short, with a lease long enough that a loaded machine reaps nothing. */
const BEAT = 0.5;
const KNOBS = { SPOOLCTL_TEST_HEARTBEAT_INTERVAL: String(BEAT), SPOOLCTL_TEST_REAP_THRESHOLD: "20" };

/** Starts `spoolctl work ARGS`, collecting its stderr as it comes. */
function startWorker(...args: string[]) {
  const proc = q.spawn(["work", "--poll-interval", "0.2", ...args], { env: KNOBS });
  const w = { proc, err: [] as string[] };
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stderr) w.err.push(decoder.decode(chunk));
  })();
  workers.push(w);
  return { ...w, stderr: () => w.err.join("") };
}

/** Stops a worker with SIGTERM and waits for it to exit. */
async function stopWorker(w: { proc: Subprocess }) {
  w.proc.kill("SIGTERM");
  await w.proc.exited;
}

/** `add --json ARGS` (flags, then `--` and the command), parsed. */
async function addJson(...args: string[]) {
  const r = await q.run(["add", "--json", ...args]);
  return JSON.parse(r.stdout);
}

const stateOf = async (id: number) => (await q.job(id))?.state;
const runningIn = async (lane: string) =>
  (await q.jobs()).filter((j) => j.queue === lane && j.state === "running").map((j) => j.id);

/** Resolves once worker `id` has renewed its heartbeat `beats` more times: evidence that its loop turned meanwhile. */
async function beatsPass(workerId: string, beats = 3) {
  const first = (await q.worker(workerId))?.heartbeat_at ?? 0;
  await waitFor(
    `${beats} heartbeats of ${workerId}`,
    async () => ((await q.worker(workerId))?.heartbeat_at ?? 0) >= first + beats * BEAT,
    30_000,
  );
}

test("pause: a running worker starts no job of the lane, its running job finishes, a restart keeps the pause; resume runs them", async () => {
  const w1 = startWorker("--queue", "builds", "--concurrency", "2", "--worker-id", "w1");
  const gate = gatedJob(q, "first");
  const first = await q.addJob("--queue", "builds", "--", ...gate.argv);
  await waitFor("the first job to run", async () => (await stateOf(first)) === "running", 30_000);

  const paused = await q.json(["pause", "builds", "--reason", "freeze"]);
  expect(paused.env.ok).toBe(true);
  expect(paused.env.data).toMatchObject({ queue: "builds", paused_until: null, reason: "freeze", running: 1 });
  const added = await addJson("--queue", "builds", "--", "true");
  expect(added.warnings.map((w: { code: string }) => w.code)).toContain("LANE_PAUSED");
  const later = added.data.job_id as number;
  // The running job finishes and is recorded; the worker says the pause once.
  gate.release();
  await waitFor("the first job to finish", async () => (await stateOf(first)) === "done", 30_000);
  await waitFor("the worker to say the pause", () => w1.stderr().includes("lane builds is paused (freeze)"), 30_000);
  await beatsPass("w1");
  expect(await stateOf(later)).toBe("queued");

  // Said wherever it matters: status, list, wait.
  const status = await q.run(["status"]);
  expect(status.stdout).toContain("PAUSED lane builds (freeze)");
  expect((await q.json(["status"])).env.data.paused_lanes).toMatchObject([{ queue: "builds", queued: 1 }]);
  const list = await q.json(["list", "--queue", "builds"]);
  expect(list.env.warnings[0]).toMatchObject({ code: "LANE_PAUSED" });
  const waited = await q.run(["wait", String(later), "--timeout", "0.3"]);
  expect(waited.stderr).toContain("LANE_PAUSED");

  // A restart never undoes a pause: it is a row in the database.
  await stopWorker(w1);
  const w2 = startWorker("--queue", "builds", "--worker-id", "w2");
  await waitFor("the new worker to say the pause", () => w2.stderr().includes("lane builds is paused"), 30_000);
  await beatsPass("w2");
  expect(await stateOf(later)).toBe("queued");

  const resumed = await q.json(["resume", "builds"]);
  expect(resumed.env.data).toMatchObject({ queue: "builds", was_paused: true, queued: 1 });
  await waitFor("the held job to run after resume", async () => (await stateOf(later)) === "done", 30_000);
  await waitFor("the worker to say the resume", () => w2.stderr().includes("lane builds resumed"), 30_000);
}, 120_000);

test("pause --for ends by itself, by the queue's clock, with no process to end it", async () => {
  // Long enough that the add and the drain below run inside it on a loaded machine.
  const paused = await q.json(["pause", "builds", "--for", "20s"]);
  const until = paused.env.data.paused_until as number;
  expect(until - paused.env.data.paused_at).toBeCloseTo(20, 1);
  const id = await q.addJob("--queue", "builds", "--", "true");
  const drain = await q.run(["work", "--queue", "builds", "--drain"], { env: KNOBS });
  // The drain does not wait for a paused lane: it names it and leaves its job for later.
  expect(drain.stderr).toContain("lane builds is paused");
  expect(drain.stderr).toContain("1 queued job left for later");
  expect(await stateOf(id)).toBe("queued");
  startWorker("--queue", "builds");
  await waitFor("the job to run once the pause ended", async () => (await stateOf(id)) === "done", 30_000);
  expect((await q.attempt(id))!.started_at).toBeGreaterThanOrEqual(until);
}, 90_000);

test("a pause or slots for a lane nothing names warns LANE_UNKNOWN with the lanes in use; a second pause says what it replaced", async () => {
  await q.addJob("--queue", "builds", "--", "true");
  const typo = await q.json(["pause", "buidls"]);
  expect(typo.code).toBe(0); // a pause set ahead is allowed: it holds the lane's first jobs
  expect(typo.env.data.unknown_lane).toEqual({ lanes_in_use: ["builds"] });
  expect(typo.env.warnings).toEqual([
    {
      code: "LANE_UNKNOWN",
      // The undo command carries the queue selection (--db) the user gave.
      message: expect.stringMatching(
        /^no job, setting or worker names lane buidls \(lanes in use: builds\): paused anyway, for its first jobs; if it is a typo, spoolctl resume --db \S+ buidls undoes it$/,
      ),
    },
  ]);
  const slots = await q.run(["lane", "set", "biulds", "--slots", "2"]);
  expect(slots.stderr).toContain("warning: LANE_UNKNOWN: no job, setting or worker names lane biulds");
  expect(slots.stderr).toMatch(/spoolctl lane set --db \S+ biulds --slots none undoes it/);
  // A known lane is not warned about; a second pause names the one it replaces.
  const first = await q.json(["pause", "builds", "--reason", "deploy freeze"]);
  expect(first.env.warnings).toEqual([]);
  const second = await q.json(["pause", "builds", "--reason", "disk full", "--for", "1h"]);
  expect(second.env.data.replaced).toEqual({ reason: "deploy freeze", paused_until: null });
  expect(second.env.warnings).toEqual([
    {
      code: "PAUSE_REPLACED",
      message: "lane builds was already paused (deploy freeze) until resumed: this pause replaces it",
    },
  ]);
});

test("lane set --slots: a running fleet follows it, whatever the workers' --slots, and a disagreeing --slots is warned about", async () => {
  const gates = new Map<number, ReturnType<typeof gatedJob>>();
  for (let i = 0; i < 16; i++) {
    const gate = gatedJob(q, `g${i}`);
    gates.set(await q.addJob("--queue", "builds", "--", ...gate.argv), gate);
  }
  for (let i = 0; i < 3; i++) startWorker("--queue", "builds", "--concurrency", "3", "--worker-id", `fleet-${i}`);
  await waitFor("9 jobs running", async () => (await runningIn("builds")).length === 9, 60_000);

  // Lowered to 2: running jobs finish, and then no more than 2 run though the workers have room for 9.
  expect((await q.json(["lane", "set", "builds", "--slots", "2"])).env.data).toMatchObject({ slots: 2 });
  const released = await runningIn("builds");
  for (const id of released) gates.get(id)!.release();
  await waitFor(
    "2 jobs running under the lowered ceiling",
    async () => {
      const jobs = await q.jobs();
      const done = jobs.filter((j) => released.includes(j.id) && j.state === "done").length;
      return done === released.length && (await runningIn("builds")).length === 2;
    },
    60_000,
  );
  await beatsPass("fleet-0");
  expect((await runningIn("builds")).length).toBe(2);
  // A worker whose --slots disagrees is told the lane's setting wins, and follows it.
  const odd = startWorker("--queue", "builds", "--slots", "6", "--worker-id", "odd");
  await waitFor("the warning", () => odd.stderr().includes("wins over this worker's --slots 6"), 30_000);
  await beatsPass("odd");
  expect((await runningIn("builds")).length).toBe(2);

  // Raised to 3: a third starts without any job ending (poll, no wall-clock assertion).
  await q.json(["lane", "set", "builds", "--slots", "3"]);
  await waitFor(
    "3 jobs running under the raised ceiling",
    async () => (await runningIn("builds")).length === 3,
    30_000,
  );
  // Cleared: the workers' own flags apply again (none for the fleet): the 7 jobs left all run.
  expect((await q.json(["lane", "set", "builds", "--slots", "none"])).env.data).toMatchObject({ slots: null });
  await waitFor("every remaining job running", async () => (await runningIn("builds")).length === 7, 30_000);
  for (const gate of gates.values()) gate.release();
  const lanes = await q.json(["lane", "list"]);
  expect(lanes.env.data.lanes).toMatchObject([{ queue: "builds", slots: null, paused: false, workers: 4 }]);
}, 180_000);

test("a worker serves several lanes in order of preference, or every lane; the drain settles them all", async () => {
  const b1 = await q.addJob("--queue", "b", "--", "true");
  const a1 = await q.addJob("--queue", "a", "--", "true");
  const a2 = await q.addJob("--queue", "a", "--", "true");
  const d1 = await q.addJob("--", "true");
  const x1 = await q.addJob("--queue", "x", "--", "true");
  const both = await q.json(["work", "--queue", "a,b", "--drain", "--worker-id", "ab"]);
  expect(both.env.data).toMatchObject({ drained: true, executed: 3 });
  // Lane a first (its jobs, although added after b's), then b.
  const order = (await q.allEvents()).filter((e) => e.event === "claimed").map((e) => e.job_id);
  expect(order).toEqual([a1, a2, b1]);
  expect((await q.worker("ab"))?.queue).toBe("a,b");
  expect([await stateOf(d1), await stateOf(x1)]).toEqual(["queued", "queued"]);

  // The default lane's drain runs its job and names the lane it left.
  const def = await q.run(["work", "--drain"]);
  expect(await stateOf(d1)).toBe("done");
  expect(def.stderr).toContain("lane x has 1 queued job this drain did not serve: spoolctl work --db");
  expect(def.stderr).toContain("--drain --queue x");

  const y1 = await q.addJob("--queue", "y", "--", "true");
  const all = await q.json(["work", "--all-lanes", "--drain", "--worker-id", "all"]);
  expect(all.env.data).toMatchObject({ drained: true, executed: 2 });
  expect([await stateOf(x1), await stateOf(y1)]).toEqual(["done", "done"]);
  expect((await q.worker("all"))?.queue).toBe("*");
  // A lane that appears with the drain's last result (a hook's job) is drained too.
  expect((await q.run(["hook", "add", "h", "--on", "done", "--", "true"])).code).toBe(0);
  const z1 = await q.addJob("--queue", "z", "--", "true");
  const withHook = await q.json(["work", "--all-lanes", "--drain", "--worker-id", "all"]);
  expect(withHook.env.data).toMatchObject({ drained: true, executed: 2 });
  expect(await stateOf(z1)).toBe("done");
  expect((await q.json(["list", "--queue", "hooks"])).env.data.jobs.map((j: { state: string }) => j.state)).toEqual([
    "done",
  ]);
  const both2 = await q.run(["work", "--all-lanes", "--queue", "a"]);
  expect(both2.code).not.toBe(0);
  expect(both2.stderr).toContain("give --queue or --all-lanes, not both");
}, 90_000);

test("a looping worker with --all-lanes picks up a lane that appears while it runs", async () => {
  startWorker("--all-lanes");
  const id = await q.addJob("--queue", "brand-new", "--", "true");
  await waitFor("the new lane's job to run", async () => (await stateOf(id)) === "done", 30_000);
}, 60_000);

test("add to a lane no live worker serves says so once, with the command that serves it", async () => {
  const first = await addJson("--queue", "fresh", "--", "true");
  const warning = first.warnings.find((w: { code: string }) => w.code === "LANE_UNSERVED");
  expect(warning.message).toContain(`spoolctl work --db`);
  expect(warning.message).toContain("--queue fresh");
  // Once: the next add to the same backlog says nothing more.
  const second = await addJson("--queue", "fresh", "--", "true");
  expect(second.warnings).toEqual([]);
  // A lane a live worker serves (one of several) gets no warning.
  startWorker("--queue", "other,served", "--worker-id", "multi");
  await waitFor("the worker to register", () => q.registered("multi"), 30_000);
  const served = await addJson("--queue", "served", "--", "true");
  expect(served.warnings).toEqual([]);
  // `wait` knows that worker serves the lane too: a long job of it gets no NO_WORKER warning.
  const gate = gatedJob(q, "long");
  const long = await q.addJob("--queue", "served", "--", ...gate.argv);
  await waitFor("the long job to run", async () => (await stateOf(long)) === "running", 30_000);
  const waited = await q.run(["wait", String(long), "--timeout", "3"]);
  gate.release();
  expect(waited.stderr).not.toContain("NO_WORKER");
  // The default lane is what `spoolctl work` serves: never warned about.
  expect((await addJson("--", "true")).warnings).toEqual([]);
}, 60_000);

test("capabilities, schema and completion list the lane verbs and flags", async () => {
  const caps = (await q.json(["capabilities"])).env.data;
  for (const verb of ["pause", "resume", "lane-list", "lane-set"]) expect(caps.verbs[verb]).toBeDefined();
  expect(caps.compound_commands).toMatchObject({
    "lane pause": "pause",
    "lane resume": "resume",
    "lane list": "lane-list",
  });
  const flagNames = (verb: string) => JSON.stringify(caps.verbs[verb].flags);
  expect(flagNames("pause")).toContain("for");
  expect(flagNames("pause")).toContain("reason");
  expect(flagNames("lane-set")).toContain("slots");
  expect(flagNames("work")).toContain("all-lanes");
  const schema = (await q.json(["schema"])).env.data;
  expect(schema.verbs["lane-list"].properties.lanes).toBeDefined();
  expect(schema.verbs.status.properties.paused_lanes).toBeDefined();
  const bash = (await q.run(["completion", "bash"])).stdout;
  expect(bash).toContain("'pause:--for'");
  expect(bash).toContain("'lane') positional='list set pause resume'");
  expect(bash).toContain("--all-lanes");
});
