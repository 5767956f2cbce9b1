/**
 * Riding out a busy queue (docs/architecture.md "Contention"): a write that
 * meets `LOCKED` (SQLite's busy timeout ran out, PostgreSQL's lock timeout)
 * is tried again after a growing, jittered pause until a time limit, instead
 * of being refused while the queue is merely busy. The retry is exact: a
 * `LOCKED` transaction never committed (SQLite answers busy at `BEGIN
 * IMMEDIATE`, or the driver rolls back), so trying again cannot add twice.
 */
import { SpoolError } from "../contract/errors.ts";
import { LOCK_WAIT_DEFAULT_SECONDS, LOCK_WAIT_MAX_SECONDS } from "../model/limits.ts";

/**
 * The lock-wait limit in seconds from `SPOOLCTL_LOCK_WAIT` (0 = fail at the
 * first `LOCKED`), or the default when unset. Raises `INVALID_INPUT` for a
 * value that is not a number of seconds in 0..3600.
 */
export function lockWaitSeconds(env: Record<string, string | undefined> = process.env): number {
  const raw = env.SPOOLCTL_LOCK_WAIT;
  if (raw === undefined || raw.trim() === "") return LOCK_WAIT_DEFAULT_SECONDS;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > LOCK_WAIT_MAX_SECONDS) {
    throw new SpoolError(
      "INVALID_INPUT",
      `SPOOLCTL_LOCK_WAIT must be a number of seconds from 0 to ${LOCK_WAIT_MAX_SECONDS}`,
      {
        remediation: `unset it for the default (${LOCK_WAIT_DEFAULT_SECONDS}s), or set e.g. SPOOLCTL_LOCK_WAIT=120`,
        detail: { env: "SPOOLCTL_LOCK_WAIT" },
      },
    );
  }
  return n;
}

/** Whether `error` is the queue's `LOCKED`. */
function isLocked(error: unknown): error is SpoolError {
  return error instanceof SpoolError && error.code === "LOCKED";
}

/** Options of {@link rideOutLock}. */
export interface RideOutOptions {
  /** Give up after this many seconds of trying (0: the first `LOCKED` is final). */
  limitSeconds: number;
  /** Told before each pause, with the seconds waited so far. */
  onWait?: (error: SpoolError, waitedSeconds: number) => void;
}

/**
 * Runs `fn` until it does not raise `LOCKED` or `limitSeconds` have passed;
 * pauses 25 ms doubling to 1 s, each drawn at random from its upper half so
 * that many waiting writers do not retry in step. The final `LOCKED` names the
 * whole wait. Other errors propagate at once.
 */
export async function rideOutLock<T>(fn: () => Promise<T>, opts: RideOutOptions): Promise<T> {
  const started = performance.now();
  for (let pause = 25; ; pause = Math.min(pause * 2, 1000)) {
    try {
      return await fn();
    } catch (error) {
      if (!isLocked(error)) throw error;
      const waited = (performance.now() - started) / 1000;
      const sleep = pause / 2 + Math.random() * (pause / 2);
      if (waited + sleep / 1000 > opts.limitSeconds) {
        if (opts.limitSeconds <= 0) throw error;
        throw new SpoolError(
          "LOCKED",
          `${error.message.replace(/ for \d+(\.\d+)?s$/, "")} (waited ${Math.round(waited)}s in all, the SPOOLCTL_LOCK_WAIT limit)`,
          {
            remediation: error.remediation ?? "retry in a moment",
            detail: { ...(error.detail ?? {}), waited_seconds: Math.round(waited) },
          },
        );
      }
      opts.onWait?.(error, waited);
      await Bun.sleep(sleep);
    }
  }
}
