/**
 * `status` (docs/architecture.md "Job states"): the shape of its data (counts per
 * state, scheduled, per-lane counts, recent dead jobs) and the queue's full
 * disks; the read itself is `statusSnapshot` (src/store/verbs/status.ts).
 */

import type { REPORTED_STATES } from "../store/model.ts";
import type { WaitingOnNeeds } from "../store/reader.ts";
import { queueDisks } from "../store/space.ts";
import type { BatchSummary } from "./batch.ts";
import type { JobSummary } from "./jobs.ts";
import type { WorkerHealth } from "./worker-health.ts";

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
