/**
 * A paused worker's attempt times (src/worker/pause.ts): a job that ends while
 * its worker is SIGSTOPped is recorded with its own run time, not the pause;
 * a job still running when the worker resumes keeps the pause in its time.
 * Real worker, real signals; margins of seconds, never exact timings.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { processLives } from "./support/processes.ts";
import { FAST_KNOBS, type TempQueue, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

setDefaultTimeout(60_000);

const PAUSE_MS = 5000;
const LIVENESS = join(import.meta.dir, "../src/worker/liveness.ts");

let worker: ReturnType<TempQueue["spawn"]> | null = null;
const q = useTempQueue({
  teardown: async () => {
    if (worker) {
      worker.kill("SIGCONT");
      worker.kill("SIGKILL");
      await worker.exited;
      worker = null;
    }
  },
});

/** Runs a job that sleeps `sleepSeconds`, SIGSTOPs the worker while it runs for PAUSE_MS, resumes it; returns the attempt's recorded seconds and the worker's line. */
async function pausedRun(sleepSeconds: number): Promise<{ took: number; line: string }> {
  const pidFile = join(q.dir, "job.pid");
  const id = await q.addJob("--", "sh", "-c", `echo $$ > ${pidFile}; exec sleep ${sleepSeconds}`);
  // A lease longer than the pause: on PostgreSQL the watchdog ends the jobs of a worker stopped past it.
  worker = q.spawn(["work", "--once"], { env: { ...FAST_KNOBS, SPOOLCTL_TEST_REAP_THRESHOLD: "30" } });
  await waitFor("the job to start", () => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "");
  const jobPid = Number(readFileSync(pidFile, "utf8").trim());
  worker.kill("SIGSTOP");
  const stoppedAt = performance.now();
  if (sleepSeconds * 1000 < PAUSE_MS)
    await waitFor("the job to end while its worker is stopped", () => !processLives(jobPid) || isZombie(jobPid));
  await Bun.sleep(Math.max(0, PAUSE_MS - (performance.now() - stoppedAt)));
  worker.kill("SIGCONT");
  expect(await worker.exited).toBe(0);
  const stderr = await new Response(worker.stderr as ReadableStream).text();
  worker = null;
  const attempt = (await q.attempt(id, 1))!;
  expect(attempt.state).toBe("succeeded");
  const line = stderr.split("\n").find((l) => l.includes("succeeded")) ?? "";
  return { took: attempt.finished_at! - attempt.started_at, line };
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}

test("a job that ends while its worker is stopped is recorded with its own run time, not the worker's pause", async () => {
  const { took, line } = await pausedRun(0.3);
  // The job ran 0.3 s; the worker was stopped for 5 s. Before, both counted (took >= 5 s).
  // (Dated by the kernel when the worker looks before its runtime reaps the child, else by the pause's start.)
  expect(took).toBeLessThan(PAUSE_MS / 1000 - 1.5);
  expect(took).toBeGreaterThanOrEqual(0);
  const shown = Number(/\((\d+(?:\.\d+)?)s\)/.exec(line)?.[1]);
  expect(shown).toBeLessThan(PAUSE_MS / 1000 - 1.5);
});

test("a job still running when its worker resumes keeps the pause in its time (it did run)", async () => {
  const { took } = await pausedRun(PAUSE_MS / 1000 + 2);
  expect(took).toBeGreaterThanOrEqual(PAUSE_MS / 1000 + 2 - 0.5);
});

test.skipIf(!existsSync("/proc/self/sched"))(
  "the kernel dates a zombie's end on its own CPU's clock, whichever CPU this process runs on",
  async () => {
    // `sleep 0.3` ends after 0.3 s and stays a zombie: its parent (exec'd into `sleep 5`) never waits for it.
    const proc = Bun.spawn(["sh", "-c", "sleep 0.3 & echo $!; exec sleep 5"], { stdout: "pipe", stderr: "ignore" });
    const reader = proc.stdout.getReader();
    const zombie = Number(new TextDecoder().decode((await reader.read()).value).trim());
    await waitFor("the zombie", () => isZombie(zombie));
    const seenAt = performance.now();
    await Bun.sleep(1000); // a deliberate second of time passing: the answer must say the zombie ended >= 0.9 s ago
    // Asked from each CPU in turn: per-CPU run-queue clocks may differ by seconds, the answer may not.
    const cpus = navigator.hardwareConcurrency;
    const answers: number[] = [];
    for (let cpu = 0; cpu < cpus; cpu++) {
      const asked = Bun.spawnSync([
        "taskset",
        "-c",
        String(cpu),
        "bun",
        "-e",
        `console.log(require(${JSON.stringify(LIVENESS)}).lastRanAgoMs(${zombie}))`,
      ]);
      answers.push(Number(asked.stdout.toString().trim()));
    }
    const sinceSeen = performance.now() - seenAt;
    proc.kill("SIGKILL");
    await proc.exited;
    for (const ago of answers) {
      // It ended before we saw it a zombie, and after the shell started it.
      expect(ago).toBeGreaterThanOrEqual(900);
      expect(ago).toBeLessThan(sinceSeen + 3000);
    }
  },
);
