/**
 * Process groups on this host (docs/architecture.md "Orphans", "Execution"):
 * those this process must never signal, and those that carry an attempt's
 * marker variable or write to its output files, found by scanning `/proc`
 * (Linux; elsewhere empty or a `kill(-pgid, 0)` fallback). The process-level
 * look-ups they rest on are in src/worker/liveness.ts.
 */
import { readFileSync, readlinkSync, realpathSync } from "node:fs";
import { dead, procPids, statFields } from "./liveness.ts";

/**
 * The process groups this process must never signal, whatever a scan found in
 * them (docs/architecture.md "Orphans"): its own (a worker need not lead its
 * group: `sh -c '… & spoolctl work'`), and those of its ancestors — the shell
 * or job that started it — up to PID 1. Linux (`/proc`); elsewhere empty.
 */
function heldGroups(): Set<number> {
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

/** The PID the kernel handed out last in this PID namespace (`/proc/loadavg`'s last field); null when unreadable. */
function lastPid(): number | null {
  try {
    const last = Number(readFileSync("/proc/loadavg", "utf8").trim().split("/").pop()?.split(" ").pop());
    return Number.isInteger(last) && last > 0 ? last : null;
  } catch {
    return null;
  }
}

/** Up to this many PIDs handed out since the leader, they are looked at one by one; beyond, `/proc` is listed. */
const DIRECT_SPAN = 512;

/**
 * The live processes an attempt left behind once its leader (PID `leader`,
 * which led the attempt's process group) exited (docs/architecture.md
 * "Leftover processes"): members of that group (`cmd &`, `nohup cmd &`) and
 * processes that carry the attempt's marker `entry` (`NAME=value`), which
 * finds those that left for a session of their own (`setsid cmd &`). Sorted
 * PIDs with their groups; zombies left out. Linux only ([] elsewhere).
 *
 * One look, kept cheap for the common case of nothing left: every such
 * process was started after the leader, so only the PIDs the kernel handed
 * out since are read: the cyclic range from `leader` (exclusive) to the last
 * PID handed out (`/proc/loadavg`), numerically above `leader` or, after the
 * counter wrapped, also up to that last one. A short range is read PID by
 * PID (no listing of `/proc`); older processes with higher PIDs from before a
 * wrap are never read.
 */
export function leftoversOf(leader: number, entry: string | undefined): { pid: number; pgid: number }[] {
  if (process.platform !== "linux") return [];
  const last = lastPid();
  const found: { pid: number; pgid: number }[] = [];
  const look = (pid: number) => {
    if (pid === process.pid) return;
    const fields = statFields(pid); // [state, ppid, pgrp, …]; null: none, or gone meanwhile
    if (!fields || dead(fields[0])) return;
    const pgid = Number(fields[2]);
    if (pgid === leader || (entry !== undefined && environEntry(pid, entry) === entry)) found.push({ pid, pgid });
  };
  if (last !== null && last >= leader && last - leader <= DIRECT_SPAN) {
    for (let pid = leader + 1; pid <= last; pid++) look(pid);
    return found;
  }
  const inRange = (pid: number) =>
    last === null ? pid > leader : last >= leader ? pid > leader && pid <= last : pid > leader || pid <= last;
  for (const name of procPids()) {
    const pid = Number(name);
    if (inRange(pid)) look(pid);
  }
  return found.sort((a, b) => a.pid - b.pid);
}
