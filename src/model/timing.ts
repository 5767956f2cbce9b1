/**
 * The constants of heartbeat and reap timing (docs/architecture.md "Heartbeat
 * and lease"), in seconds, which `capabilities` publishes. The effective
 * timing, with the test knobs, is the worker's (src/worker/timing.ts).
 */

/** Default heartbeat interval, seconds. */
export const HEARTBEAT_SECONDS = 5;
/** Floor of the reap threshold, seconds. */
export const REAP_FLOOR_SECONDS = 30;
/** Grace between SIGTERM and SIGKILL of a job's process group (timeout, cancel, lost job), seconds. */
export const KILL_GRACE_SECONDS = 5;
/** Bounds accepted for the test knobs, seconds. */
export const KNOB_BOUNDS = { min: 0.01, max: 3600 } as const;
