/**
 * Schedules on a stepped clock, on one machine (docs/architecture.md
 * "Clocks"): a worker's wall clock stepped forward makes the slots it passed
 * due at once, and the catch-up policy fires the newest and records the rest
 * as one `missed` row with their count, never silently; stepped back, the
 * next slot kept in the row waits, so no slot fires twice. A real worker runs
 * under libfaketime (Debian's `faketime` package, installed by .ci/run),
 * whose offset file is stepped as NTP or `date -s` would. SQLite only: on
 * PostgreSQL the queue's clock is the database's (test/pg-clock-step.test.ts).
 */
import { expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startWorker, stopProcessesOf } from "./support/processes.ts";
import { FAST_KNOBS, ON_POSTGRES, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const LIBFAKETIME = ["/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1"].find(
  existsSync,
);

const q = useTempQueue({ teardown: stopProcessesOf });

interface Slot {
  slot: number;
  outcome: string;
  job_id: number | null;
  detail: string | null;
}

async function slots(): Promise<Slot[]> {
  const r = await q.run(["schedule", "list", "tick", "--json"]);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout).data.slots as Slot[];
}

test.skipIf(!LIBFAKETIME || ON_POSTGRES)(
  "a wall clock stepped +20 s then back: the passed slots are one missed row, and no slot fires twice",
  async () => {
    const offsetFile = join(q.dir, "faketime");
    writeFileSync(offsetFile, "+0\n");
    expect((await q.run(["schedule", "add", "tick", "--every", "2s", "--", "true"])).code).toBe(0);
    const w = startWorker(q, [], {
      env: {
        ...FAST_KNOBS,
        LD_PRELOAD: LIBFAKETIME!,
        FAKETIME_TIMESTAMP_FILE: offsetFile,
        FAKETIME_NO_CACHE: "1",
        FAKETIME_DONT_FAKE_MONOTONIC: "1",
      },
    });
    const fired = async () => (await slots()).filter((s) => s.outcome === "fired");
    await waitFor("two slots fired on time", async () => (await fired()).length >= 2, 60_000);
    writeFileSync(offsetFile, "+20s\n"); // the worker's wall clock steps forward
    const missed = await waitFor(
      "the passed slots recorded as missed",
      async () => (await slots()).find((s) => s.outcome === "missed"),
      60_000,
    );
    // About ten 2 s slots were passed: all but the newest are counted, none left out.
    const { count } = JSON.parse(missed.detail!) as { count: number };
    expect(count).toBeGreaterThanOrEqual(5);
    expect(count).toBeLessThanOrEqual(15);
    const afterStep = (await fired()).length;
    writeFileSync(offsetFile, "+0\n"); // and back, as a correction would
    // The row keeps the next slot ~20 s ahead of the stepped-back clock; slots resume after it.
    await waitFor(
      "two more slots fired after the step back",
      async () => (await fired()).length >= afterStep + 2,
      90_000,
    );
    w.proc.kill("SIGTERM");
    expect(await w.exited).toBe(0);
    const all = await slots();
    const times = all.map((s) => s.slot);
    expect(new Set(times).size).toBe(times.length); // no slot decided twice
    const jobs = all.filter((s) => s.outcome === "fired").map((s) => s.job_id);
    expect(new Set(jobs).size).toBe(jobs.length);
    // Fired slots are 2 s apart but for the one gap the missed row accounts for.
    const firedTimes = all
      .filter((s) => s.outcome === "fired")
      .map((s) => s.slot)
      .sort((a, b) => a - b);
    const gaps = firedTimes.slice(1).map((t, i) => t - firedTimes[i]!);
    expect(gaps.filter((g) => g !== 2)).toEqual([2 * (count + 1)]);
  },
  180_000,
);
