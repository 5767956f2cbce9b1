/**
 * The watchdog process of a worker on a shared queue (docs/architecture.md "A
 * stopped worker"). A worker's jobs run in sessions of their own, so SIGSTOP
 * or Ctrl-Z stops the worker but not them, and SIGSTOP cannot be caught; once
 * the worker's lease expires, a worker on another host may reap a job and run
 * it again. This process, in a session of its own (a Ctrl-Z at the worker's
 * terminal does not reach it), hears of every lease renewal through its stdin
 * and, when none came for {@link WatchdogConfig.guardMs}, ends the worker's
 * jobs: SIGTERM, grace, SIGKILL, all before the lease can expire. Before it
 * signals a job, it writes the job's process to a ledger file, which the
 * worker reads when it finds the job ended: the attempt is then "interrupted"
 * (requeued without charge, when the worker still owns it), not a failure.
 *
 * It never outlives its worker, and a worker that dies does not leave its
 * jobs running: the worker tells it of every job it starts (`J`) and records
 * (`E`), and says goodbye (`B`) before it exits; the end of input without a
 * goodbye, or a new parent, means the worker died (SIGKILL, the OOM killer),
 * and the watchdog ends the jobs it was told of at once, then exits. It never
 * acts on a worker that renews, and it signals only the worker's jobs (its
 * children that lead sessions, or the jobs it was told of), the groups
 * carrying their attempt markers, and never group 1, its own or the worker's.
 */
import { appendFileSync, mkdirSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { ATTEMPT_MARKER, killGroup } from "./executor.ts";
import { processGroupOf, processStartTime, processState } from "./liveness.ts";
import { environEntry, groupsWithEnv, sessionLeadersOf } from "./process-groups.ts";
import { sharedClockNs } from "./timing.ts";

/** What the worker tells its watchdog when it starts it (one JSON argument). */
export interface WatchdogConfig {
  workerPid: number;
  workerId: string;
  /** Silence (no renewal) after which the jobs are ended, milliseconds (timing.ts leaseGuardSeconds). */
  guardMs: number;
  /** Grace between SIGTERM and SIGKILL, milliseconds (timing.ts watchdogGraceSeconds). */
  graceMs: number;
  /** How often to look again while the worker stays silent, milliseconds. */
  recheckMs: number;
  /** The ledger: one line `PID START_TIME AT_NS` per job ended, written before the first signal. */
  ledger: string;
  /** The start of the oldest lease in force when the watchdog was started: sharedClockNs (src/worker/timing.ts), decimal. */
  renewedNs: string;
  /** Whether to say on stderr (the worker's) what it did (false under `work --json`). */
  say: boolean;
}

/** Why a worker may be silent, from its process state. */
function silenceCause(state: string | null): string {
  if (state === "T") return "the worker is stopped (SIGSTOP or Ctrl-Z)";
  if (state === "t") return "the worker is stopped by a debugger";
  if (state === "D") return "the worker is blocked in the kernel";
  return "the worker could not renew it";
}

/**
 * Ends the worker's jobs: records them in the ledger, then SIGTERM, grace,
 * SIGKILL to each job's group and to the groups carrying its attempt marker
 * (processes that left the group with setsid). Returns how many jobs.
 */
async function endJobs(config: WatchdogConfig, silentMs: number): Promise<number> {
  const leaders = sessionLeadersOf(config.workerPid, process.pid);
  if (leaders.length === 0) return 0;
  const at = sharedClockNs(); // the worker's clock too: it compares this with its attempts' claims
  mkdirSync(dirname(config.ledger), { recursive: true, mode: 0o700 });
  appendFileSync(config.ledger, leaders.map((l) => `${l.pid} ${l.startTime} ${at}\n`).join(""), { mode: 0o600 });
  const never = new Set([1, process.pid, processGroupOf(config.workerPid) ?? 1]);
  const groups = new Set<number>();
  for (const leader of leaders) {
    groups.add(leader.pid);
    const marker = environEntry(leader.pid, `${ATTEMPT_MARKER}=`);
    if (marker) for (const g of groupsWithEnv(marker)) groups.add(g);
  }
  const targets = [...groups].filter((g) => g > 1 && !never.has(g));
  if (config.say)
    process.stderr.write(
      `spoolctl: watchdog of worker ${config.workerId}: no lease renewal for ${(silentMs / 1000).toFixed(1)}s (${silenceCause(processState(config.workerPid))}); ending its ${leaders.length === 1 ? "running job" : `${leaders.length} running jobs`} (process group ${targets.join(", ")}) before the lease runs out, so that no other worker runs them beside it\n`,
    );
  await Promise.all(targets.map((g) => killGroup(g, config.graceMs)));
  return leaders.length;
}

/** A job the worker told of: its leader's PID, start time when known, and attempt marker. */
interface ToldJob {
  pid: number;
  startTime: string | null;
  marker: string;
}

/**
 * Ends the jobs of a worker that died (docs/architecture.md "A stopped
 * worker"): each told job's group while its leader is the same process, and
 * every group carrying its attempt marker. Returns how many jobs had something left.
 */
async function endOrphanedJobs(config: WatchdogConfig, jobs: Iterable<ToldJob>): Promise<number> {
  const never = new Set([1, process.pid]);
  const groups = new Set<number>();
  let count = 0;
  for (const job of jobs) {
    const found = groupsWithEnv(job.marker);
    const start = processStartTime(job.pid);
    if (
      start !== null &&
      (job.startTime === null || start === job.startTime) &&
      environEntry(job.pid, `${ATTEMPT_MARKER}=`) === job.marker
    )
      found.push(job.pid);
    if (found.length > 0) count++;
    for (const g of found) groups.add(g);
  }
  const targets = [...groups].filter((g) => g > 1 && !never.has(g));
  if (targets.length === 0) return 0;
  if (config.say)
    process.stderr.write(
      `spoolctl: watchdog of worker ${config.workerId}: the worker (pid ${config.workerPid}) died; ending its ${count === 1 ? "running job" : `${count} running jobs`} (process group ${targets.join(", ")}), so that no other worker runs them beside it\n`,
    );
  await Promise.all(targets.map((g) => killGroup(g, config.graceMs)));
  return count;
}

/** Runs the watchdog described by `raw` (JSON {@link WatchdogConfig}) until its worker is gone. */
export async function runWatchdog(raw: string | undefined): Promise<void> {
  // Checked by the caller (isWatchdogCall in src/worker/watchdog.ts): written by `work`, never by hand.
  const config = JSON.parse(raw ?? "") as WatchdogConfig;
  let renewed = BigInt(config.renewedNs);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let acting = false;
  const silentMs = () => Number(sharedClockNs() - renewed) / 1e6;
  const arm = (ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(() => void check(), Math.max(1, ms));
  };
  const jobs = new Map<number, ToldJob>();
  let goodbye = false;
  let ending = false;
  // The worker died (no goodbye): what it left running would run beside its re-run elsewhere.
  const workerGone = async () => {
    if (ending) return;
    ending = true;
    clearTimeout(timer);
    if (!goodbye) await endOrphanedJobs(config, jobs.values());
    rmSync(config.ledger, { force: true });
    process.exit(0);
  };
  const check = async () => {
    if (process.ppid !== config.workerPid) return workerGone(); // orphaned: the worker is gone
    // A renewal waiting in the pipe is read first (this process may have been slow to run).
    await Bun.sleep(5);
    if (acting) return;
    if (silentMs() < config.guardMs) return arm(config.guardMs - silentMs());
    acting = true;
    try {
      await endJobs(config, silentMs());
    } finally {
      acting = false;
    }
    // Still silent: look again (a job started meanwhile); renewed: wait for the next silence.
    arm(silentMs() < config.guardMs ? config.guardMs - silentMs() : config.recheckMs);
  };
  arm(config.guardMs - silentMs());
  let pending = "";
  const decoder = new TextDecoder();
  for await (const chunk of Bun.stdin.stream()) {
    pending += decoder.decode(chunk, { stream: true });
    const lines = pending.split("\n");
    pending = lines.pop()!;
    for (const line of lines) {
      const [kind, a, b, c] = line.split(" ");
      if (kind === "R" && a !== undefined && /^\d+$/.test(a) && BigInt(a) > renewed) renewed = BigInt(a);
      else if (kind === "J" && c !== undefined)
        jobs.set(Number(a), { pid: Number(a), startTime: b === "-" ? null : b!, marker: c });
      else if (kind === "E") jobs.delete(Number(a));
      else if (kind === "B") goodbye = true;
    }
    if (!acting) arm(config.guardMs - silentMs());
  }
  // End of input: the worker exited (it said goodbye) or died (it did not).
  await workerGone();
}
