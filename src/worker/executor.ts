/**
 * The executor (docs/architecture.md "Execution", "Timeouts"): runs one attempt's argv in its
 * own session and process group (`Bun.spawn` with `detached: true`), stdin from
 * /dev/null, stdout/stderr written by the child straight into the attempt's
 * files, and on timeout or cancel kills the whole group: SIGTERM, grace while
 * the group lives, SIGKILL, then wait.
 */

import { accessSync, closeSync, existsSync, constants as fsConstants, statSync } from "node:fs";
import { constants } from "node:os";
import { dirname, isAbsolute, resolve } from "node:path";
import { KILL_GRACE_SECONDS } from "../model/timing.ts";
import type { Leftovers, ProcessEnd } from "../ops/outcome.ts";
import { TRACE_VARIABLES } from "../ops/trace-context.ts";
import { createAttemptFile } from "../store/ownership.ts";
import { isPgUrl, redactUrl } from "../store/postgres/url.ts";
import { diskFull } from "../store/space.ts";
import { processEnded, processStartTime } from "./liveness.ts";
import { groupHasLiveMembers, groupHoldsSelf, groupsWithEnv, leftoversOf } from "./process-groups.ts";
import { forgetProgramPath, programPath } from "./program-path.ts";

/** Grace between SIGTERM and SIGKILL, milliseconds (docs/architecture.md "Timeouts": up to 5 s). */
const KILL_GRACE_MS = KILL_GRACE_SECONDS * 1000;

/** Longest delay setTimeout accepts (2^31 − 1 ms, about 24.8 days); longer timeouts are chained. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Name of the environment variable that marks every process of an attempt. */
export const ATTEMPT_MARKER = "SPOOLCTL_ATTEMPT_TOKEN";

/**
 * The marker value of one attempt of one queue: stable across processes, so a
 * reaper can find an orphan's processes by their environment (see groupsWithEnv).
 */
export function attemptMarker(queueId: string, jobId: number, attemptNo: number): string {
  return `${ATTEMPT_MARKER}=${queueId}-${jobId}-${attemptNo}`;
}

/** Calls `fn` after `ms` milliseconds, even beyond setTimeout's 24.8-day limit; returns a canceller. */
function after(ms: number, fn: () => void): () => void {
  let timer: ReturnType<typeof setTimeout>;
  const arm = (left: number) => {
    timer = setTimeout(() => (left > MAX_TIMER_MS ? arm(left - MAX_TIMER_MS) : fn()), Math.min(left, MAX_TIMER_MS));
  };
  arm(Math.max(1, ms));
  return () => clearTimeout(timer);
}

/** What to run. */
export interface AttemptSpec {
  argv: string[];
  cwd: string | null;
  /** Variables layered over `baseEnv`. */
  env: Record<string, string>;
  /** The worker's environment, copied once per worker ({@link workerEnvironment}); default: that of process.env now. */
  baseEnv?: Record<string, string | undefined>;
  stdoutPath: string;
  stderrPath: string;
  /** Seconds; 0 is no time limit (NO_TIMEOUT). */
  timeoutSeconds: number;
  /** `NAME=value` put in the child's environment to recognise its processes later ({@link attemptMarker}). */
  marker?: string;
  graceMs?: number;
  /** End what the attempt leaves running once its leader exits (`--kill-leftovers`; docs/architecture.md "Leftover processes"). */
  killLeftovers?: boolean;
}

/** An attempt in flight. */
export interface RunningAttempt {
  /** PID of the child, which leads its own process group; null if it never started. */
  pid: number | null;
  /**
   * The child's start time, to recognise its group later (orphan cleanup):
   * read from /proc at the first call while the child runs (a heartbeat, a
   * kill), then kept; null when never read before the child ended, or unreadable.
   */
  startTime(): string | null;
  /** Resolves when the child has exited (and, after a kill, its group is gone or SIGKILLed). */
  done: Promise<ProcessEnd>;
  /** Kills the group because the job was canceled or the worker is interrupted. */
  stop(reason: "canceled" | "interrupted"): void;
}

/** Whether any process of group `pgid` is still alive (zombies do not count). */
function groupAlive(pgid: number): boolean {
  return groupHasLiveMembers(pgid);
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is gone already.
  }
}

/**
 * SIGTERM to the group, wait while it lives up to `graceMs`, then SIGKILL if it
 * still does. Escalation depends on the group being alive, not on a flag. A
 * group that holds this process ({@link groupHoldsSelf}) is left alone.
 * SIGCONT follows the SIGTERM: a stopped process acts on nothing but SIGKILL
 * until it is continued, so it would otherwise sit out the whole grace.
 */
export async function killGroup(pgid: number, graceMs = KILL_GRACE_MS): Promise<void> {
  // Never this worker's own group or one holding it, nor -1/0 (docs/architecture.md "Orphans").
  if (groupHoldsSelf(pgid)) return;
  signalGroup(pgid, "SIGTERM");
  signalGroup(pgid, "SIGCONT");
  const deadline = performance.now() + graceMs;
  while (groupAlive(pgid) && performance.now() < deadline) await Bun.sleep(20);
  if (!groupAlive(pgid)) return;
  signalGroup(pgid, "SIGKILL");
  // "…then wait": SIGKILL cannot be caught, but a process in uninterruptible
  // sleep dies only when its I/O returns; wait a bounded while for the group.
  const killDeadline = performance.now() + graceMs;
  while (groupAlive(pgid) && performance.now() < killDeadline) await Bun.sleep(20);
}

function markerEnv(marker: string | undefined): Record<string, string> {
  if (!marker) return {};
  const eq = marker.indexOf("=");
  return { [marker.slice(0, eq)]: marker.slice(eq + 1) };
}

/**
 * A job's environment (docs/architecture.md "Execution"): the worker's, as
 * {@link workerEnvironment} prepared it (an inherited PostgreSQL
 * `SPOOLCTL_DB` without its password), the job's own variables over it, then
 * the attempt marker. A `SPOOLCTL_DB` the job sets itself is left as given.
 */
export function jobEnvironment(
  workerEnv: Record<string, string | undefined>,
  jobEnv: Record<string, string>,
  marker?: string,
): Record<string, string | undefined> {
  return { ...workerEnv, ...jobEnv, ...markerEnv(marker) };
}

/** `permanent`: the command itself can never start, so retrying it is pointless (docs/architecture.md "Execution"). */
function spawnFailed(error: string, permanent = false): RunningAttempt {
  return {
    pid: null,
    startTime: () => null,
    done: Promise.resolve({ kind: "spawn_failed", error, permanent }),
    stop() {},
  };
}

/** Bytes the kernel counts for argv or the environment: each string and its NUL. */
function execBytes(strings: string[]): number {
  return strings.reduce((n, s) => n + Buffer.byteLength(s) + 1, 0);
}

/**
 * Why `Bun.spawn` refused to start the attempt, and whether that can ever
 * change (docs/architecture.md "Execution"): the command's own faults (program
 * missing, not executable, not an executable format, argv and environment too
 * large) are permanent; where it runs (a cwd that cannot be entered) is not.
 */
function spawnError(error: unknown, spec: AttemptSpec, env: Record<string, string | undefined>): RunningAttempt {
  const { code, message } = error as { code?: string; message: string };
  const program = spec.argv[0]!;
  if (spec.cwd !== null && (code === "EACCES" || code === "ENOENT")) {
    try {
      accessSync(spec.cwd, fsConstants.X_OK);
    } catch {
      // posix_spawn blames the program for a chdir it could not do.
      return spawnFailed(`cannot enter cwd ${spec.cwd}: permission denied`);
    }
  }
  switch (code) {
    case "ENOENT":
      if (program.includes("/") && existsSync(resolve(spec.cwd ?? ".", program)))
        return spawnFailed(`cannot start ${program}: the interpreter on its #! line was not found`, true);
      // A relative path without a cwd was looked up in this worker's folder: say which (README "Adding jobs").
      return spawnFailed(
        `program not found: ${program}${program.includes("/") && !isAbsolute(program) && spec.cwd === null ? ` (in the worker's folder ${process.cwd()}: the job has no --cwd)` : ""}`,
        true,
      );
    case "EACCES":
      return spawnFailed(`cannot start ${program}: permission denied (not an executable file)`, true);
    case "ENOEXEC":
      return spawnFailed(`cannot start ${program}: not an executable format (a script needs a #! line)`, true);
    case "E2BIG": {
      const vars = Object.entries(env)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `${k}=${v}`);
      const longest = Math.max(...spec.argv.map((a) => Buffer.byteLength(a)));
      return spawnFailed(
        `cannot start ${program}: argument list too long (argv ${execBytes(spec.argv)} bytes in ${spec.argv.length} arguments, the longest ${longest}; environment ${execBytes(vars)} bytes in ${vars.length} variables; Linux allows 128 KiB per argument and about 2 MiB for both)`,
        true,
      );
    }
  }
  return spawnFailed(
    /not found/i.test(message) ? `program not found: ${program}` : `cannot start ${program}: ${message}`,
    /not found/i.test(message),
  );
}

/**
 * The worker's environment for its children (docs/architecture.md
 * "Execution"), copied once per worker: reading process.env is costly in Bun,
 * and it does not change under a running worker. An inherited `SPOOLCTL_DB`
 * that is a PostgreSQL URL loses its password (a job's output and its own
 * children must not carry it); a job that runs spoolctl still reaches the
 * queue through `PGPASSWORD` or `~/.pgpass`. The worker's own `TRACEPARENT`,
 * `TRACESTATE` and `BAGGAGE` are left out: each attempt gets its own
 * (docs/architecture.md "Traces").
 */
export function workerEnvironment(
  base: Record<string, string | undefined> = process.env,
): Record<string, string | undefined> {
  const env = { ...base };
  if (env.SPOOLCTL_DB && isPgUrl(env.SPOOLCTL_DB)) env.SPOOLCTL_DB = redactUrl(env.SPOOLCTL_DB);
  // The worker's own trace is not its jobs': each attempt sets its own (src/ops/trace-context.ts).
  for (const name of TRACE_VARIABLES) delete env[name];
  return env;
}

/**
 * One look, once the attempt's leader exited on its own, for what it left
 * running (docs/architecture.md "Leftover processes"): its group's members
 * and the processes carrying its marker. With `killLeftovers`, their groups
 * are ended as a timeout ends a job's (SIGTERM, grace, SIGKILL), and
 * `killed` says whether every one of them is gone. `{}` when nothing is left.
 */
async function leftBehind(leader: number, spec: AttemptSpec): Promise<{ left?: Leftovers }> {
  const found = leftoversOf(leader, spec.marker);
  if (found.length === 0) return {};
  const pids = found.map((p) => p.pid);
  if (!spec.killLeftovers) return { left: { pids, killed: false } };
  const groups = [...new Set(found.map((p) => p.pgid))];
  await Promise.all(groups.map((g) => killGroup(g, spec.graceMs ?? KILL_GRACE_MS)));
  // Said ended only when none lives on (a group holding the worker is never signalled; D state outlives SIGKILL).
  return { left: { pids, killed: pids.every(processEnded) } };
}

/** Starts an attempt. Never throws: a failure to start is a `spawn_failed` end. */
export function startAttempt(spec: AttemptSpec): RunningAttempt {
  if (spec.cwd !== null) {
    try {
      if (!statSync(spec.cwd).isDirectory()) return spawnFailed(`cwd ${spec.cwd} is not a directory`);
    } catch {
      return spawnFailed(`cwd ${spec.cwd} does not exist`);
    }
  }
  let outFd: number | null = null;
  let errFd: number | null = null;
  try {
    outFd = createAttemptFile(spec.stdoutPath);
    errFd = createAttemptFile(spec.stderrPath);
  } catch (error) {
    if (outFd !== null) closeSync(outFd);
    return spawnFailed(`cannot write the attempt's output: ${(error as Error).message}`);
  }
  let proc: ReturnType<typeof Bun.spawn>;
  const env = jobEnvironment(spec.baseEnv ?? workerEnvironment(), spec.env, spec.marker);
  const program = spec.argv[0]!;
  const found = programPath(program, env.PATH);
  const spawn = (argv: string[]) =>
    Bun.spawn(argv, {
      cwd: spec.cwd ?? undefined,
      env,
      stdin: "ignore",
      stdout: outFd!,
      stderr: errFd!,
      detached: true,
      argv0: program,
    });
  try {
    try {
      proc = spawn(found === null ? spec.argv : [found, ...spec.argv.slice(1)]);
    } catch (error) {
      if (found === null) throw error;
      // The path found earlier may be gone: look again, as a first spawn would.
      forgetProgramPath(program, env.PATH);
      proc = spawn(spec.argv);
    }
  } catch (error) {
    return spawnError(error, spec, env);
  } finally {
    closeSync(outFd);
    closeSync(errFd);
  }
  const pid = proc.pid;
  let ended = false;
  let startTime: string | null | undefined;
  // No /proc read per spawn: most trivial jobs end before anyone needs it.
  const readStartTime = () => {
    if (startTime === undefined && !ended) startTime = processStartTime(pid);
    return startTime ?? null;
  };
  let reason: "timed_out" | "canceled" | "interrupted" | null = null;
  let killing: Promise<void> | null = null;
  const kill = (why: NonNullable<typeof reason>) => {
    if (reason === null) reason = why;
    readStartTime();
    killing ??= (async () => {
      // The group at once, then any process of the attempt that left it with setsid (found by its
      // marker: a /proc scan, 0.2-0.5 s on a busy host, that the group's signal need not wait for).
      const group = killGroup(pid, spec.graceMs ?? KILL_GRACE_MS);
      const escaped = spec.marker ? groupsWithEnv(spec.marker).filter((g) => g !== pid) : [];
      await Promise.all([group, ...escaped.map((g) => killGroup(g, spec.graceMs ?? KILL_GRACE_MS))]);
    })();
  };
  // A timeout of 0 is no time limit (NO_TIMEOUT, `--timeout none`): no timer at all.
  const cancelTimer = spec.timeoutSeconds > 0 ? after(spec.timeoutSeconds * 1000, () => kill("timed_out")) : () => {};
  const done = (async (): Promise<ProcessEnd> => {
    await proc.exited;
    ended = true;
    cancelTimer();
    if (killing) await killing;
    const code = proc.exitCode;
    // Bun reports a named signal as its name and an unnamed one (real-time signals) as its number.
    const rawSignal = proc.signalCode as unknown;
    const signal =
      typeof rawSignal === "number"
        ? rawSignal
        : typeof rawSignal === "string" && rawSignal !== ""
          ? (constants.signals[rawSignal as NodeJS.Signals] ?? (/^\d+$/.test(rawSignal) ? Number(rawSignal) : null))
          : null;
    if (reason === "timed_out") return { kind: "timed_out", code, signal };
    if (reason === "canceled") return { kind: "canceled", code, signal };
    if (reason === "interrupted") return { kind: "interrupted", code, signal };
    // A failure while the output's disk is full is the disk's doing, not the job's (docs/architecture.md "Storage conditions").
    if ((signal !== null || code !== 0) && diskFull(dirname(spec.stdoutPath))) {
      return { kind: "output_write_failed", code, signal, error: "no space left on device" };
    }
    const left = await leftBehind(pid, spec);
    if (signal !== null) return { kind: "signaled", signal, ...left };
    // A missing exit code is never success (docs/architecture.md "Execution").
    return code === null ? { kind: "signaled", signal: 0, ...left } : { kind: "exited", code, ...left };
  })();
  return { pid, startTime: readStartTime, done, stop: (why) => kill(why) };
}
