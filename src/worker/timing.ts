/**
 * Heartbeat and reap timing (docs/architecture.md "Heartbeat and lease"), in seconds. The test knobs
 * `SPOOLCTL_TEST_HEARTBEAT_INTERVAL` and `SPOOLCTL_TEST_REAP_THRESHOLD` shrink
 * both for tests; `capabilities` publishes the defaults (src/model/timing.ts).
 */
import { closeSync, openSync, readSync } from "node:fs";
import { HEARTBEAT_SECONDS, KILL_GRACE_SECONDS, KNOB_BOUNDS, REAP_FLOOR_SECONDS } from "../model/timing.ts";

function knob(name: string, env: NodeJS.ProcessEnv): number | null {
  const raw = env[name];
  if (raw === undefined || raw === "") return null;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < KNOB_BOUNDS.min || n > KNOB_BOUNDS.max) return null;
  return n;
}

/** The effective timing: heartbeat interval and reap threshold, seconds. */
export interface Timing {
  heartbeat: number;
  reapThreshold: number;
}

/** Reads the timing, honouring the test knobs; the threshold defaults to max(4 × heartbeat, 30 s). */
export function readTiming(env: NodeJS.ProcessEnv = process.env): Timing {
  const heartbeat = knob("SPOOLCTL_TEST_HEARTBEAT_INTERVAL", env) ?? HEARTBEAT_SECONDS;
  const reapThreshold = knob("SPOOLCTL_TEST_REAP_THRESHOLD", env) ?? Math.max(4 * heartbeat, REAP_FLOOR_SECONDS);
  return { heartbeat, reapThreshold };
}

/**
 * How long a job requeued by `retry --force` waits before it is due again, seconds:
 * one heartbeat (the old worker learns that it lost the job) plus the kill grace (it
 * stops the process) plus a second of margin, so that the new attempt does not run
 * beside the old one (docs/architecture.md "Retry").
 */
export function forcedRetryHoldoffSeconds(env: NodeJS.ProcessEnv = process.env): number {
  return readTiming(env).heartbeat + KILL_GRACE_SECONDS + 1;
}

/**
 * How long a worker on a shared queue may go without renewing its leases
 * before its running jobs are ended, seconds (docs/architecture.md "Heartbeat
 * and lease", "A stopped worker"): one heartbeat before the lease can expire,
 * and never less than two heartbeats, so that a worker renewing on time is
 * never acted on. The worker itself and its watchdog act at this silence, so a
 * job is over before another host may reap it (with the defaults; test knobs
 * with a heartbeat over a third of the lease put it at or past the lease's end).
 */
export function leaseGuardSeconds(timing: Timing): number {
  return Math.max(timing.reapThreshold - timing.heartbeat, 2 * timing.heartbeat);
}

/**
 * The watchdog's grace between SIGTERM and SIGKILL, seconds: the usual
 * {@link KILL_GRACE_SECONDS}, but at most half the time left between
 * {@link leaseGuardSeconds} and the lease's expiry, so that even SIGKILL
 * lands before another host may re-run the job; none when no time is left.
 */
export function watchdogGraceSeconds(timing: Timing): number {
  return Math.max(0, Math.min(KILL_GRACE_SECONDS, (timing.reapThreshold - leaseGuardSeconds(timing)) / 2));
}

/** The last reading of /proc/uptime, and this process's own clock then (see {@link sharedClockNs}). */
let lastShared: { shared: bigint; own: bigint } | null = null;
/** /proc/uptime, opened once (close-on-exec): each reading is one `pread` at offset 0, not open/read/read/close. */
let uptimeFd: number | null = null;
const uptimeText = Buffer.alloc(64);

/** The kernel's boot clock now, from /proc/uptime ("12345.67 …"); raises when it cannot be read. */
function readUptimeNs(): bigint {
  uptimeFd ??= openSync("/proc/uptime", "r");
  let n: number;
  try {
    // A seq_file regenerates its text for a read at offset 0: the same reading as opening it anew.
    n = readSync(uptimeFd, uptimeText, 0, uptimeText.length, 0);
  } catch (error) {
    closeSync(uptimeFd);
    uptimeFd = null;
    throw error;
  }
  const text = uptimeText.toString("latin1", 0, n);
  const [whole, fraction = ""] = text.slice(0, text.indexOf(" ")).split(".");
  return BigInt(whole!) * 1_000_000_000n + BigInt(fraction.padEnd(9, "0").slice(0, 9));
}

/**
 * Now, in nanoseconds, on a clock that a worker and its watchdog — two
 * processes — read alike (docs/architecture.md "A stopped worker", "Clocks"):
 * the kernel's boot clock as /proc/uptime gives it, monotonic, in steps of
 * 10 ms, floored, so that of two readings in either process the later is never
 * the smaller. Read anew every time (one `pread` of a file kept open): one
 * reading at start plus `process.hrtime` deltas would not do, since that
 * reading is floored by up to 10 ms, differently in each process, and a later
 * reading in one could then be the smaller. Not `process.hrtime` alone: Bun
 * counts it from each process's own start, so the worker's renewals and its
 * watchdog's ledger disagreed by the time between their starts. Where
 * /proc/uptime cannot be read: not Linux (no watchdog to agree with), this
 * process's monotonic clock; a failed read (out of file descriptors), carried
 * on from the last reading.
 */
export function sharedClockNs(): bigint {
  const own = process.hrtime.bigint();
  try {
    const shared = readUptimeNs();
    lastShared = { shared, own };
    return shared;
  } catch {
    return lastShared === null ? own : lastShared.shared + (own - lastShared.own);
  }
}
