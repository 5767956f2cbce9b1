/**
 * Live views: the snapshot `status --watch` redraws (counts, running
 * jobs with their elapsed time and worker, recent failures) and the backlog
 * `work --drain` shows as progress. Reads only; times are epoch seconds.
 */

import type { AttemptState, FailureReason, JobState } from "../store/model.ts";
import type { DrainState, SnapshotReader, StoreReader } from "../store/store.ts";
import { mapInOrder } from "./in-order.ts";
import { readStatus, type StatusData } from "./status.ts";
import type { HealthContext } from "./worker-health.ts";
import type { JudgeWorker } from "./workers.ts";

/** A running job as the live view shows it. */
export interface RunningView {
  id: number;
  queue: string;
  attempt_no: number;
  worker_id: string | null;
  started_at: number | null;
  elapsed_seconds: number;
  argv: string[];
}

/** A recent failed, timed-out or abandoned attempt. */
export interface FailureView {
  job_id: number;
  attempt_no: number;
  attempt_state: AttemptState;
  failure_reason: FailureReason | null;
  error: string | null;
  finished_at: number | null;
  /** The job's state now (queued again for a retry, or dead). */
  job_state: JobState | null;
  queue: string | null;
  argv: string[];
}

/** `status --watch` frame data. */
export interface LiveStatus {
  at: number;
  status: StatusData;
  running: RunningView[];
  failures: FailureView[];
}

/** One frame of `status --watch`, read in one snapshot (see {@link readLiveStatus}). */
export function liveStatus(
  store: SnapshotReader,
  judge: JudgeWorker,
  runningLimit: number,
  failureLimit: number,
  health?: HealthContext,
): Promise<LiveStatus> {
  return store.read((tx) => readLiveStatus(tx, judge, store.now(), runningLimit, failureLimit, health));
}

/** Reads one frame: at most `runningLimit` running jobs (longest running first) and `failureLimit` failures. */
async function readLiveStatus(
  tx: StoreReader,
  judge: JudgeWorker,
  now = Date.now() / 1000,
  runningLimit = 50,
  failureLimit = 5,
  health?: HealthContext,
): Promise<LiveStatus> {
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
  const failures = await mapInOrder(await tx.recentFailedAttempts(failureLimit), async (a) => {
    const job = await tx.getJob(a.job_id);
    return {
      job_id: a.job_id,
      attempt_no: a.attempt_no,
      attempt_state: a.state,
      failure_reason: a.failure_reason,
      error: a.error,
      finished_at: a.finished_at,
      job_state: job?.state ?? null,
      queue: job?.queue ?? null,
      argv: job?.argv ?? [],
    };
  });
  return { at: now, status, running, failures };
}

/** What `work --drain` still waits for in its lane (docs/architecture.md "Drain"). */
export interface DrainBacklog extends DrainState {
  /** running + waiting. */
  left: number;
}

/** The lane's drain backlog now, on the queue's clock: the same answer the drain's exit reads. */
export async function drainBacklog(store: SnapshotReader, queue: string): Promise<DrainBacklog> {
  const state = await store.read((tx) => tx.drainState(queue, store.now()));
  return { ...state, left: state.running + state.waiting };
}
