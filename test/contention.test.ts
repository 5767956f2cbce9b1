/**
 * Contention (docs/architecture.md "Contention"): `add` rides out a write lock
 * held past SQLite's 5 s busy timeout (retry with back-off and jitter for up to
 * SPOOLCTL_LOCK_WAIT, default 60 s) and acknowledges exactly what it added; a
 * burst of parallel `add` processes beside 8 workers adds every job exactly
 * once; a worker started while the lock is held waits for it instead of exiting.
 *
 * SQLite-only where the lock is SQLite's file write lock, taken on purpose with
 * raw `BEGIN IMMEDIATE` by a second process; the state is read through the driver.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { add } from "./support/jobs.ts";
import { startBg, startWorker, stopProcessesOf } from "./support/processes.ts";
import { SQLITE_LOCK_HOLDER } from "./support/queue-fixtures.ts";
import { FAST_KNOBS, ON_POSTGRES, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue({ teardown: stopProcessesOf });

/** Holds the queue's write lock for `seconds` in another process; resolves once it is held. */
async function holdLock(seconds: number) {
  writeFileSync(`${q.dir}/hold.ts`, SQLITE_LOCK_HOLDER);
  const holder = startBg(q, [], { argv0: ["bun", `${q.dir}/hold.ts`, q.db, String(seconds)] });
  await waitFor("the lock to be held", () => holder.stdout().includes("locked"), 30000);
  return holder;
}

test.skipIf(ON_POSTGRES)(
  "add rides out a write lock held past the busy timeout and adds each job exactly once",
  async () => {
    const first = await add(q, "--", "true");
    const holder = await holdLock(8);
    const [asJson, asText] = await Promise.all([
      q.run(["add", "--json", "--", "echo", "json"]),
      q.run(["add", "--", "echo", "text"]),
    ]);
    expect(holder.stdout()).toContain("released"); // both ended only after the lock was let go
    expect(asJson.code).toBe(0);
    expect(asJson.json.ok).toBe(true);
    expect(asText.code).toBe(0);
    expect(asText.stdout).toMatch(/^Added job \d+$/m);
    expect(asText.stderr).toMatch(/locked by another writer.*still trying for up to 60s \(SPOOLCTL_LOCK_WAIT\)/);
    expect(asJson.stderr).toBe(""); // --json: the envelope alone
    const jobs = await q.jobs();
    expect(jobs.map((j) => j.argv.join(" ")).sort()).toEqual(["echo json", "echo text", "true"]);
    expect(jobs.map((j) => j.id)).toContain(first);
    expect(jobs.map((j) => j.id)).toContain(asJson.json.data.job_id);
  },
  60000,
);

test.skipIf(ON_POSTGRES)(
  "SPOOLCTL_LOCK_WAIT bounds the wait: past it add fails with LOCKED (exit 4) naming the wait and adds nothing",
  async () => {
    await add(q, "--", "true");
    const holder = await holdLock(20);
    const r = await q.run(["add", "--json", "--", "echo", "late"], { env: { SPOOLCTL_LOCK_WAIT: "7" } });
    expect(holder.stdout()).not.toContain("released");
    expect(r.code).toBe(4);
    const error = r.json.errors[0];
    expect(error.code).toBe("LOCKED");
    expect(error.message).toMatch(/waited \d+s in all, the SPOOLCTL_LOCK_WAIT limit/);
    expect(error.detail.waited_seconds).toBeGreaterThanOrEqual(5);
    const bad = await q.run(["add", "--json", "--", "true"], { env: { SPOOLCTL_LOCK_WAIT: "soon" } });
    expect(bad.json.errors[0].code).toBe("INVALID_INPUT");
    expect(bad.json.errors[0].message).toContain("SPOOLCTL_LOCK_WAIT");
    holder.proc.kill("SIGKILL");
    await holder.exited;
    expect((await q.jobs()).map((j) => j.argv.join(" "))).toEqual(["true"]);
  },
  60000,
);

/**
 * The burst: enough `add` processes at once to queue up on the write lock (on
 * SQLite some wait past its 5 s busy timeout and ride it out) beside 8 claiming
 * workers. Each add costs about 0.25 s of CPU when 2 cores are this busy, so
 * 120 of them, 16 at a time, are about 30 s of CPU: the lock is as contended
 * as with more, and the test stays clear of its deadline while the rest of the
 * suite shares the cores.
 */
const BURST = 120;
const BURST_PARALLEL = 16;

test(`a burst of ${BURST} parallel adds beside 8 workers: every add succeeds and each job exists exactly once`, async () => {
  await add(q, "--", "true"); // the queue exists before the burst
  const workers = Array.from({ length: 8 }, (_, i) => startWorker(q, ["--worker-id", `w${i}`], { env: FAST_KNOBS }));
  // BURST_PARALLEL adds in flight at all times, from this process: each one's exit code and stderr are at hand.
  const failed: { n: number; code: number; stderr: string }[] = [];
  let waited = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: BURST_PARALLEL }, async () => {
      while (next < BURST) {
        const n = ++next;
        const r = await q.run(["add", "--", "echo", String(n)]);
        if (r.code !== 0) failed.push({ n, code: r.code, stderr: r.stderr });
        if (r.stderr.includes("still trying")) waited++;
      }
    }),
  );
  expect(failed).toEqual([]); // on failure, each failed add's exit code and stderr
  if (waited > 0) console.log(`${waited} of the ${BURST} adds rode out a lock held past the busy timeout`);
  const jobs = (await q.jobs()).filter((j) => j.argv[0] === "echo");
  expect(jobs).toHaveLength(BURST);
  expect(new Set(jobs.map((j) => j.argv[1])).size).toBe(BURST);
  for (const w of workers) w.proc.kill("SIGTERM");
  const codes = await Promise.all(workers.map((w) => w.exited));
  // On failure, the worker's exit code and the end of its stderr.
  expect(
    workers.map((w, i) => ({ worker: i, code: codes[i], stderr: codes[i] === 0 ? "" : w.stderr().slice(-3000) })),
  ).toEqual(workers.map((_, i) => ({ worker: i, code: 0, stderr: "" })));
}, 240000);

test.skipIf(ON_POSTGRES)(
  "a worker started while another process holds the write lock waits for it, says so, and then runs the job",
  async () => {
    const id = await add(q, "--", "true");
    const holder = await holdLock(12);
    const w = startWorker(q, ["--once"], { env: FAST_KNOBS });
    await waitFor("the worker's waiting line", () => /locked.*will retry/.test(w.stderr()), 30000);
    expect(w.proc.exitCode).toBeNull();
    expect(await w.exited).toBe(0);
    expect(holder.stdout()).toContain("released");
    expect((await q.job(id))!.state).toBe("done");
  },
  60000,
);
