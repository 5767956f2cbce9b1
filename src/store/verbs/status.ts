/**
 * The `status` screens (docs/architecture.md "The operations", "Reads"): the
 * queue's counts with its workers, stranded jobs, schedules and paused lanes,
 * and the frame `status --watch` redraws. Each is one read snapshot.
 */

import { REPORTED_STATES } from "../../model/job.ts";
import { summarize } from "../../ops/jobs.ts";
import type { LiveStatus } from "../../ops/live.ts";
import type { StateCounts, StatusData } from "../../ops/status.ts";
import type { HealthContext } from "../../ops/worker-health.ts";
import { type JudgeWorker, staleAfter } from "../../ops/workers.ts";
import type { StoreReader } from "../reader.ts";
import type { SnapshotReader } from "../store.ts";
import { pausedLanesIn } from "./lane-reads.ts";
import { strandedJobs } from "./worker-health.ts";
import { listWorkers } from "./workers.ts";

function zero(): StateCounts {
  return Object.fromEntries(REPORTED_STATES.map((s) => [s, 0])) as StateCounts;
}

/**
 * The status (`status --json` data but its disks and batch), read in one
 * snapshot dated by the queue's clock (epoch seconds). `deadLimit` bounds
 * `recent_dead`; `health` judges the running jobs' workers (without it,
 * `stranded` is empty and no worker is `stale`). Read only: no guard, no
 * event, no wake.
 */
export function statusSnapshot(
  store: SnapshotReader,
  judge: JudgeWorker,
  deadLimit = 5,
  health?: HealthContext,
): Promise<StatusData> {
  return store.read((tx) => readStatus(tx, judge, store.now(), deadLimit, health));
}

/**
 * One frame of `status --watch` in one snapshot: the status, at most
 * `runningLimit` running jobs (longest running first) and the `failureLimit`
 * latest failed attempts with their jobs. Times epoch seconds, by the queue's
 * clock. Read only: no guard, no event, no wake.
 */
export function liveSnapshot(
  store: SnapshotReader,
  judge: JudgeWorker,
  runningLimit: number,
  failureLimit: number,
  health?: HealthContext,
): Promise<LiveStatus> {
  return store.read(async (tx) => {
    const now = store.now();
    const status = await readStatus(tx, judge, now, 5, health);
    const running = (await tx.listJobs({ states: ["running"], limit: runningLimit }))
      .map((j) => ({
        id: j.id,
        queue: j.queue,
        attempt_no: j.last_attempt_no,
        worker_id: j.locked_by,
        started_at: j.started_at,
        elapsed_seconds: j.started_at === null ? 0 : Math.max(0, now - j.started_at),
        argv: j.argv,
      }))
      .sort((a, b) => (a.started_at ?? now) - (b.started_at ?? now) || a.id - b.id);
    const attempts = await tx.recentFailedAttempts(failureLimit);
    const ids = [...new Set(attempts.map((a) => a.job_id))];
    const jobOf = new Map(
      (ids.length ? await tx.listJobs({ ids, limit: ids.length }) : []).map((j) => [j.id, j] as const),
    );
    const failures: LiveStatus["failures"] = [];
    for (const a of attempts) {
      const job = jobOf.get(a.job_id);
      failures.push({
        job_id: a.job_id,
        attempt_no: a.attempt_no,
        attempt_state: a.state,
        failure_reason: a.failure_reason,
        error: a.error,
        finished_at: a.finished_at,
        job_state: job?.state ?? null,
        queue: job?.queue ?? null,
        argv: job?.argv ?? [],
      });
    }
    return { at: now, status, running, failures };
  });
}

/** Reads the status inside `tx` at `now` (epoch seconds); see {@link statusSnapshot}. */
async function readStatus(
  tx: StoreReader,
  judge: JudgeWorker,
  now: number,
  deadLimit: number,
  health?: HealthContext,
): Promise<StatusData> {
  const counts = zero();
  const queues: StatusData["queues"] = {};
  // Lanes are user-named: a lane called "constructor" or "toString" must not find Object.prototype's member.
  const lane = (queue: string) =>
    Object.hasOwn(queues, queue) ? queues[queue]! : (queues[queue] = { ...zero(), scheduled: 0, held: 0 });
  for (const { state, queue, n } of await tx.countByStateAndLane()) {
    counts[state] += n;
    lane(queue)[state] += n;
  }
  let scheduled = 0;
  for (const { queue, n } of await tx.countScheduledByLane(now)) {
    scheduled += n;
    lane(queue).scheduled = n;
  }
  let held = 0;
  for (const { queue, n } of await tx.countHeldByLane()) {
    held += n;
    lane(queue).held = n;
  }
  const stale = health ? staleAfter(health) : undefined;
  const live_workers = (await listWorkers(tx, judge, 1000, stale)).filter((w) => w.status === "live").length;
  const stranded = health && counts.running > 0 ? await strandedJobs(tx, health) : [];
  const schedules = (await tx.recurring.listSchedules()).map((s) => ({
    name: s.name,
    paused: s.paused,
    next_slot: s.paused ? null : s.next_slot,
    last_job_id: s.last_job_id,
    last_job_state: s.last_job_state,
  }));
  const paused_lanes = (await pausedLanesIn(tx, now)).map((l) => ({
    queue: l.queue,
    paused_at: l.paused_at!,
    paused_until: l.paused_until,
    reason: l.pause_reason,
    queued: Object.hasOwn(queues, l.queue) ? queues[l.queue]!.queued : 0,
  }));
  return {
    counts,
    scheduled,
    held,
    queues,
    recent_dead: (await tx.recentDead(deadLimit)).map((j) => summarize(j, now)),
    live_workers,
    stranded,
    ...(schedules.length > 0 ? { schedules } : {}),
    paused_lanes,
    waiting_on_needs: await tx.waitingOnNeeds(10),
  };
}
