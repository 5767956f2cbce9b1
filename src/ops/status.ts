/** `status` (docs/architecture.md "Job states"): counts per state, scheduled, per-lane counts, recent dead jobs. */

import { REPORTED_STATES } from "../store/model.ts";
import { queueDisks } from "../store/space.ts";
import type { SnapshotReader, StoreReader, WaitingOnNeeds } from "../store/store.ts";
import type { BatchSummary } from "./batch.ts";
import { type JobSummary, summarize } from "./jobs.ts";
import { pausedLanes } from "./lane-notices.ts";
import { type HealthContext, strandedJobs, type WorkerHealth } from "./worker-health.ts";
import { type JudgeWorker, listWorkers, staleAfter } from "./workers.ts";

/** Counts keyed by every reported state (`failed` always 0). */
export type StateCounts = Record<(typeof REPORTED_STATES)[number], number>;

/** `status --json` data. */
export interface StatusData {
  counts: StateCounts;
  scheduled: number;
  queues: Record<string, StateCounts & { scheduled: number }>;
  recent_dead: JobSummary[];
  /** Registered workers judged alive and heartbeating (a `stale` one is not counted). */
  live_workers: number;
  /**
   * Running jobs whose worker is not live (dead, lease expired, or not
   * heartbeating), with what will happen to each (docs/architecture.md "Dead
   * workers in the views"); at most 1000.
   */
  stranded: WorkerHealth[];
  /** Lanes paused now (docs/architecture.md "Lanes and slots"), by name; times epoch seconds. */
  paused_lanes: PausedLane[];
  /** Queued jobs that wait for other jobs: how many, and the oldest 10 with what each waits on (docs/architecture.md "Dependencies"). */
  waiting_on_needs: WaitingOnNeeds;
  /**
   * Disks of the queue on this host that are full (docs/architecture.md
   * "Storage conditions"): workers pause claiming meanwhile. Set by the
   * `status` verb, which knows where the queue lives.
   */
  full_disks?: FullDisk[];
  /** The recurring schedules, when there are any (docs/architecture.md "Recurring jobs"). */
  schedules?: StatusSchedule[];
  /** `status --batch NAME`: that batch's counts and verdict (docs/architecture.md "Batches"). */
  batch?: BatchSummary;
}

/** A schedule as `status` shows it. Times in epoch seconds. */
export interface StatusSchedule {
  name: string;
  paused: boolean;
  /** The next slot (null while paused). */
  next_slot: number | null;
  last_job_id: number | null;
  last_job_state: string | null;
}

/** A paused lane as `status --json` reports it. */
export interface PausedLane {
  queue: string;
  paused_at: number;
  /** When it resumes by itself; null: until `spoolctl resume`. */
  paused_until: number | null;
  reason: string | null;
  /** Its queued jobs, which wait. */
  queued: number;
}

/** A full disk of the queue, as `status --json` reports it. Bytes. */
export interface FullDisk {
  role: "database" | "spool";
  path: string;
  free_bytes: number;
}

/** The queue's full disks on this host (see {@link StatusData.full_disks}). */
export function fullDisks(store: {
  driver: "sqlite" | "postgres";
  location: string;
  spoolDir: string;
  exists: boolean;
}): FullDisk[] {
  if (!store.exists) return [];
  return queueDisks(store)
    .filter((d) => d.full)
    .map((d) => ({ role: d.role, path: d.path, free_bytes: d.freeBytes }));
}

function zero(): StateCounts {
  return Object.fromEntries(REPORTED_STATES.map((s) => [s, 0])) as StateCounts;
}

/** {@link readStatus} in one snapshot, dated by the queue's clock. */
export function statusOf(
  store: SnapshotReader,
  judge: JudgeWorker,
  deadLimit = 5,
  health?: HealthContext,
): Promise<StatusData> {
  return store.read((tx) => readStatus(tx, judge, store.now(), deadLimit, health));
}

/**
 * Reads the status. `now` is epoch seconds; `deadLimit` bounds `recent_dead`;
 * `health` judges the running jobs' workers (without it, `stranded` is empty
 * and no worker is `stale`).
 */
export async function readStatus(
  tx: StoreReader,
  judge: JudgeWorker,
  now = Date.now() / 1000,
  deadLimit = 5,
  health?: HealthContext,
): Promise<StatusData> {
  const counts = zero();
  const queues: StatusData["queues"] = {};
  // Lanes are user-named: a lane called "constructor" or "toString" must not find Object.prototype's member.
  const lane = (queue: string) =>
    Object.hasOwn(queues, queue) ? queues[queue]! : (queues[queue] = { ...zero(), scheduled: 0 });
  for (const { state, queue, n } of await tx.countByStateAndLane()) {
    counts[state] += n;
    lane(queue)[state] += n;
  }
  let scheduled = 0;
  for (const { queue, n } of await tx.countScheduledByLane(now)) {
    scheduled += n;
    lane(queue).scheduled = n;
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
  const paused_lanes = (await pausedLanes(tx, now)).map((l) => ({
    queue: l.queue,
    paused_at: l.paused_at!,
    paused_until: l.paused_until,
    reason: l.pause_reason,
    queued: Object.hasOwn(queues, l.queue) ? queues[l.queue]!.queued : 0,
  }));
  return {
    counts,
    scheduled,
    queues,
    recent_dead: (await tx.recentDead(deadLimit)).map((j) => summarize(j, now)),
    live_workers,
    stranded,
    ...(schedules.length > 0 ? { schedules } : {}),
    paused_lanes,
    waiting_on_needs: await tx.waitingOnNeeds(10),
  };
}
