/**
 * The worker's due-slot pass (docs/architecture.md "Recurring jobs"): at most about once a
 * second, and only then, one indexed read of the earliest next slot; a write transaction only
 * when a slot is due. Every live worker runs it; the store's guard makes one of them fire each
 * slot, so no worker is a leader and none has to be alive for the others to fire.
 */

import type { SlotOutcome } from "../store/recurring.ts";
import type { Store } from "../store/store.ts";
import { tickSchedules } from "../store/verbs/schedules.ts";

/** Fewest milliseconds between two passes of one worker. */
const PASS_INTERVAL_MS = 1000;

/** One worker's pass, throttled; errors go to the worker's handler of transient conditions. */
export class SchedulePass {
  private lastPass = -Infinity;
  /** Earliest next slot seen by the last pass (epoch seconds; null: none), for the idle wait. */
  private earliest: number | null = null;
  private running = false;

  constructor(
    private readonly store: Store,
    private readonly onFired: (outcomes: SlotOutcome[]) => void,
  ) {}

  /** Runs a pass unless one ran less than {@link PASS_INTERVAL_MS} ago (or is under way). */
  async maybeRun(): Promise<void> {
    if (this.running || performance.now() - this.lastPass < PASS_INTERVAL_MS) return;
    this.running = true;
    this.lastPass = performance.now();
    try {
      const { outcomes, earliest } = await tickSchedules(this.store);
      this.earliest = earliest;
      if (outcomes.length > 0) this.onFired(outcomes);
    } finally {
      this.running = false;
    }
  }

  /**
   * How long the worker may sleep before the next slot is due, ms (Infinity: no schedule
   * known), never less than the time to the next allowed pass.
   */
  msUntilDue(): number {
    const untilPass = Math.max(1, this.lastPass + PASS_INTERVAL_MS - performance.now());
    if (this.earliest === null) return Math.max(untilPass, PASS_INTERVAL_MS * 5);
    return Math.max(untilPass, (this.earliest - this.store.now()) * 1000 + 5);
  }
}
