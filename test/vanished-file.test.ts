/**
 * A SQLite queue file deleted or replaced under a running worker
 * (docs/architecture.md "Storage conditions", "A vanished or replaced file"):
 * the worker compares the path's (device, inode) with the file it opened on
 * every turn, stops claiming, stops what it runs and exits with
 * `QUEUE_REPLACED` (exit 3) instead of writing into an unlinked file for ever
 * while jobs added at the same path stay queued.
 *
 * SQLite-only: a PostgreSQL queue has no file.
 */
import { expect, test } from "bun:test";
import { copyFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { processLives, startWorker, stopProcessesOf } from "./support/processes.ts";
import { FAST_KNOBS, ON_POSTGRES, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue({ teardown: stopProcessesOf });

/** The JSON envelope a worker printed on stdout when it exited. */
function envelopeOf(stdout: string): any {
  return JSON.parse(stdout.trim().split("\n").at(-1)!);
}

test.skipIf(ON_POSTGRES)(
  "a deleted queue file: an idle worker exits with QUEUE_REPLACED, and a new worker runs the jobs added at the path",
  async () => {
    await q.addJob("--", "true");
    const w = startWorker(q, ["--json"], { env: FAST_KNOBS });
    await waitFor("the first job to be done", async () => (await q.job(1))?.state === "done");
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${q.db}${suffix}`, { force: true });
    const code = await Promise.race([w.exited, Bun.sleep(20000).then(() => "still running")]);
    expect(code).toBe(3);
    const env = envelopeOf(w.stdout());
    expect(env.ok).toBe(false);
    expect(env.errors[0].code).toBe("QUEUE_REPLACED");
    expect(env.errors[0].message).toContain("was deleted");
    expect(env.errors[0].remediation).toContain(`--db ${q.dbWord}`);

    // A job added at the path now is run by the next worker, not lost in the old file.
    const next = await q.addJob("--", "true");
    expect(next).toBe(1); // a fresh file
    const again = startWorker(q, ["--drain"], { env: FAST_KNOBS });
    expect(await again.exited).toBe(0);
    expect((await q.job(next))?.state).toBe("done");
  },
  60000,
);

test.skipIf(ON_POSTGRES)(
  "a replaced queue file: a busy worker stops its job and exits with QUEUE_REPLACED; its job is stopped",
  async () => {
    const id = await q.addJob("--", "sleep", "60");
    const backup = join(q.dir, "backup.db");
    const w = startWorker(q, [], { env: FAST_KNOBS });
    // The first heartbeat after the spawn records the job's process group.
    const pgid = await waitFor("the job's process group", async () => (await q.attempt(id))?.pgid);
    // A restored copy moved into place (what `cp backup q.db && mv` does): another inode at the path.
    copyFileSync(q.db, backup);
    for (const suffix of ["-wal", "-shm"]) rmSync(`${q.db}${suffix}`, { force: true });
    renameSync(backup, q.db);
    const code = await Promise.race([w.exited, Bun.sleep(20000).then(() => "still running")]);
    expect(code).toBe(3);
    expect(w.stderr()).toContain("QUEUE_REPLACED");
    expect(w.stderr()).toContain("was replaced");
    // Its job was stopped, not left running with nowhere to record its result.
    await waitFor("the job's process group to be gone", () => !processLives(pgid), 15000);
  },
  60000,
);
