/**
 * A full disk (docs/architecture.md "Storage conditions"), on a real 2 MiB
 * tmpfs (needs root to mount; skipped where that is not allowed):
 * - the database and spool full: the worker backs off writing the result (a
 *   rate-limited line, not dozens a second), `status` and `doctor` show the
 *   condition, one SIGTERM stops it within 10 s (the unrecorded job is left to
 *   the reaper), and once space is back the next worker settles both jobs, the unrelated
 *   one charged nothing;
 * - only the spool full: the attempt ends `output_write_failed: no space left
 *   on device` (not `exit 1`), charged to its own budget of 3 such attempts
 *   (neither retries nor crashes), and claiming pauses until space is back,
 *   so the next job is not charged for the disk;
 * - a job whose output never fits is dead after 3 attempts lost so, however
 *   often space is freed.
 *
 * SQLite-only: the full disk holds the SQLite file (a PostgreSQL queue's
 * storage is the server's). State is read through the driver.
 */
import { expect, test } from "bun:test";
import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { killWorkerAndWatchdog, startBg, startWorker, stopProcessesOf } from "./support/processes.ts";
import { FAST_KNOBS, ON_POSTGRES, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue({ teardown: stopProcessesOf });

/** Mounts a 2 MiB tmpfs (owner-only) on `dir`; false where mounting is not allowed. */
function mountTiny(dir: string): boolean {
  mkdirSync(dir, { recursive: true });
  return (
    Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", dir], { stderr: "ignore" }).exitCode ===
    0
  );
}

function unmount(dir: string): void {
  Bun.spawnSync(["umount", "-l", dir]);
}

const FILL = ["sh", "-c", "head -c 10000000 /dev/zero"]; // 10 MB on stdout: more than the disk holds

/** Frees the disk: deletes the output files of job `id` (whatever the spool layout: their paths are on the attempt rows). */
async function deleteOutput(id: number): Promise<void> {
  for (const a of await q.attempts(id))
    for (const path of [a.stdout_path, a.stderr_path]) rmSync(path, { force: true });
}

test.skipIf(ON_POSTGRES)(
  "database and spool on a full disk: back-off with a rate-limited line, status and doctor say so, one SIGTERM stops the worker within 10 s, nothing else is charged",
  async () => {
    if (!mountTiny(q.dir)) return console.warn("skipped: cannot mount a tmpfs here");
    try {
      const first = await q.addJob("--max-crashes", "0", "--", ...FILL);
      const second = await q.addJob("--", "echo", "after");
      const w = startWorker(q, [], { env: FAST_KNOBS });
      await waitFor(
        "the worker to hit the full disk",
        () => w.stderr().includes(`cannot record job ${first} attempt 1 yet`),
        30000,
      );
      // A deliberate non-event window: the old behaviour (a retry on every wake, 30-100 lines a
      // second) would show within it; the rate limit allows at most two lines.
      await Bun.sleep(3000);
      const complaints = w
        .stderr()
        .split("\n")
        .filter((l) => l.includes(`cannot record job ${first} attempt 1 yet`));
      expect(complaints.length).toBeLessThanOrEqual(2);
      expect(complaints[0]).toMatch(/the disk holding the queue .* is full; will retry$/);
      expect(w.stderr()).toContain("claiming paused");
      expect(w.proc.exitCode).toBeNull();

      const status = await q.json(["status"]);
      expect(status.env.data.full_disks.map((d: { role: string }) => d.role).sort()).toEqual(["database", "spool"]);
      expect((await q.run(["status"])).stdout).toContain("disk full: the database disk");
      // Its heartbeats cannot be written either: the views say it is blocked by the disk, not gone or stuck.
      await waitFor(
        "status to say the worker is blocked by the full disk",
        async () =>
          (await q.json(["status"])).env.data.stranded.some(
            (h: { worker_state: string; fate: string }) =>
              h.worker_state === "stale" && h.fate.includes("is alive but cannot write: a disk of the queue is full"),
          ),
        30000,
      );
      const doctor = await q.json(["doctor"]);
      expect(doctor.code).toBe(3);
      const disk = doctor.env.data.checks.find((c: { id: string }) => c.id === "disk_space");
      expect(disk.status).toBe("fail");
      expect(disk.message).toMatch(/is full/);

      // One SIGTERM is enough: the worker stops within 10 s, leaving the unrecorded result to the reaper (said once).
      w.proc.kill("SIGTERM");
      const exit = await Promise.race([w.exited, Bun.sleep(10_000).then(() => "still running after 10 s")]);
      expect(exit).toBe(0);
      expect(w.stderr()).toMatch(
        /exiting with 1 result\(s\) unrecorded \(job 1\): the next worker reaps and requeues them/,
      );
      expect(w.stderr().split("exiting with 1 result(s) unrecorded")).toHaveLength(2);

      await deleteOutput(first); // space is back
      const next = startWorker(q, ["--drain"], { env: FAST_KNOBS });
      expect(await next.exited).toBe(0);
      const [a, b] = [(await q.job(first))!, (await q.job(second))!];
      expect({ state: a.state, crashes: a.crashes }).toEqual({ state: "dead", crashes: 1 }); // reaped; --max-crashes 0
      expect({ state: b.state, attempts: b.attempts, crashes: b.crashes }).toEqual({
        state: "done",
        attempts: 0,
        crashes: 0,
      });
    } finally {
      unmount(q.dir);
    }
  },
  120000,
);

test.skipIf(ON_POSTGRES)(
  'status on a full disk, one worker dead and one blocked: no "start one" above a line saying the other is alive',
  async () => {
    if (!mountTiny(q.dir)) return console.warn("skipped: cannot mount a tmpfs here");
    try {
      const long = await q.addJob("--", "sleep", "600");
      const a = startWorker(q, ["--worker-id", "A"], { env: FAST_KNOBS });
      await waitFor("worker A to run its job", async () => (await q.job(long))?.state === "running", 30000);
      const fill = await q.addJob("--max-crashes", "0", "--", ...FILL);
      const b = startWorker(q, ["--worker-id", "B"], { env: FAST_KNOBS });
      await waitFor(
        "worker B to hit the full disk",
        () => b.stderr().includes(`cannot record job ${fill} attempt 1 yet`),
        30000,
      );
      killWorkerAndWatchdog(a.pid);
      await a.exited;
      const status = await waitFor(
        "status to see A dead and B blocked",
        async () => {
          const s = (await q.json(["status"])).env.data;
          const states = s.stranded.map((h: { worker_state: string }) => h.worker_state).sort();
          return states.join() === "dead,stale" ? s : null;
        },
        30000,
      );
      expect(status.live_workers).toBe(0);
      const text = (await q.run(["status"])).stdout;
      expect(text).toContain("is alive but cannot write: a disk of the queue is full");
      expect(text).not.toContain("no worker is running: start one");
      expect(text).toContain(
        "running jobs whose worker is gone or silent: 2 (a disk of the queue is full: no worker can write until space is freed; see below)",
      );
      b.proc.kill("SIGKILL");
      await b.exited;
    } finally {
      unmount(q.dir);
    }
  },
  120000,
);

test.skipIf(ON_POSTGRES)(
  "only the spool full: output_write_failed (its own budget), claiming pauses, the next job runs uncharged once space is back",
  async () => {
    if (!mountTiny(q.spool)) return console.warn("skipped: cannot mount a tmpfs here");
    try {
      await q.setConfig("backoff_base", "60"); // the lost job's retry waits beyond this test
      const first = await q.addJob("--", ...FILL);
      const second = await q.addJob("--", "echo", "after");
      const w = startWorker(q, [], { env: FAST_KNOBS });
      await waitFor("the filling job to end", async () => (await q.attempt(first))?.state === "failed", 30000);
      const attempt = (await q.attempt(first))!;
      expect({ state: attempt.state, error: attempt.error }).toEqual({
        state: "failed",
        error: "output_write_failed: no space left on device (lost to a full disk: 1 of 3)",
      });
      const a = (await q.job(first))!;
      // Infrastructure: neither the retry budget nor the crash budget, but its own (test below).
      expect({ state: a.state, attempts: a.attempts, crashes: a.crashes }).toEqual({
        state: "queued",
        attempts: 0,
        crashes: 0,
      });
      await waitFor(
        "the worker to pause claiming",
        () => w.stderr().includes("claiming paused: the spool disk"),
        30000,
      );
      // The line follows the commit the test saw above, through a pipe: waited for, not assumed there.
      await waitFor(
        "the worker's line for job 1",
        () =>
          /job 1 attempt 1 failed: output_write_failed: no space left on device \(lost to a full disk: 1 of 3\).* -> queued/.test(
            w.stderr(),
          ),
        30000,
      );
      const waiting = (await q.job(second))!;
      expect({ state: waiting.state, attempts: waiting.attempts }).toEqual({ state: "queued", attempts: 0 });
      expect((await q.json(["status"])).env.data.full_disks).toEqual([
        { role: "spool", path: q.spool, free_bytes: expect.any(Number) },
      ]);

      await deleteOutput(first);
      await waitFor("the next job to run", async () => (await q.job(second))?.state === "done", 30000);
      const b = (await q.job(second))!;
      expect({ attempts: b.attempts, crashes: b.crashes }).toEqual({ attempts: 0, crashes: 0 });
      expect(w.stderr()).toContain("space is back");
      w.proc.kill("SIGTERM");
      expect(await w.exited).toBe(0);
    } finally {
      unmount(q.spool);
    }
  },
  120000,
);

test.skipIf(ON_POSTGRES)(
  "after a full-disk episode a busy worker checkpoints the write-ahead log at once (not only when idle)",
  async () => {
    if (!mountTiny(q.dir)) return console.warn("skipped: cannot mount a tmpfs here");
    const wal = () => {
      try {
        return statSync(`${q.db}-wal`).size;
      } catch {
        return 0;
      }
    };
    try {
      const long = await q.addJob("--", "sleep", "60");
      // Another connection keeps the WAL in place (the last connection to close would fold it away).
      const script = join(q.dir, "open.ts");
      writeFileSync(
        script,
        `import { Database } from "bun:sqlite";\nconst db = new Database(process.argv[2]);\ndb.query("SELECT count(*) FROM jobs").get();\nconsole.log("open");\nawait Bun.sleep(600000);\ndb.close(); // keeps db reachable: a collected Database closes its file\n`,
      );
      const holder = startBg(q, [], { argv0: ["bun", script, q.db] });
      await waitFor("the queue to be held open", () => holder.stdout().includes("open"), 30000);
      // A slow heartbeat: the worker's own writes do not refill the WAL right after the checkpoint.
      const w = startWorker(q, [], { env: { SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "5" } });
      await waitFor("the long job to run", async () => (await q.job(long))?.state === "running", 30000);
      expect(wal()).toBeGreaterThan(0);
      const big = join(q.dir, "big");
      Bun.spawnSync(["sh", "-c", `head -c 3000000 /dev/zero > ${big}`], { stderr: "ignore" });
      await waitFor("the worker to see the full disk", () => w.stderr().includes("claiming paused"), 30000);
      rmSync(big, { force: true });
      await waitFor("the worker to see space back", () => w.stderr().includes("space is back"), 30000);
      await waitFor("the WAL to be truncated", () => wal() === 0, 30000, 5);
      expect((await q.job(long))!.state).toBe("running"); // busy all along: not the idle checkpoint
      holder.proc.kill("SIGKILL");
      w.proc.kill("SIGKILL");
    } finally {
      unmount(q.dir);
    }
  },
  120000,
);

test.skipIf(ON_POSTGRES)(
  "a job whose output can never fit is dead after 3 attempts lost to a full disk, not requeued for ever on the crash budget",
  async () => {
    if (!mountTiny(q.spool)) return console.warn("skipped: cannot mount a tmpfs here");
    let freeing = true;
    try {
      await q.setConfig("backoff_cap", "1");
      const id = await q.addJob("--", ...FILL); // --max-crashes unbounded (the default)
      const w = startWorker(q, [], { env: FAST_KNOBS });
      // Someone keeps freeing the disk (a cleanup job, an operator): each ended attempt's output is removed.
      const freer = (async () => {
        while (freeing) {
          for (const a of await q.attempts(id).catch(() => []))
            if (a.state !== "running") for (const p of [a.stdout_path, a.stderr_path]) rmSync(p, { force: true });
          await Bun.sleep(100);
        }
      })();
      await waitFor("the job to be dead", async () => (await q.job(id))?.state === "dead", 90000, 100);
      freeing = false;
      await freer;
      const job = (await q.job(id))!;
      const attempts = await q.attempts(id);
      expect(attempts.map((a) => a.error?.startsWith("output_write_failed: no space left on device"))).toEqual(
        Array(3).fill(true),
      );
      expect({ attempts: job.attempts, crashes: job.crashes }).toEqual({ attempts: 0, crashes: 0 });
      expect(job.last_error).toContain("lost to a full disk 3 times");
      await waitFor("the worker's line for the third attempt", () => w.stderr().includes("attempt 3 failed"), 30000);
      expect(w.stderr()).toContain("lost to a full disk");
      expect(w.stderr()).not.toContain("worker crash");
      const show = (await q.run(["show", `${id}`])).stdout;
      expect(show).toContain("3 lost to a full disk");
      expect(show).not.toContain("worker crash");
      const rows = show.split("\n").filter((l) => /^\d+\s+failed/.test(l));
      expect(rows).toHaveLength(3);
      for (const row of rows) {
        expect(row).toContain("disk full");
        expect(row).not.toMatch(/\sexit 1\s/);
      }
      w.proc.kill("SIGTERM");
      expect(await w.exited).toBe(0);
    } finally {
      freeing = false;
      unmount(q.spool);
    }
  },
  150000,
);
