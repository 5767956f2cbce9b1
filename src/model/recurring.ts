/**
 * The persisted shapes of recurring schedules and outcome hooks (docs/architecture.md
 * "Recurring jobs", "Hooks"): their rows and what a due-slot pass decides. Times are
 * epoch seconds. The algorithms over them are the store's (src/store/recurring.ts).
 */
import type { JobState, NewJob } from "./job.ts";

/** A job as a schedule or hook keeps it: everything `add` stores but its due time and key. */
export type JobTemplate = Omit<NewJob, "next_run_at" | "idempotency_key">;

/** What happens to a slot that comes while the schedule's previous job is still queued or running. */
export type Overlap = "skip" | "queue" | "allow";

/** A `schedules` row. */
export interface Schedule {
  name: string;
  /** A cron expression (5 or 6 fields, croner's grammar), or null for an `--every` schedule. */
  cron: string | null;
  /** The interval of an `--every` schedule, seconds (slots at whole multiples since the epoch). */
  every_seconds: number | null;
  /** IANA zone the cron expression is read in; null: UTC. */
  tz: string | null;
  job: JobTemplate;
  queue: string;
  /** `none`, `last` or `all:N`. */
  catch_up: string;
  overlap: Overlap;
  paused: boolean;
  /** The next slot to fire: the fence of the guarded UPDATE that fires it. */
  next_slot: number;
  last_slot: number | null;
  last_job_id: number | null;
  created_at: number;
}

/** A schedule with the state of its last job (`schedule list`). */
export interface ScheduleView extends Schedule {
  last_job_state: JobState | null;
}

/** What a due-slot pass does with one schedule (decided by the pure planner of src/ops/schedule-time.ts). */
export interface SlotDecision {
  /** Slots to fire now, oldest first. */
  fire: number[];
  /** Slots passed over because the previous job is still active (`--overlap skip`). */
  skipped: number[];
  /** Slots left unfired by the catch-up policy (they came while no pass ran). */
  missed: { first: number; last: number; count: number } | null;
  /** The schedule's next slot after this pass. */
  next: number;
}

/** The outcomes a hook can wait for: a job's end, or a batch's (`batch-done`, src/store/batch-hooks.ts). */
export const HOOK_OUTCOMES = ["done", "dead", "canceled", "batch-done"] as const;
/** A hook's outcome. */
export type HookOutcome = (typeof HOOK_OUTCOMES)[number];

/** A `hooks` row. */
export interface Hook {
  name: string;
  on_outcome: HookOutcome;
  /** Only jobs of this lane trigger it; null: any lane. */
  match_queue: string | null;
  match_tag_key: string | null;
  match_tag_value: string | null;
  /** The hook's job (its lane is `hooks` unless given). */
  job: JobTemplate;
  created_at: number;
}
