/**
 * Lock contention (issue 3, test f; SPEC §4 "Pragmas"): while another process
 * holds the write lock, a writer waits out the 5 s busy timeout and fails with
 * `LOCKED` (exit 4, a retry hint), changing nothing; a worker treats `LOCKED`
 * as transient and carries on once the lock is released.
 *
 * SQLite-only: the lock is SQLite's file write lock, taken on purpose with raw
 * `BEGIN IMMEDIATE` by a second process. Skipped when SPOOLCTL_TEST_DB is a
 * postgres:// URL. The queue's state is still checked through the driver.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { add, addMany } from "./support/jobs.ts";
import { procState, startBg, startWorker, stopProcessesOf } from "./support/processes.ts";
import { SQLITE_LOCK_HOLDER } from "./support/queue-fixtures.ts";
import { FAST_KNOBS, ON_POSTGRES, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue({ teardown: stopProcessesOf });

test.skipIf(ON_POSTGRES)(
  "a held write lock: with SPOOLCTL_LOCK_WAIT=0 add fails with LOCKED (exit 4) after the busy timeout and adds nothing; a worker rides it out",
  async () => {
    const go = `${q.dir}/GO`;
    const first = await add(q, "-c", `while [ ! -e '${go}' ]; do sleep 0.02; done`);
    const w = startWorker(q, ["--worker-id", "A"], { env: FAST_KNOBS });
    await waitFor("the job to run", async () => (await q.job(first))?.state === "running");

    writeFileSync(`${q.dir}/hold.ts`, SQLITE_LOCK_HOLDER); // takes the write lock (BEGIN IMMEDIATE), says so, holds it
    const holder = startBg(q, [], { argv0: ["bun", `${q.dir}/hold.ts`, q.db, "8"] });
    await waitFor("the lock to be held", () => holder.stdout().includes("locked"), 30000);

    const started = performance.now();
    // SPOOLCTL_LOCK_WAIT=0: no riding out past the busy timeout (test/contention.test.ts covers the default).
    const noWait = { env: { SPOOLCTL_LOCK_WAIT: "0" } };
    const [asJsonRun, asText] = await Promise.all([
      q.run(["add", "--json", "--", "echo", "json"], noWait),
      q.run(["add", "--", "echo", "text"], noWait),
    ]);
    const asJson = { code: asJsonRun.code, env: asJsonRun.json };
    const waited = performance.now() - started;
    expect(holder.stdout()).not.toContain("released"); // both ran into the held lock

    expect(asJson.code).toBe(4);
    expect(asJson.env.ok).toBe(false);
    expect(asJson.env.data).toBeNull();
    const error = asJson.env.errors[0];
    expect({ code: error.code, exit_code: error.exit_code }).toEqual({ code: "LOCKED", exit_code: 4 });
    expect(error.remediation).toMatch(/retry/);
    expect(asText.code).toBe(4);
    expect(asText.stdout).toBe("");
    expect(asText.stderr).toContain("LOCKED");
    expect(waited).toBeGreaterThanOrEqual(4500); // they waited for the busy timeout first

    expect(await holder.exited).toBe(0);
    expect(holder.stdout()).toContain("released");
    expect((await q.jobs()).map((j) => j.id)).toEqual([first]); // nothing was added

    // The worker hit the lock too (heartbeats), said so, and is still there.
    await waitFor("the worker's transient line", () => w.stderr().includes("will retry"), 30000);
    expect(w.stderr()).toMatch(/^spoolctl: .*locked.*; will retry$/m);
    expect(w.proc.exitCode).toBeNull();
    writeFileSync(go, "");
    await waitFor("the running job to finish", async () => (await q.job(first))?.state === "done", 30000);
    expect((await q.attempt(first))!.state).toBe("succeeded");
    expect((await q.job(first))!.crashes).toBe(0);
    const next = await add(q, "--", "true");
    await waitFor("the worker to run a new job", async () => (await q.job(next))?.state === "done", 30000);
    w.proc.kill("SIGTERM");
    expect(await w.exited).toBe(0);
  },
  60000,
);

test.skipIf(ON_POSTGRES)(
  "Ctrl-Z (SIGTSTP) stops a busy worker between its transactions: an add beside the stopped worker never meets its write lock",
  async () => {
    // A worker with 4 trivial jobs at a time is inside a write transaction much of the time;
    // stopped there at once, it would keep SQLite's write lock for as long as it stays stopped.
    const ids = await addMany(
      q,
      Array.from({ length: 3000 }, () => ({ argv: ["true"] })),
    );
    const w = startWorker(q, ["--concurrency", "4", "--worker-id", "A"]);
    await waitFor("the worker to be busy", async () => (await q.job(ids[10]!))?.state === "done", 30000);
    const refused: string[] = [];
    for (let i = 0; i < 12; i++) {
      w.proc.kill("SIGTSTP");
      await waitFor("the worker to stop", () => procState(w.pid) === "T", 10000, 5);
      const r = await q.run(["add", "--json", "--", "true"], { env: { SPOOLCTL_LOCK_WAIT: "0" } });
      if (r.code !== 0) refused.push(r.json?.errors?.[0]?.code ?? `exit ${r.code}`);
      w.proc.kill("SIGCONT");
      await Bun.sleep(40 + ((i * 37) % 150)); // a different moment of the worker's loop each time
    }
    expect(refused).toEqual([]);
    expect((await q.job(ids.at(-1)!))?.state).not.toBe("done"); // still busy at the last stop
  },
  120000,
);
