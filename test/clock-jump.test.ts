/**
 * Times people can trust (docs/architecture.md "Clocks"):
 * - an attempt's duration (finished_at − started_at) is its real length even
 *   when the wall clock jumps while it runs: the worker dates the end as the
 *   start plus the monotonic time elapsed. A real worker runs under
 *   libfaketime (Debian's `faketime` package), whose offset file is changed
 *   from "+0" to "-1h" while a `sleep 2` job runs; it used to be stored as
 *   about −3,598 s. Skipped where libfaketime is not installed.
 * - human views print times in the user's time zone (TZ) with the offset;
 *   JSON stays epoch seconds.
 */
import { expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startWorker, stopProcessesOf } from "./support/processes.ts";
import { FAST_KNOBS, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const LIBFAKETIME = ["/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1"].find(
  existsSync,
);

const q = useTempQueue({ teardown: stopProcessesOf });

test.skipIf(!LIBFAKETIME)(
  "a wall clock set back one hour while a job runs: its duration stays its real length",
  async () => {
    const offsetFile = join(q.dir, "faketime");
    writeFileSync(offsetFile, "+0\n");
    const id = await q.addJob("--", "sleep", "2");
    const w = startWorker(q, ["--once"], {
      env: {
        ...FAST_KNOBS,
        LD_PRELOAD: LIBFAKETIME!,
        FAKETIME_TIMESTAMP_FILE: offsetFile,
        FAKETIME_NO_CACHE: "1",
        FAKETIME_DONT_FAKE_MONOTONIC: "1",
      },
    });
    await waitFor("the job to run", async () => (await q.job(id))?.state === "running");
    writeFileSync(offsetFile, "-1h\n"); // the worker's wall clock jumps back an hour
    expect(await w.exited).toBe(0);
    const attempt = (await q.attempt(id))!;
    const seconds = attempt.finished_at! - attempt.started_at;
    expect(attempt.state).toBe("succeeded");
    expect(seconds).toBeGreaterThan(1.5);
    expect(seconds).toBeLessThan(30);
    const job = (await q.job(id))!;
    expect(job.finished_at! - job.started_at!).toBeCloseTo(seconds, 3);
  },
  60000,
);

test("views print times in the user's TZ with its offset; JSON stays epoch seconds", async () => {
  const id = await q.addJob("--", "true");
  const created = (await q.job(id))!.created_at;
  const utc = new Date(created * 1000).toISOString();
  const india = (await q.run(["show", `${id}`], { env: { TZ: "Asia/Kolkata" } })).stdout;
  const shifted = new Date(created * 1000 + 330 * 60_000).toISOString().slice(0, 23);
  expect(india).toContain(`${shifted}+05:30`);
  expect(india).not.toContain(utc);
  const york = (await q.run(["show", `${id}`], { env: { TZ: "America/New_York" } })).stdout;
  expect(york).toMatch(/T\d\d:\d\d:\d\d\.\d{3}-0[45]:00/);
  expect((await q.run(["show", `${id}`], { env: { TZ: "UTC" } })).stdout).toContain(utc);
  const json = await q.json(["show", `${id}`], { env: { TZ: "Asia/Kolkata" } });
  expect(json.env.data.job.created_at).toBe(created);
}, 60000);
