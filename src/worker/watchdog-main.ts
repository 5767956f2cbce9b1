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
 * It never outlives its worker: end of input (the worker exited or died: the
 * pipe's write end is closed with it) or a new parent ends it. It never acts
 * on a worker that renews, and it signals only the worker's own children that
 * lead sessions (its jobs), the groups carrying their attempt markers, and
 * never group 1, its own or the worker's.
 */
import { appendFileSync, mkdirSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { ATTEMPT_MARKER, killGroup } from "./executor.ts";
import { processGroupOf, processState } from "./liveness.ts";
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
  const check = async () => {
    if (process.ppid !== config.workerPid) process.exit(0); // orphaned: the worker is gone
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
      const ns = /^R (\d+)$/.exec(line)?.[1];
      if (ns !== undefined && BigInt(ns) > renewed) renewed = BigInt(ns);
    }
    if (!acting) arm(config.guardMs - silentMs());
  }
  // End of input: the worker exited or died. What it left running is the orphan rules' business.
  clearTimeout(timer);
  rmSync(config.ledger, { force: true });
  process.exit(0);
}
