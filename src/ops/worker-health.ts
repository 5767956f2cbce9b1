/**
 * Whether a running job's worker is still there (docs/architecture.md
 * "Reaping", "Dead workers in the views"): what `status`, `show`, `list`,
 * `doctor`, `cancel` and `wait` tell about a job whose worker died, and what
 * will happen to it. The process look-ups are the caller's (src/worker/liveness.ts),
 * passed in as {@link HealthContext.judge}, so this module stays free of I/O.
 */
import type { WorkerHealth } from "../describe/schemas-rows.ts";
import type { Attempt, Job, WorkerRecord } from "../model/job.ts";

/** A recorded process identity (see src/worker/liveness.ts). */
export interface ProcessRef {
  host: string;
  pid: number;
  bootId: string | null;
  startTime: string | null;
  /** Its PID namespace (`/proc/self/ns/pid` inode); null or absent: not recorded. */
  pidNs?: string | null;
}

/** How to judge: the process look-up, this host, the queue's clock and the timing (seconds). */
export interface HealthContext {
  judge: (who: ProcessRef) => "alive" | "dead" | "unknown";
  /** Whether `who`'s death is certain on this host, so that its jobs are reaped at once, lease or not (docs/architecture.md "Reaping"). */
  certain?: (who: ProcessRef) => boolean;
  /** Whether `who`'s PIDs cannot be looked at here (another host, or another PID namespace); default: another host name. */
  foreign?: (who: ProcessRef) => boolean;
  /**
   * Whether `who`, whose PIDs cannot be looked at here, is reaped once its
   * lease expires: a watchdog guarded its runs (src/worker/liveness.ts
   * reapableByLease); default: yes.
   */
  reapable?: (who: ProcessRef) => boolean;
  /** This machine's host name. */
  host: string;
  /** The queue's clock, epoch seconds. */
  now: number;
  /** The reap threshold: a lease older than this has expired. */
  leaseSeconds: number;
  /** A heartbeat older than this (3 heartbeat intervals) makes a live worker `stale`. */
  staleSeconds: number;
  /**
   * Why a live worker on this host does not heartbeat, when that can be seen:
   * `"stopped"` (SIGSTOP or Ctrl-Z: its process is in state T) or
   * `"disk_full"` (a disk of the queue is full: it cannot write); null
   * otherwise (stuck, or another host's). See {@link stallReason}.
   */
  stall?: (who: ProcessRef) => Stall | null;
}

/** Why a live worker is silent: stopped by a signal, or blocked by a full disk. */
export type Stall = "stopped" | "disk_full";

/**
 * A silent live worker's state in words, with what to do (docs/architecture.md
 * "Dead workers in the views"): named by `name` ("worker W (pid N)"), its
 * `stall` if known, silent for `age` seconds.
 */
export function stallReason(name: string, stall: Stall | null, pid: number | null, age: number): string {
  if (stall === "stopped")
    return `${name} is stopped (SIGSTOP or Ctrl-Z) since about ${seconds(age)}; its jobs run on, and their results are recorded once it is continued (fg, or kill -CONT ${pid ?? "PID"})`;
  if (stall === "disk_full")
    return `${name} is alive but cannot write: a disk of the queue is full; it goes on once space is freed (spoolctl status names the disk)`;
  return `${name} has not heartbeated for ${seconds(age)} (stopped or stuck?)`;
}

/**
 * A running job's worker state in one word for a table cell: "stopped" for
 * a stale worker seen stopped by a signal (its fate says so, from
 * {@link stallReason}), else the state ("stale", "dead", "lease expired").
 */
export function workerStateWord(h: Pick<WorkerHealth, "worker_state" | "fate">): string {
  if (h.worker_state === "stale" && h.fate.includes(" is stopped (SIGSTOP")) return "stopped";
  return h.worker_state.replace("_", " ");
}

// Defined once, as the JSON Schema `spoolctl schema` prints.
export type { WorkerHealth };

/**
 * The identity of the process that runs `job`'s attempt (docs/architecture.md
 * "Reaping"): the attempt's own record (worker PID and start time, schema v7)
 * with the host and boot id of the worker's registry row; for older attempts,
 * the registry row when it holds the job's PID (a row under a reused
 * `--worker-id` may describe a later incarnation: a restarted container's
 * PID 1 has the same id and PID, only its start time differs), otherwise the
 * PID alone on this host, where only "gone" can be concluded. Null without a PID.
 */
export function workerIdentityOf(
  job: Job,
  row: WorkerRecord | null,
  host: string,
  attempt?: Attempt | null,
): ProcessRef | null {
  if (job.locked_pid === null) return null;
  if (attempt && attempt.worker_start_time !== null && attempt.worker_pid === job.locked_pid) {
    const sameHost = row ? row.host : host;
    return {
      host: sameHost,
      pid: job.locked_pid,
      bootId: row && row.start_time === attempt.worker_start_time ? row.boot_id : null,
      startTime: attempt.worker_start_time,
      pidNs: row && row.start_time === attempt.worker_start_time ? (row.pid_ns ?? null) : null,
    };
  }
  if (row && row.pid === job.locked_pid)
    return { host: row.host, pid: row.pid, bootId: row.boot_id, startTime: row.start_time, pidNs: row.pid_ns ?? null };
  return { host, pid: job.locked_pid, bootId: null, startTime: null };
}

function seconds(s: number): string {
  return s < 90 ? `${Math.round(s)}s` : s < 5400 ? `${Math.round(s / 60)}m` : `${Math.round(s / 3600)}h`;
}

/** Process verdicts already looked up, by process identity, for judging many jobs at once. */
export type VerdictCache = Map<string, "alive" | "dead" | "unknown">;

/**
 * Judges a running job's worker (null for a job that is not running) from its
 * registry row (`row`, null: none) and its current attempt (`attempt`), both
 * read by the caller; `verdicts` spares repeated process look-ups.
 */
export function judgeJobWorker(
  job: Job,
  row: WorkerRecord | null,
  attempt: Attempt | null,
  ctx: HealthContext,
  verdicts: VerdictCache = new Map(),
): WorkerHealth | null {
  if (job.state !== "running") return null;
  const id = job.locked_by;
  const who = workerIdentityOf(job, row, ctx.host, attempt);
  const age = Math.max(0, ctx.now - (job.heartbeat_at ?? job.locked_at ?? ctx.now));
  const base = {
    job_id: job.id,
    worker_id: id,
    worker_pid: job.locked_pid,
    worker_host: who?.host ?? ctx.host,
    heartbeat_age_seconds: age,
  };
  const name = `worker ${id ?? "?"} (pid ${job.locked_pid ?? "?"}${who && who.host !== ctx.host ? ` on ${who.host}` : ""})`;
  const key = who ? `${who.host}\0${who.pid}\0${who.startTime}\0${who.bootId}\0${who.pidNs ?? ""}` : "";
  if (who && !verdicts.has(key)) verdicts.set(key, ctx.judge(who));
  const verdict = who ? verdicts.get(key)! : "unknown";
  if (verdict === "dead") {
    const wait = who && ctx.certain?.(who) ? 0 : ctx.leaseSeconds - age;
    return {
      ...base,
      worker_state: "dead",
      fate: `${name} is dead; reaped by the next worker${wait > 0 ? ` once its lease expires (in ${seconds(wait)})` : ""}, then requeued or dead-lettered`,
    };
  }
  if (age > ctx.leaseSeconds && who && (ctx.foreign ? ctx.foreign(who) : who.host !== ctx.host)) {
    const guarded = ctx.reapable?.(who) ?? true;
    return {
      ...base,
      worker_state: "lease_expired",
      fate: guarded
        ? `${name} has not renewed its lease for ${seconds(age)}; reaped by the next worker`
        : `${name} has not renewed its lease for ${seconds(age)}, but it kept no watchdog (a SQLite worker outside any container), so its job may still run: reaped only by a worker on ${who.host} outside any container, where its PID can be looked at`,
    };
  }
  if (age > ctx.staleSeconds) {
    const stall = who && ctx.stall ? ctx.stall(who) : null;
    const why = stallReason(name, stall, job.locked_pid, age);
    return {
      ...base,
      worker_state: "stale",
      fate: stall === null ? `${why}; the job is not reaped while its worker lives` : why,
    };
  }
  return { ...base, worker_state: "live", fate: "" };
}
