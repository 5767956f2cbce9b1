/**
 * The reaper (docs/architecture.md "Reaping"), run by every worker before it
 * claims. A running job is requeued (or dead-lettered) when its worker is
 * gone: at once when its worker's death is certain on this host (PID gone or
 * reused, same boot); otherwise once its lease (its heartbeat) is older than
 * the reap threshold and its worker is judged gone — on another host by the
 * expired lease alone, because another machine's PIDs cannot be looked at. Orphaned process groups left on this host are killed
 * first, recognised by their attempt marker.
 */

import { join } from "node:path";
import type { Attempt, Job } from "../model/job.ts";
import type { Outcome } from "../ops/outcome.ts";
import { workerIdentityOf } from "../ops/worker-health.ts";
import type { Store } from "../store/store.ts";
import { attemptOwner, reap, reapCandidates, runningAttemptsOf } from "../store/verbs/reap.ts";
import { recordAttemptEnd } from "../store/verbs/record.ts";
import { ATTEMPT_MARKER, attemptMarker, killGroup } from "./executor.ts";
import {
  deathCertain,
  foreignPidSpace,
  HOST,
  judge,
  type Liveness,
  type ProcessIdentity,
  processStartTime,
  reapableByLease,
} from "./liveness.ts";
import {
  groupHoldsSelf,
  groupsWithEnv,
  groupsWithEnvPrefix,
  groupsWritingTo,
  groupsWritingUnder,
} from "./process-groups.ts";

/** An attempt's output file under the spool's output folder: flat `<job>.<attempt>.stdout`, or the older `<job>/<attempt>/stdout`. */
const ATTEMPT_FILE = /^(?:(\d+)\.(\d+)\.std(?:out|err)|(\d+)\/(\d+)\/std(?:out|err))$/;

/** One reaped job, for the worker's log line. */
export interface ReapedJob {
  jobId: number;
  attemptNo: number;
  workerPid: number | null;
  /** The host the dead worker ran on. */
  host: string;
  outcome: Outcome;
  /** Whether an orphaned process group was still running and was killed. */
  killedOrphan: boolean;
  /** Whether the lease decided (another host or PID namespace), not a death seen on this host. */
  byLease: boolean;
  /** Groups that carry the attempt's marker or write its files but hold this worker: left alone (warned). */
  spared: number[];
}

/**
 * Whether a stale job's worker is gone: on this host by PID and start time;
 * on another host, or in another PID namespace, the expired lease is the
 * verdict (the caller only passes jobs whose lease expired) when a watchdog
 * guarded it ({@link reapableByLease}; `sharedQueue`: PostgreSQL).
 */
function gone(who: ProcessIdentity, sharedQueue: boolean): boolean {
  const verdict: Liveness = judge(who);
  return verdict === "dead" || (verdict === "unknown" && foreignPidSpace(who) && reapableByLease(who, sharedQueue));
}

/**
 * Kills what is left of the attempt on this host: its recorded process group
 * if it is still the same process (start time matches), and every group whose
 * processes carry the attempt's marker variable — which covers a worker that
 * died before it recorded the group, and job processes that left the group
 * with setsid — and every group whose processes write to the attempt's files
 * (a job that cleared its environment before its group was recorded). Then the old run cannot overlap the next one. (On another host
 * the next worker that starts there kills them: {@link killOrphans}.)
 */
async function killOrphan(
  store: Store,
  job: Job,
  attempt: Attempt | null,
  who: ProcessIdentity,
): Promise<{ killedOrphan: boolean; spared: number[] }> {
  const none = { killedOrphan: false, spared: [] };
  if (who.host !== HOST || !attempt) return none;
  // Another PID namespace under our host name: its recorded group id is a number of its own, never ours to signal.
  const recorded = foreignPidSpace(who) ? null : attempt.pgid;
  const groups = new Set(groupsWithEnv(attemptMarker(store.queueId, job.id, job.last_attempt_no)));
  // Before its first heartbeat the group is not recorded, and a job may have cleared its environment.
  for (const pgid of groupsWritingTo([attempt.stdout_path, attempt.stderr_path])) groups.add(pgid);
  if (recorded && attempt.pgid_start_time !== null && processStartTime(recorded) === attempt.pgid_start_time)
    groups.add(recorded);
  // Never this worker's own group, or one holding it (docs/architecture.md "Orphans"): said instead.
  const spared = [...groups].filter(groupHoldsSelf);
  const doomed = [...groups].filter((g) => !spared.includes(g));
  await Promise.all(doomed.map((pgid) => killGroup(pgid)));
  return { killedOrphan: doomed.length > 0, spared };
}

/** A running job the reaper looks at: its worker's identity, its attempt, and whether its lease expired. */
interface Candidate {
  job: Job;
  attempt: Attempt | null;
  who: ProcessIdentity;
  stale: boolean;
}

/**
 * The running jobs worth judging, read in one transaction: those whose lease
 * is older than `thresholdSeconds`, and the others whose worker's registry row
 * says this host (only here can a death be certain before the lease runs out).
 */
async function candidates(store: Store, thresholdSeconds: number): Promise<Candidate[]> {
  const found = await reapCandidates(store, thresholdSeconds, HOST);
  return found.flatMap(({ job, stale, worker, attempt }) => {
    const who = workerIdentityOf(job, worker, HOST, attempt);
    return who ? [{ job, attempt, who, stale }] : [];
  });
}

/**
 * Reaps one running job whose worker `who` is gone: kills its orphans first,
 * then records the attempt abandoned as a worker crash, re-checked in the
 * write transaction (same owner and attempt, and, with `staleBefore` (epoch
 * seconds), a lease still older than that). Null when the job moved on meanwhile.
 */
async function reapJob(
  store: Store,
  job: Job,
  attempt: Attempt | null,
  who: ProcessIdentity,
  reaperId: string,
  how: { staleBefore: number | null; error: string; byLease: boolean },
): Promise<ReapedJob | null> {
  const { killedOrphan, spared } = await killOrphan(store, job, attempt, who);
  const outcome = await reap(
    store,
    { jobId: job.id, attemptNo: job.last_attempt_no, workerId: job.locked_by ?? "" },
    how.error,
    { reaperId, staleBefore: how.staleBefore },
  );
  if (!outcome) return null;
  return {
    jobId: job.id,
    attemptNo: job.last_attempt_no,
    workerPid: who.pid,
    host: who.host,
    outcome,
    killedOrphan,
    byLease: how.byLease,
    spared,
  };
}

/**
 * Reaps the running jobs whose worker is gone (docs/architecture.md
 * "Reaping"): at once when its death is certain on this host
 * ({@link deathCertain}: PID gone or reused, same boot), whatever the age of
 * its lease; otherwise once the lease is older than `thresholdSeconds` and the
 * worker is judged gone ({@link gone}); with `certainOnly`, only the former.
 * Orphans are killed first. `reaperId` is recorded on the events.
 */
export async function reapDeadWorkers(
  store: Store,
  reaperId: string,
  thresholdSeconds: number,
  opts: { certainOnly?: boolean } = {},
): Promise<ReapedJob[]> {
  const reaped: ReapedJob[] = [];
  for (const { job, attempt, who, stale } of await candidates(store, thresholdSeconds)) {
    const certain = deathCertain(who);
    if (!certain && (opts.certainOnly || !(stale && gone(who, store.shipsOutput)))) continue;
    const where = who.host !== HOST ? ` on ${who.host}` : foreignPidSpace(who) ? " in another PID namespace" : "";
    const why = where === "" ? "died" : `lost its lease (no heartbeat for ${thresholdSeconds}s)`;
    const done = await reapJob(store, job, attempt, who, reaperId, {
      staleBefore: certain ? null : store.now() - thresholdSeconds,
      error: `worker ${job.locked_by} (pid ${who.pid}${where}) ${why}`,
      byLease: where !== "",
    });
    if (done) reaped.push(done);
  }
  return reaped;
}

/**
 * Reaps the running jobs of `workerId` that were claimed by the process
 * `who`, when a worker registers under its id (docs/architecture.md
 * "Reaping"): at once when `who` is confirmed dead on this host
 * (`leaseSeconds` null); else (its lease expired where it cannot be judged)
 * only the jobs whose own lease is older than `leaseSeconds`. Orphans are
 * killed first, as by {@link reapDeadWorkers}.
 */
export async function reapJobsOfDeadWorker(
  store: Store,
  workerId: string,
  who: ProcessIdentity,
  reaperId: string,
  leaseSeconds: number | null = null,
): Promise<ReapedJob[]> {
  const reaped: ReapedJob[] = [];
  for (const { job, attempt } of await runningAttemptsOf(store, workerId, who.pid)) {
    const why =
      leaseSeconds === null
        ? `worker ${workerId} (pid ${who.pid}) died`
        : `worker ${workerId} (pid ${who.pid} on ${who.host}${who.host === HOST ? ", in another PID namespace" : ""}) lost its lease (no heartbeat for ${leaseSeconds}s)`;
    const done = await reapJob(store, job, attempt, who, reaperId, {
      staleBefore: leaseSeconds === null ? null : store.now() - leaseSeconds,
      error: `${why}; a new worker registered under its id`,
      byLease: leaseSeconds !== null,
    });
    if (done) reaped.push(done);
  }
  return reaped;
}

/**
 * Ends a running job whose cancel was requested while its worker is confirmed
 * dead on this host (docs/architecture.md "Cancel"): nobody else would kill
 * it, so the canceler kills the orphaned process groups itself and records the
 * attempt `canceled` for the dead worker (the job becomes `canceled`; event
 * worker null: an operator's act). Returns false, changing nothing, when the
 * job is not running, its worker is not confirmed dead here, or it changed meanwhile.
 */
export async function cancelOrphanedJob(store: Store, jobId: number): Promise<boolean> {
  const found = await attemptOwner(store, jobId, "last");
  if (!found) return false;
  const { job, attempt, worker } = found;
  if (job.state !== "running" || job.locked_by === null) return false;
  const who = workerIdentityOf(job, worker, HOST, attempt);
  if (!who || who.host !== HOST || judge(who) !== "dead") return false;
  await killOrphan(store, job, attempt, who);
  const outcome = await recordAttemptEnd(
    store,
    { jobId, attemptNo: job.last_attempt_no, workerId: job.locked_by },
    { kind: "canceled", code: null, signal: null },
    { kind: "operator" },
  );
  return outcome !== null;
}

/** A process group the orphan sweep found, with the attempt it belongs to. */
export interface OrphanGroup {
  jobId: number;
  attemptNo: number;
  pgid: number;
}

/**
 * Kills the process groups on this host that carry this queue's attempt
 * marker, or write to an attempt's output files in this worker's spool, but
 * whose attempt no longer has a live owner here: left by a worker
 * that died (its job may since have been reaped by a worker on another host)
 * or by an attempt that was taken over. Run when a worker starts. A group that
 * holds this worker ({@link groupHoldsSelf}: its own, its shell's) is never
 * signalled: it is returned in `spared`, for a warning. Returns the attempts
 * whose groups were killed, and those spared.
 */
export async function killOrphans(store: Store): Promise<{ killed: OrphanGroup[]; spared: OrphanGroup[] }> {
  const prefix = `${ATTEMPT_MARKER}=${store.queueId}-`;
  const found: { pgid: number; jobId: number; attemptNo: number }[] = groupsWithEnvPrefix(prefix).map(
    ({ pgid, entry }) => {
      const [jobId, attemptNo] = entry.slice(prefix.length).split("-").map(Number);
      return { pgid, jobId: jobId!, attemptNo: attemptNo! };
    },
  );
  // A job that cleared its environment (env -i) still writes to its attempt's files; a marked one is judged by its marker.
  for (const { pgid, file } of groupsWritingUnder(join(store.spoolDir, "output"), `${ATTEMPT_MARKER}=`)) {
    const m = ATTEMPT_FILE.exec(file);
    if (m) found.push({ pgid, jobId: Number(m[1] ?? m[3]), attemptNo: Number(m[2] ?? m[4]) });
  }
  const killed: OrphanGroup[] = [];
  const spared: OrphanGroup[] = [];
  const seen = new Set<number>();
  for (const { pgid, jobId, attemptNo } of found) {
    if (seen.has(pgid)) continue;
    seen.add(pgid);
    if (!Number.isSafeInteger(jobId) || !Number.isSafeInteger(attemptNo)) continue;
    const found = await attemptOwner(store, jobId, attemptNo);
    const job = found?.job ?? null;
    const attempt = found?.attempt ?? null;
    if (job && job.state === "running" && job.last_attempt_no === attemptNo) {
      const who = workerIdentityOf(job, found?.worker ?? null, HOST, attempt);
      // Its owner is alive (here or elsewhere, as far as we can tell): not an orphan.
      if (!who || who.host !== HOST || judge(who) !== "dead") continue;
    } else if (attempt && attempt.state !== "abandoned") {
      // An attempt that ended normally: what it left running in the background is left alone
      // (docs/architecture.md "Execution"); only the runs of dead workers are orphans.
      continue;
    }
    if (groupHoldsSelf(pgid)) {
      // This worker's own group, or its shell's: killing it would kill the worker (docs/architecture.md "Orphans").
      spared.push({ jobId: jobId!, attemptNo: attemptNo!, pgid });
      continue;
    }
    await killGroup(pgid);
    killed.push({ jobId: jobId!, attemptNo: attemptNo!, pgid });
  }
  return { killed, spared };
}
