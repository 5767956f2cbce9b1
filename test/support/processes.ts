/**
 * Processes of a test: background CLI runs whose output is collected as it
 * comes, process-group inspection through /proc (zombies do not count: PID 1
 * here does not reap orphans), and a cleanup that leaves no process behind
 * ({@link stopProcessesOf}, which `useTempQueue({ stopProcesses: true })` runs).
 */

import { readdirSync, readFileSync } from "node:fs";
import { ATTEMPT_MARKER } from "../../src/worker/executor.ts";
import { groupsWithEnvPrefix } from "../../src/worker/process-groups.ts";
import { WATCHDOG_ARG } from "../../src/worker/watchdog.ts";
import { CLI, type TempQueue } from "./temp-queue.ts";

/** A `spoolctl work` (or other verb) process running in the background. */
export interface BgProc {
  proc: ReturnType<typeof Bun.spawn>;
  pid: number;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Everything written to stdout so far. */
  stdout(): string;
  /** Resolves with the exit code once the process has exited and its pipes are drained. */
  exited: Promise<number>;
}

const spawned = new Set<BgProc>();

async function drain(stream: ReadableStream<Uint8Array> | null, sink: { text: string }): Promise<void> {
  if (!stream) return;
  const decoder = new TextDecoder();
  for await (const chunk of stream) sink.text += decoder.decode(chunk, { stream: true });
  sink.text += decoder.decode();
}

/**
 * Starts `argv` (default: `bun <CLI> …args`) in the background against `q`,
 * collecting its output. Tracked for {@link killSpawned}.
 */
export function startBg(
  q: TempQueue,
  args: string[],
  opts: { env?: Record<string, string>; cwd?: string; argv0?: string[] } = {},
): BgProc {
  const proc = Bun.spawn([...(opts.argv0 ?? ["bun", CLI]), ...args], {
    env: q.env(opts.env),
    cwd: opts.cwd ?? q.dir,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = { text: "" };
  const err = { text: "" };
  const pipes = Promise.all([
    drain(proc.stdout as ReadableStream<Uint8Array>, out),
    drain(proc.stderr as ReadableStream<Uint8Array>, err),
  ]);
  const bg: BgProc = {
    proc,
    pid: proc.pid,
    stderr: () => err.text,
    stdout: () => out.text,
    exited: (async () => {
      const code = await proc.exited;
      await pipes;
      return code;
    })(),
  };
  spawned.add(bg);
  void bg.exited.then(() => spawned.delete(bg));
  return bg;
}

/** Starts `spoolctl work …` in the background. */
export function startWorker(q: TempQueue, args: string[], opts: Parameters<typeof startBg>[2] = {}): BgProc {
  return startBg(q, ["work", ...args], opts);
}

/** SIGKILLs every background process still running and waits for it. */
export async function killSpawned(): Promise<void> {
  const left = [...spawned];
  for (const bg of left) {
    try {
      bg.proc.kill("SIGCONT");
      bg.proc.kill("SIGKILL");
    } catch {
      // gone already
    }
  }
  await Promise.all(left.map((bg) => bg.exited.catch(() => 0)));
}

/** The fields of /proc/PID/stat after the command name: [0] state (field 3), [2] pgrp (field 5), [19] start time (field 22). */
function statFields(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** Live (non-zombie) processes by process group, read from /proc in one pass. */
function liveGroups(): Map<number, number[]> {
  const groups = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const f = statFields(name);
    if (!f || f[0] === "Z" || f[0] === "X") continue;
    const pgid = Number(f[2]);
    groups.set(pgid, [...(groups.get(pgid) ?? []), Number(name)]);
  }
  return groups;
}

/** Live (non-zombie) members of process group `pgid`, read from /proc. */
export function groupMembers(pgid: number): number[] {
  return liveGroups().get(pgid) ?? [];
}

/** The process's state letter (R, S, T, Z …), or null when it does not exist. */
export function procState(pid: number): string | null {
  return statFields(pid)?.[0] ?? null;
}

/** The start time (field 22 of /proc/PID/stat), or null. */
function startTimeOf(pid: number): string | null {
  return statFields(pid)?.[19] ?? null;
}

/**
 * Kills what is left of every job's process group recorded in `q` (test
 * cleanup). A group whose leader now has another start time is someone else's.
 */
export async function killJobGroups(q: TempQueue): Promise<void> {
  let rows: { pgid: number | null; pgid_start_time: string | null }[] = [];
  let queueId = "";
  try {
    rows = await q.allAttempts();
    queueId = await q.queueId();
  } catch {
    return; // no queue
  }
  // Attempts whose group no heartbeat recorded yet (a worker killed right after a claim): by their marker.
  if (queueId !== "") {
    for (const { pgid } of groupsWithEnvPrefix(`${ATTEMPT_MARKER}=${queueId}-`)) {
      try {
        process.kill(-pgid, "SIGKILL");
      } catch {
        // gone
      }
    }
  }
  const live = liveGroups();
  for (const { pgid, pgid_start_time } of rows) {
    if (pgid === null || !live.has(pgid)) continue;
    const now = startTimeOf(pgid);
    if (now !== null && pgid_start_time !== null && now !== pgid_start_time) continue;
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // gone
    }
  }
}

/** Test cleanup: kills every background process of this test file, then what is left of `q`'s job groups. */
export async function stopProcessesOf(q: TempQueue): Promise<void> {
  await killSpawned();
  await killJobGroups(q);
}

/** Whether a process exists (and is not a zombie). */
export function processLives(pid: number): boolean {
  const state = procState(pid);
  return state !== null && state !== "Z";
}

/**
 * SIGKILLs worker `pid` together with its watchdog, if it has one (a shared
 * queue): the fault the orphan rules exist for, where nothing on this host is
 * left to end the worker's jobs (docs/architecture.md "Orphans"). The
 * watchdog is stopped first, so that it neither ends the jobs when its worker
 * dies nor is started again by it; then both are killed.
 */
export function killWorkerAndWatchdog(pid: number): void {
  const watchdogs = readdirSync("/proc").filter((name) => {
    if (!/^\d+$/.test(name)) return false;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      return ppid === pid && readFileSync(`/proc/${name}/cmdline`, "utf8").includes(WATCHDOG_ARG);
    } catch {
      return false;
    }
  });
  for (const w of watchdogs) process.kill(Number(w), "SIGSTOP");
  process.kill(pid, "SIGKILL");
  for (const w of watchdogs) process.kill(Number(w), "SIGKILL");
}
