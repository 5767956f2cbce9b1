/**
 * A worker and its watchdog read one clock (docs/architecture.md "A stopped
 * worker", "Clocks"). The worker tells the watchdog when its leases were
 * renewed and later asks its ledger whether a job ended after the job's claim;
 * the watchdog dates both its silence and its ledger lines. Bun's
 * `process.hrtime` counts from each process's own start, so on it the two
 * disagreed by the time between their starts: a job claimed while the worker
 * was already silent and ended by the watchdog read as ended before its claim,
 * and was recorded `failed` (signal 15) instead of `interrupted` — a live worker
 * charging its own job for a stop of its lease (test/chaos.test.ts on
 * PostgreSQL under load).
 *
 * Here this test process plays the worker: the watchdog ends its children that
 * lead sessions of their own. And the silence it waits for is the worker's own
 * limit, never under two heartbeats (timing.ts leaseGuardSeconds).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processStartTime } from "../src/worker/liveness.ts";
import { leaseGuardSeconds, sharedClockNs, watchdogGraceSeconds } from "../src/worker/timing.ts";
import { WATCHDOG_ARG, Watchdog } from "../src/worker/watchdog.ts";
import { CLI } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const GUARD_SECONDS = 0.3;
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const clean of cleanups.splice(0)) clean();
});

/** A job as the executor starts it: a child leading a session of its own. */
function job(): { pid: number; startTime: string | null; exited: Promise<number> } {
  const proc = Bun.spawn(["sleep", "60"], { stdin: "ignore", stdout: "ignore", stderr: "ignore", detached: true });
  cleanups.push(() => proc.kill("SIGKILL"));
  return { pid: proc.pid, startTime: processStartTime(proc.pid), exited: proc.exited };
}

/** The ledger's time for process `pid`, as the watchdog wrote it (`PID START_TIME AT_NS`). */
function ledgerAt(ledger: string, pid: number): bigint | null {
  const line = readFileSync(ledger, "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${pid} `));
  return line === undefined ? null : BigInt(line.split(" ")[2]!);
}

describe.skipIf(process.platform !== "linux")("a worker and its watchdog on one clock", () => {
  test("a job claimed after the worker fell silent and ended by the watchdog is in its ledger as ended after its claim", async () => {
    const dir = mkdtempSync(join(tmpdir(), "spoolctl-watchdog-clock-"));
    const troubles: string[] = [];
    const renewedNs = sharedClockNs();
    const watchdog = new Watchdog(
      {
        command: ["bun", CLI, WATCHDOG_ARG],
        workerId: "w-clock",
        guardSeconds: GUARD_SECONDS,
        graceSeconds: 1,
        recheckSeconds: 0.02,
        dir,
        say: false,
      },
      (message) => troubles.push(message),
    );
    cleanups.push(() => {
      watchdog.close();
      rmSync(dir, { recursive: true, force: true });
    });

    // Never renewed: once the guard has passed the watchdog ends the first job, then looks again every 20 ms.
    const first = job();
    await waitFor("the watchdog to end the first job", () => first.exited, 60_000);
    const firstAt = ledgerAt(watchdog.ledger, first.pid);
    expect(firstAt).not.toBeNull();
    // Never before the guard after the last renewal: a worker that renews is never acted on.
    expect(firstAt! - renewedNs >= BigInt(GUARD_SECONDS * 1e9)).toBe(true);

    // Claimed while the worker is still silent (as a worker whose heartbeats hang still claims): ended at the next look.
    const claimNs = sharedClockNs();
    const second = job();
    await waitFor("the watchdog to end the second job", () => second.exited, 60_000);
    const afterNs = sharedClockNs();
    const at = ledgerAt(watchdog.ledger, second.pid);
    expect(at).not.toBeNull();
    expect({ afterClaim: at! >= claimNs, beforeNow: at! <= afterNs }).toEqual({ afterClaim: true, beforeNow: true });
    // What the worker asks when the job's process has ended (src/worker/loop.ts): ended by the watchdog, so interrupted.
    expect(watchdog.ended(second.pid, second.startTime, claimNs)).toBe(true);
    expect(watchdog.ended(second.pid, null, claimNs)).toBe(true);
    expect(troubles).toEqual([]);
  }, 120_000);
});

test("the guard is the worker's own limit: one heartbeat before the lease ends, never under two heartbeats", () => {
  expect(leaseGuardSeconds({ heartbeat: 5, reapThreshold: 30 })).toBe(25);
  expect(watchdogGraceSeconds({ heartbeat: 5, reapThreshold: 30 })).toBe(2.5);
  expect(leaseGuardSeconds({ heartbeat: 0.5, reapThreshold: 4 })).toBe(3.5);
  // A heartbeat longer than the lease (test knobs): the watchdog must not act between two renewals on time.
  expect(leaseGuardSeconds({ heartbeat: 0.2, reapThreshold: 0.05 })).toBe(0.4);
  expect(watchdogGraceSeconds({ heartbeat: 0.2, reapThreshold: 0.05 })).toBe(0);
});
