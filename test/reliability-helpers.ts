/**
 * Helpers for the reliability tests (issue 3): background workers whose stderr
 * is collected as it comes, process-group inspection through /proc (zombies do
 * not count: PID 1 here does not reap orphans), and a cleanup that leaves no
 * process behind. Queue state is read through TempQueue (the driver).
 */

import { afterEach, beforeEach } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { ATTEMPT_MARKER } from "../src/worker/executor.ts";
import { groupsWithEnvPrefix } from "../src/worker/process-groups.ts";
import { CLI, TempQueue } from "./helpers.ts";

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
export function liveGroups(): Map<number, number[]> {
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
export function startTimeOf(pid: number): string | null {
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

/** `add --json …`, returning the job id. */
export async function add(q: TempQueue, ...args: string[]): Promise<number> {
  const r = await q.run(["add", "--json", ...args]);
  if (r.code !== 0) throw new Error(`add failed (exit ${r.code}): ${r.stdout} ${r.stderr}`);
  return r.json.data.job_id as number;
}

/** `add --from -` with one NDJSON line per spec; returns the ids. */
export async function addMany(q: TempQueue, specs: object[]): Promise<number[]> {
  const r = await q.run(["add", "--from", "-", "--json"], {
    stdin: `${specs.map((s) => JSON.stringify(s)).join("\n")}\n`,
  });
  if (r.code !== 0) throw new Error(`add --from failed (exit ${r.code}): ${r.stdout} ${r.stderr}`);
  return idsOf(r.json.data);
}

function idsOf(data: any): number[] {
  const list: any[] = Array.isArray(data) ? data : (data.jobs ?? data.added ?? data.results ?? []);
  const ids = list.map((x) => (typeof x === "number" ? x : (x.job_id ?? x.id)));
  if (!ids.length || ids.some((id) => typeof id !== "number"))
    throw new Error(`cannot read job ids from add --from: ${JSON.stringify(data).slice(0, 300)}`);
  return ids;
}

/**
 * A job script that records its run in a shared log, each line appended under
 * `flock` so the log's order is the order in which the lines were written:
 * `start JOB PID TIME` when it begins, `end JOB PID TIME` when it is done
 * (TIME from bash's $EPOCHREALTIME; PID is the job's own process, which leads
 * its process group). The lock is taken by `flock` on fd 9 and released by
 * closing it (two execs per run rather than four: spawning is the cost here).
 * A run killed by a signal writes no end line.
 * argv: bash SCRIPT JOB SLEEP LOG LOCK
 */
export const RUN_LOGGER = `exec 9>>"$4"; flock 9; echo "start $1 $$ $EPOCHREALTIME" >> "$3"; exec 9>&-
[ "$2" = 0 ] || sleep "$2"
exec 9>>"$4"; flock 9; echo "end $1 $$ $EPOCHREALTIME" >> "$3"; exec 9>&-
`;

/** One run of a job as the log saw it; `end` null when it never wrote its end line. */
export interface LoggedRun {
  job: number;
  pid: number;
  start: number;
  startLine: number;
  end: number | null;
  endLine: number | null;
}

/** Parses the run log; `problems` lists lines that make no sense (an end without a start, a second start). */
export function parseRunLog(text: string): { runs: LoggedRun[]; problems: string[] } {
  const runs: LoggedRun[] = [];
  const open = new Map<string, LoggedRun>();
  const problems: string[] = [];
  text.split("\n").forEach((line, index) => {
    if (line === "") return;
    const m = /^(start|end) (\d+) (\d+) (\d+(?:\.\d+)?)$/.exec(line);
    if (!m) {
      problems.push(`line ${index + 1} is malformed: ${JSON.stringify(line)}`);
      return;
    }
    const [, kind, job, pid, time] = m;
    const key = `${job}/${pid}`;
    if (kind === "start") {
      if (open.has(key)) problems.push(`line ${index + 1}: job ${job} pid ${pid} started twice`);
      const run: LoggedRun = {
        job: Number(job),
        pid: Number(pid),
        start: Number(time),
        startLine: index,
        end: null,
        endLine: null,
      };
      open.set(key, run);
      runs.push(run);
    } else {
      const run = open.get(key);
      if (!run) problems.push(`line ${index + 1}: job ${job} pid ${pid} ended without starting`);
      else {
        run.end = Number(time);
        run.endLine = index;
        open.delete(key);
      }
    }
  });
  return { runs, problems };
}

/** Runs grouped by job, in log order. */
export function runsByJob(runs: LoggedRun[]): Map<number, LoggedRun[]> {
  const by = new Map<number, LoggedRun[]>();
  for (const run of runs) by.set(run.job, [...(by.get(run.job) ?? []), run]);
  return by;
}

/** The greatest number of runs (of any jobs) open at once in the log. */
export function maxParallel(runs: LoggedRun[]): number {
  const deltas: [number, number][] = [];
  for (const r of runs) {
    deltas.push([r.startLine, 1]);
    if (r.endLine !== null) deltas.push([r.endLine, -1]);
  }
  deltas.sort((a, b) => a[0] - b[0]);
  let now = 0;
  let max = 0;
  for (const [, d] of deltas) max = Math.max(max, (now += d));
  return max;
}

/**
 * Gives each test a fresh queue (through `set`), and after it kills the
 * background processes and leftover job groups, then removes the queue.
 */
export function withFreshQueue(set: (q: TempQueue) => void): void {
  let current: TempQueue;
  beforeEach(() => set((current = new TempQueue())));
  afterEach(async () => {
    await killSpawned();
    await killJobGroups(current);
    current.cleanup();
  });
}
