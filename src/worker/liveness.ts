/**
 * Process identity for reaping (docs/architecture.md "Reaping"): a process is known by (host, PID,
 * start time). Linux: field 22 of `/proc/PID/stat` (clock ticks since boot) plus
 * the kernel's boot id; macOS: `ps -o lstart=`.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** What a liveness look-up concluded. `unknown` (permission error, failed look-up) counts as alive. */
export type Liveness = "alive" | "dead" | "unknown";

/**
 * This machine's host name (gethostname(2)). Linux reads it from /proc, the
 * same value: importing node:os costs the simple verbs' start-up, which load
 * this module for their views (docs/benchmarks.md "CLI start-up").
 */
export const HOST = hostName();

function hostName(): string {
  try {
    if (process.platform === "linux") return readFileSync("/proc/sys/kernel/hostname", "utf8").trim();
  } catch {
    // no /proc mounted: ask the C library
  }
  return (require("node:os") as typeof import("node:os")).hostname();
}

let cachedBootId: string | null | undefined;

/** The kernel's boot id (Linux), or null where there is none. */
export function bootId(): string | null {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    } catch {
      cachedBootId = null;
    }
  }
  return cachedBootId;
}

let cachedPidNs: string | null | undefined;

/**
 * This process's PID namespace: the inode of `/proc/self/ns/pid` (Linux), or
 * null where there is none. Two namespaces may share a host name (containers,
 * `unshare --pid --uts`); a PID means something only in its own.
 */
export function pidNamespace(): string | null {
  if (cachedPidNs === undefined) {
    try {
      cachedPidNs = /^pid:\[(\d+)\]$/.exec(readlinkSync("/proc/self/ns/pid"))?.[1] ?? null;
    } catch {
      cachedPidNs = null;
    }
  }
  return cachedPidNs;
}

/**
 * The inode of the machine's first PID namespace, fixed by the kernel
 * (PROC_PID_INIT_INO, Linux 3.8 and later): the one a process outside any
 * container runs in.
 */
const INITIAL_PID_NS = "4026531836";

/**
 * Whether this process runs in a PID namespace of its own (a container,
 * `unshare --pid`), not the machine's first one. Such a worker cannot tell
 * whether workers of other namespaces share its SQLite file, and a restarted
 * container never sees its PIDs again, so it is judged from elsewhere by its
 * lease: it keeps a watchdog that ends its runs before the lease can expire
 * (docs/architecture.md "A stopped worker").
 */
export function inOwnPidNamespace(): boolean {
  const ns = pidNamespace();
  return ns !== null && ns !== INITIAL_PID_NS;
}

/**
 * Whether a worker recorded as `who`, whose PIDs cannot be looked at from here
 * ({@link foreignPidSpace}), may have its jobs reaped once its lease expires
 * (docs/architecture.md "Reaping"). On a shared queue (PostgreSQL) every
 * worker keeps a watchdog that ends its runs first: yes. On a SQLite file, only
 * a worker of a namespace of its own keeps one ({@link inOwnPidNamespace});
 * one of the machine's first namespace does not, so what it runs may outlive
 * it (SIGKILL of the worker alone, SIGSTOP) and only a worker of that
 * namespace, which can look at its PID, may reap it. A row without a namespace
 * (older versions) keeps the lease rule.
 */
export function reapableByLease(who: ProcessIdentity, sharedQueue: boolean): boolean {
  return sharedQueue || !who.pidNs || who.pidNs !== INITIAL_PID_NS;
}

/**
 * Fields 3… of `/proc/PID/stat` (index 0 = state, 2 = process group, 19 = start
 * time), or null when the process is gone or unreadable. comm (field 2) may
 * contain spaces and parentheses, hence the split after the last ')'.
 */
export function statFields(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** Whether a `/proc/PID/stat` state letter is a zombie's or a dead process's (`Z`, `X`). */
export const dead = (state: string | undefined) => state === "Z" || state === "X";

/** Numeric entries of /proc, i.e. the PIDs. */
export function procPids(): string[] {
  return readdirSync("/proc").filter((name) => name.charCodeAt(0) >= 48 && name.charCodeAt(0) <= 57);
}

/**
 * The start time of a process as an opaque string, or null when the process
 * does not exist or cannot be read.
 */
export function processStartTime(pid: number): string | null {
  if (process.platform === "linux") {
    return statFields(pid)?.[19] ?? null; // field 22 overall
  }
  const out = Bun.spawnSync(["ps", "-o", "lstart=", "-p", String(pid)], { stdout: "pipe", stderr: "ignore" });
  const text = out.stdout.toString().trim();
  return out.exitCode === 0 && text ? text : null;
}

/** Whether a PID exists: `kill(pid, 0)`; EPERM means it exists but is not ours. */
function pidExists(pid: number): Liveness {
  try {
    process.kill(pid, 0);
    return "alive";
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ESRCH") return "dead";
    return "unknown";
  }
}

/** Whether `pid` is a zombie (Linux: state `Z` or `X` in `/proc/PID/stat`); false where that cannot be told. */
function isZombie(pid: number): boolean {
  if (process.platform !== "linux") return false;
  return dead(statFields(pid)?.[0]);
}

/**
 * Whether process `pid` has ended: gone, or a zombie not yet waited for
 * (Linux: `/proc/PID/stat`; elsewhere only "gone" is seen).
 */
export function processEnded(pid: number): boolean {
  return pidExists(pid) === "dead" || isZombie(pid);
}

/**
 * When process `pid` last ran, in milliseconds of the scheduler clock of the
 * CPU it last ran on (Linux `/proc/PID/sched`, `se.exec_start`; the kernel
 * needs CONFIG_SCHED_DEBUG, as Debian's has), or null where it cannot be read.
 * Each CPU keeps its own run-queue clock and on some machines (virtual CPUs
 * without a stable TSC) two CPUs' clocks differ by seconds: compare a reading
 * only with one taken on the same CPU ({@link lastRanAgoMs} does).
 */
function lastRanMs(pid: number | "self"): number | null {
  try {
    const line = readFileSync(`/proc/${pid}/sched`, "utf8")
      .split("\n")
      .find((l) => l.startsWith("se.exec_start"));
    const ms = Number(line?.slice(line.indexOf(":") + 1));
    return line && Number.isFinite(ms) ? ms : null;
  } catch {
    return null;
  }
}

/** The CPU process `pid` last ran on (field 39 of `/proc/PID/stat`), or null. */
function lastCpu(pid: number | "self"): number | null {
  const cpu = Number(statFields(pid)?.[36]);
  return Number.isInteger(cpu) ? cpu : null;
}

/**
 * About now on CPU `cpu`'s scheduler clock, milliseconds: this process's own
 * last run when it was on that CPU before and after reading it, else a reader
 * pinned to that CPU (`taskset`); null when neither can be had.
 */
function cpuClockMs(cpu: number): number | null {
  const before = lastCpu("self");
  const own = lastRanMs("self");
  if (before === cpu && lastCpu("self") === cpu && own !== null) return own;
  try {
    const out = Bun.spawnSync(["taskset", "-c", String(cpu), "cat", "/proc/self/sched"], {
      stdout: "pipe",
      stderr: "ignore",
    });
    if (out.exitCode !== 0) return null;
    const line = out.stdout
      .toString()
      .split("\n")
      .find((l) => l.startsWith("se.exec_start"));
    const ms = Number(line?.slice(line.indexOf(":") + 1));
    return line && Number.isFinite(ms) ? ms : null;
  } catch {
    return null;
  }
}

/**
 * How long ago process `pid` last ran, milliseconds (≥ 0), read on the clock of
 * the CPU it last ran on, so the answer holds when CPUs' clocks disagree
 * (docs/architecture.md "Clocks"). For a zombie this is how long ago it exited.
 * Null where the kernel does not say (no `/proc/PID/sched`, the process gone,
 * no `taskset` when this process runs on another CPU): callers fall back to a
 * bound.
 */
export function lastRanAgoMs(pid: number): number | null {
  const cpu = lastCpu(pid);
  const ranAt = lastRanMs(pid);
  if (cpu === null || ranAt === null) return null;
  const now = cpuClockMs(cpu);
  return now === null ? null : Math.max(0, now - ranAt);
}

/** A recorded process identity. */
export interface ProcessIdentity {
  host: string;
  pid: number;
  bootId: string | null;
  startTime: string | null;
  /** Its PID namespace ({@link pidNamespace}); null or absent: not recorded. */
  pidNs?: string | null;
}

/**
 * Whether `who`'s PID cannot be looked at from here (docs/architecture.md
 * "Reaping"): another host name, or another PID namespace recorded under ours
 * (a container that shares our host name). Such a worker is judged by its lease.
 */
export function foreignPidSpace(who: ProcessIdentity): boolean {
  if (who.host !== HOST) return true;
  const ns = pidNamespace();
  return Boolean(who.pidNs && ns && who.pidNs !== ns);
}

/**
 * Whether the process recorded as `who` is still that process (docs/architecture.md "Reaping"):
 * PID gone → dead; PID alive with another start time (recycled) → dead;
 * recorded under another boot → dead; another host, or another PID namespace
 * → unknown (not ours to judge); anything inconclusive → unknown.
 */
export function judge(who: ProcessIdentity): Liveness {
  if (foreignPidSpace(who)) return "unknown";
  const currentBoot = bootId();
  if (who.bootId && currentBoot && who.bootId !== currentBoot) return "dead";
  const exists = pidExists(who.pid);
  if (exists !== "alive") return exists;
  // A zombie has exited; under an init that never reaps it keeps its PID and start time for good.
  if (isZombie(who.pid)) return "dead";
  if (who.startTime === null) return "unknown";
  const now = processStartTime(who.pid);
  if (now === null) return pidExists(who.pid) === "dead" ? "dead" : "unknown";
  return now === who.startTime ? "alive" : "dead";
}

/**
 * Whether the process recorded as `who` is certainly gone, so that its jobs may
 * be reaped at once, without waiting out their lease (docs/architecture.md
 * "Reaping"): it ran on this host, under this boot (a boot id recorded and equal
 * to ours: another machine that shares our host name has another one), in
 * this PID namespace (recorded, where this system has namespaces:
 * {@link foreignPidSpace}), and
 * {@link judge} finds its PID gone, a zombie, or reused (another start time).
 */
export function deathCertain(who: ProcessIdentity): boolean {
  if (foreignPidSpace(who)) return false;
  // A row without a namespace (a worker of a version before schema v10) may be a twin container's: lease rules.
  if (pidNamespace() !== null && !who.pidNs) return false;
  const currentBoot = bootId();
  if (who.bootId === null || currentBoot === null || who.bootId !== currentBoot) return false;
  return judge(who) === "dead";
}

/** The state letter of process `pid` (`/proc/PID/stat`: `T` stopped, `t` traced, `D` in the kernel), or null. */
export function processState(pid: number): string | null {
  return statFields(pid)?.[0] ?? null;
}

/** The process group of process `pid`, or null when it cannot be read. */
export function processGroupOf(pid: number): number | null {
  const pgrp = Number(statFields(pid)?.[2]);
  return Number.isInteger(pgrp) ? pgrp : null;
}
