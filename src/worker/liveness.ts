/**
 * Process identity for reaping (docs/architecture.md "Reaping"): a process is known by (host, PID,
 * start time). Linux: field 22 of `/proc/PID/stat` (clock ticks since boot) plus
 * the kernel's boot id; macOS: `ps -o lstart=`.
 */
import { readdirSync, readFileSync, readlinkSync, realpathSync } from "node:fs";

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
 * Fields 3… of `/proc/PID/stat` (index 0 = state, 2 = process group, 19 = start
 * time), or null when the process is gone or unreadable. comm (field 2) may
 * contain spaces and parentheses, hence the split after the last ')'.
 */
function statFields(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

const dead = (state: string | undefined) => state === "Z" || state === "X";

/** Numeric entries of /proc, i.e. the PIDs. */
function procPids(): string[] {
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

/**
 * The process groups this process must never signal, whatever a scan found in
 * them (docs/architecture.md "Orphans"): its own (a worker need not lead its
 * group: `sh -c '… & spoolctl work'`), and those of its ancestors — the shell
 * or job that started it — up to PID 1. Linux (`/proc`); elsewhere empty.
 */
export function heldGroups(): Set<number> {
  const held = new Set<number>();
  let pid: number | "self" = "self";
  for (let depth = 0; depth < 1000; depth++) {
    const fields = statFields(pid);
    if (!fields) break;
    held.add(Number(fields[2]));
    const parent = Number(fields[1]);
    if (!(parent > 1)) break;
    pid = parent;
  }
  return held;
}

/**
 * Whether signalling process group `pgid` could hit this process or what holds
 * it: a group id ≤ 1 (`kill(-1)` is every process; 0 is our own group) or one
 * of {@link heldGroups}. Such a group is never signalled (src/worker/executor.ts
 * `killGroup`); the orphan sweep warns instead.
 */
export function groupHoldsSelf(pgid: number): boolean {
  return !(pgid > 1) || pgid === process.pid || heldGroups().has(pgid);
}

/**
 * The live children of process `parent` that lead a session of their own, with
 * their start times (Linux: scans `/proc`; [] elsewhere): a worker's jobs
 * (docs/architecture.md "Execution": each runs in its own session), as its
 * watchdog finds them. `except` (the watchdog itself) is left out.
 */
export function sessionLeadersOf(parent: number, except: number): { pid: number; startTime: string }[] {
  if (process.platform !== "linux") return [];
  const found: { pid: number; startTime: string }[] = [];
  for (const name of procPids()) {
    const pid = Number(name);
    const fields = statFields(name); // [state, ppid, pgrp, session, …]
    if (!fields || pid === except || dead(fields[0]) || Number(fields[1]) !== parent) continue;
    if (Number(fields[2]) === pid && Number(fields[3]) === pid) found.push({ pid, startTime: fields[19]! });
  }
  return found;
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

/**
 * Whether process group `pgid` has a member that is not a zombie (Linux: scans
 * `/proc`). Zombies cannot be signalled and are reaped by init — or never, under
 * an init that does not reap — so they must not hold a kill's grace open.
 * Elsewhere, falls back to `kill(-pgid, 0)`.
 */
export function groupHasLiveMembers(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return (error as { code?: string }).code === "EPERM";
  }
  if (process.platform !== "linux") return true;
  return procPids().some((pid) => {
    const fields = statFields(pid); // null: it went away while we looked
    return fields !== null && Number(fields[2]) === pgid && !dead(fields[0]);
  });
}

/**
 * Process groups (never ≤ 1) of the processes whose environment holds
 * `entry` exactly (`NAME=value`; Linux: `/proc/PID/environ`). Every process a
 * job starts inherits the attempt's marker variable, so this finds a job's
 * processes even when no group was recorded, or when one of them moved to a
 * session of its own (setsid). Elsewhere, returns [].
 */
export function groupsWithEnv(entry: string): number[] {
  return [
    ...new Set(
      groupsWithEnvPrefix(entry)
        .filter((g) => g.entry === entry)
        .map((g) => g.pgid),
    ),
  ];
}

/**
 * Live process groups (Linux: scans `/proc`) whose processes carry an
 * environment entry starting with `prefix`, with the entry found; [] elsewhere.
 * Group ids ≤ 1 are never returned; this process's own group and its
 * ancestors' may be: callers check {@link groupHoldsSelf} before a signal.
 */
export function groupsWithEnvPrefix(prefix: string): { pgid: number; entry: string }[] {
  if (process.platform !== "linux") return [];
  const found: { pgid: number; entry: string }[] = [];
  for (const pid of procPids()) {
    const entry = environEntry(pid, prefix);
    if (entry === undefined || entry === null) continue; // none, or gone meanwhile, or not ours to read
    const fields = statFields(pid);
    const pgid = Number(fields?.[2]);
    if (fields && !dead(fields[0]) && pgid > 1) found.push({ pgid, entry });
  }
  return found;
}

/**
 * Process groups (never ≤ 1; callers check {@link groupHoldsSelf}) of the live processes whose
 * standard output or standard error (Linux: the links `/proc/PID/fd/1` and
 * `/proc/PID/fd/2`; elsewhere, nothing) is a file that `match` accepts, with
 * that file's path as the kernel names it.
 */
function groupsWritingWhere(
  match: (target: string) => boolean,
  unlessEnv?: string,
): { pgid: number; target: string }[] {
  if (process.platform !== "linux") return [];
  const found: { pgid: number; target: string }[] = [];
  for (const pid of procPids()) {
    let target: string | null = null;
    for (const fd of [1, 2]) {
      try {
        const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
        if (match(link)) target = link;
      } catch {
        // closed, gone meanwhile, or not ours to read
      }
      if (target !== null) break;
    }
    if (target === null) continue;
    if (unlessEnv !== undefined && environEntry(pid, unlessEnv) !== undefined) continue; // marked, or not ours to judge
    const fields = statFields(pid);
    const pgid = Number(fields?.[2]);
    if (fields && !dead(fields[0]) && pgid > 1) found.push({ pgid, target });
  }
  return found;
}

/** The entry of `pid`'s environment that starts with `prefix`; undefined when there is none, null when it cannot be read. */
export function environEntry(pid: string | number, prefix: string): string | undefined | null {
  try {
    return readFileSync(`/proc/${pid}/environ`, "utf8")
      .split("\0")
      .find((e) => e.startsWith(prefix));
  } catch {
    return null;
  }
}

/** `path` with its links resolved, or as given when it does not exist. */
function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Process groups of the live processes whose stdout or stderr is one of
 * `paths`. The executor points an attempt's stdout and stderr straight at its
 * files and every process of the job inherits them, so this finds the
 * attempt's processes when no group was recorded yet and the marker did not
 * survive either: a job that cleared its environment (`exec env -i …`) and a
 * worker that died before its first heartbeat (docs/architecture.md "Orphans").
 */
export function groupsWritingTo(paths: string[]): number[] {
  // A deleted file is not the attempt's: its queue was removed, and a new one made at the same place.
  const wanted = new Set(paths.flatMap((p) => [p, realPath(p)]));
  return [...new Set(groupsWritingWhere((t) => wanted.has(t)).map((g) => g.pgid))];
}

/**
 * Process groups of the live processes whose stdout or stderr is a file under
 * folder `dir` (not a deleted one), with the file's path relative to it: the
 * spool's output folder, {@link groupsWritingTo} for every attempt at once.
 * Processes whose environment holds an entry starting with `unlessEnv` are
 * left out: the attempt marker, where present, says whose they are (another
 * queue's, made at the same place after this one was removed).
 */
export function groupsWritingUnder(dir: string, unlessEnv: string): { pgid: number; file: string }[] {
  const prefix = `${realPath(dir)}/`;
  return groupsWritingWhere((t) => t.startsWith(prefix) && !t.endsWith(" (deleted)"), unlessEnv).map((g) => ({
    pgid: g.pgid,
    file: g.target.slice(prefix.length),
  }));
}
