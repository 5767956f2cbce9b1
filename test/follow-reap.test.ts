/**
 * `output --follow` across a reap (docs/architecture.md "Output"): when the
 * followed attempt's worker dies, the follower says so (as the views judge
 * it), says when the attempt is reaped, and follows the job's next attempt
 * to its end, instead of exiting 0 silently after the first. Real workers,
 * a real SIGKILL, on both stores.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { add } from "./support/jobs.ts";
import { killWorkerAndWatchdog, startBg, startWorker, stopProcessesOf } from "./support/processes.ts";
import { FAST_KNOBS, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue({ teardown: stopProcessesOf });

test("a follower says its attempt's worker died, then follows the next attempt to the end", async () => {
  const gate = join(q.dir, "gate");
  // Prints which attempt it is (the marker's last field), then waits for the gate.
  const id = await add(
    q,
    "-c",
    `echo "start \${SPOOLCTL_ATTEMPT_TOKEN##*-}"; while [ ! -e '${gate}' ]; do sleep 0.05; done; echo end`,
  );
  const a = startWorker(q, ["--worker-id", "A"], { env: FAST_KNOBS });
  await waitFor("attempt 1 to run", async () => (await q.attempt(id))?.state === "running", 30_000);
  const follower = startBg(q, ["output", String(id), "--follow", "--stream", "stdout"], { env: FAST_KNOBS });
  await waitFor("the follower to print attempt 1", () => follower.stdout().includes("start 1\n"), 30_000);

  killWorkerAndWatchdog(a.pid);
  await a.exited;
  await waitFor(
    "the follower to say the worker died",
    () =>
      follower
        .stderr()
        .includes(`spoolctl: job ${id} attempt 1: worker A (pid ${a.pid}) is dead; reaped by the next worker`),
    30_000,
  );
  const b = startWorker(q, ["--worker-id", "B"], { env: FAST_KNOBS });
  await waitFor("the follower to print attempt 2", () => follower.stdout().includes("start 2\n"), 60_000);
  expect(follower.stderr()).toContain(`spoolctl: job ${id} attempt 1 was abandoned: `);
  expect(follower.stderr()).toContain(`spoolctl: following job ${id} attempt 2\n`);
  writeFileSync(gate, "");
  expect(await follower.exited).toBe(0);
  expect(follower.stdout()).toBe("start 1\nstart 2\nend\n");
  await waitFor("job done", async () => (await q.job(id))?.state === "done", 30_000);
  b.proc.kill("SIGTERM");
  await b.exited;
}, 120_000);

test("--attempt N follows that attempt only, and says it was abandoned", async () => {
  const id = await add(q, "-c", `echo "start \${SPOOLCTL_ATTEMPT_TOKEN##*-}"; sleep 120`);
  const a = startWorker(q, ["--worker-id", "A"], { env: FAST_KNOBS });
  await waitFor("attempt 1 to run", async () => (await q.attempt(id))?.state === "running", 30_000);
  const follower = startBg(q, ["output", String(id), "--follow", "--attempt", "1", "--stream", "stdout"], {
    env: FAST_KNOBS,
  });
  await waitFor("the follower to print attempt 1", () => follower.stdout().includes("start 1\n"), 30_000);
  killWorkerAndWatchdog(a.pid);
  await a.exited;
  const b = startWorker(q, ["--worker-id", "B"], { env: FAST_KNOBS });
  expect(await follower.exited).toBe(0);
  expect(follower.stdout()).toBe("start 1\n");
  expect(follower.stderr()).toContain(`spoolctl: job ${id} attempt 1 ended: abandoned (`);
  b.proc.kill("SIGKILL");
  await b.exited;
}, 120_000);
