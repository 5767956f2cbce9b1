/**
 * A running job asked to stop (fail-fast `now`, `cancel --running`) is stopped
 * when its worker is woken, not at its next heartbeat (issue 30 item 4;
 * docs/architecture.md "Cancel", "Waking"). The heartbeat here is two minutes
 * and every deadline well under it, so only the wake (or, on PostgreSQL, the
 * busy worker's 250 ms read) can stop the job in time. SPOOLCTL_TEST_DB runs it
 * on PostgreSQL.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { addJob, gatedJob } from "./support/jobs.ts";
import { type TempQueue, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

setDefaultTimeout(120_000);

/** A heartbeat far longer than any deadline below (the reap threshold follows it: 8 minutes). */
const SLOW_BEAT = { SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "120" };
/** Well under one heartbeat: what the job's stop must take at most, wake included. */
const BEFORE_THE_BEAT_MS = 40_000;

let workers: ReturnType<TempQueue["spawn"]>[] = [];
const q = useTempQueue({
  teardown: async () => {
    for (const w of workers) w.kill("SIGTERM");
    await Promise.all(workers.map((w) => w.exited));
    workers = [];
  },
});

/** A worker in the background with the slow heartbeat and the default poll, stopped after the test. */
function startWorker(...args: string[]) {
  const w = q.spawn(["work", ...args], { env: SLOW_BEAT });
  workers.push(w);
  return w;
}

/** A job that waits for its gate, then exits `code`. */
function gatedExit(name: string, code: number): { argv: string[]; release(): void } {
  const gate = gatedJob(q, name);
  const file = join(q.dir, `${name}.go`);
  return {
    argv: ["sh", "-c", `while [ ! -f '${file}' ] && [ -d '${q.dir}' ]; do sleep 0.05; done; exit ${code}`],
    release: gate.release,
  };
}

test("fail-fast now: a dead job's running sibling is stopped long before the next heartbeat", async () => {
  const slow = gatedJob(q, "slow");
  const failing = gatedExit("failing", 1);
  const sibling = await addJob(q, "--batch", "ff", "--fail-fast=now", "--", ...slow.argv);
  const dies = await addJob(q, "--batch", "ff", "--seal", "--max-retries", "0", "--", ...failing.argv);
  startWorker("--concurrency", "2");
  await waitFor("both jobs running", async () => {
    const states = await Promise.all([q.job(sibling), q.job(dies)]);
    return states.every((j) => j?.state === "running");
  });
  failing.release();
  await waitFor("the failing job dead", async () => (await q.job(dies))?.state === "dead");
  const stopped = await waitFor(
    "the sibling stopped by fail-fast",
    async () => {
      const j = await q.job(sibling);
      return j && j.state !== "running" ? j : null;
    },
    BEFORE_THE_BEAT_MS,
  );
  expect(stopped.state).toBe("canceled");
  const r = await q.json(["batch", "show", "ff"]);
  expect(r.env.data).toMatchObject({ failed: true, failed_job_id: dies, settled: true, all_succeeded: false });
  expect(r.env.data.counts).toMatchObject({ done: 0, dead: 1, canceled: 1, running: 0 });
  slow.release();
});

test("cancel --running --yes stops a running job long before its worker's next heartbeat", async () => {
  const slow = gatedJob(q, "slow");
  const id = await addJob(q, "--", ...slow.argv);
  startWorker();
  await waitFor("the job running", async () => (await q.job(id))?.state === "running");
  const asked = await q.run(["cancel", "--running", "--yes", String(id)]);
  expect(asked.code).toBe(0);
  const ended = await waitFor(
    "the job stopped",
    async () => {
      const j = await q.job(id);
      return j && j.state !== "running" ? j : null;
    },
    BEFORE_THE_BEAT_MS,
  );
  expect(ended.state).toBe("canceled");
  slow.release();
});
