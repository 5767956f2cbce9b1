/**
 * What a worker knows of the lanes it serves (docs/architecture.md "Lanes and
 * slots"), re-read at most once a second: which lanes it serves (its
 * `--queue a,b` in order of preference, or with `--all-lanes` every lane that
 * has jobs), which of them are paused, and their own slot ceilings. The claim
 * statement enforces pauses and ceilings by itself; this view only spares
 * claims that would find nothing, wakes the worker for the right lanes and
 * says what changed (a pause, a resume, a lane ceiling that overrides the
 * worker's `--slots`).
 */

import type { LaneSetting } from "../model/job.ts";
import { DEFAULTS } from "../model/limits.ts";
import { pauseInForce, pauseText } from "../ops/lanes.ts";
import { drainSettled } from "../store/reader.ts";
import type { Store, WorkWaker } from "../store/store.ts";
import { drainStates, laneView } from "../store/verbs/worker-lanes.ts";
import type { WorkerEvent } from "./api.ts";
import { type DependentHolds, dependentHolds } from "./drain-wait.ts";
import type { Timing } from "./timing.ts";

/** How often the lane view is re-read, milliseconds: a `lane set` or a pause reaches a running fleet within it. */
const LANE_REFRESH_MS = 1000;

/** Which lanes a worker serves: a list in order of preference, or every lane (`--all-lanes`). */
export interface LaneChoice {
  lanes: readonly string[];
  allLanes: boolean;
  /** The worker's own `--slots`; null: none. */
  slots: number | null;
}

/** A worker's view of its lanes (see the module comment). */
export class LaneWatch {
  private settings = new Map<string, LaneSetting>();
  private servedNow: string[];
  private lastRead = -Infinity;
  /** Lanes whose pause was said, with the text said; lanes whose override of --slots was said, with the ceiling. */
  private readonly saidPaused = new Map<string, string>();
  private readonly saidSlots = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly choice: LaneChoice,
    private readonly emit: (event: WorkerEvent) => void,
    private readonly timing: Timing,
  ) {
    this.servedNow = choice.allLanes ? [DEFAULTS.queue] : [...choice.lanes];
  }

  /** The lanes served now, in order of preference (with --all-lanes: `default`, then the others by name). */
  served(): string[] {
    return this.servedNow;
  }

  /** The served lanes a claim may take a job from now: those not known to be paused. */
  claimable(): string[] {
    const now = this.store.now();
    return this.servedNow.filter((l) => !pauseInForce(this.settings.get(l), now));
  }

  /** Whether `lane` is paused as last read. */
  isPaused(lane: string): boolean {
    return pauseInForce(this.settings.get(lane), this.store.now());
  }

  /** Whether any served lane has a ceiling (its own or the worker's): the worker then wants freed-slot wake-ups. */
  anySlots(): boolean {
    return this.choice.slots !== null || this.servedNow.some((l) => (this.settings.get(l)?.slots ?? null) !== null);
  }

  /**
   * Re-reads the lanes (one read) when {@link LANE_REFRESH_MS} has passed, or
   * at once with `force`; resolves true when the set of served lanes changed
   * (the caller watches the new set). Says pauses, resumes and ceilings that
   * override the worker's --slots, each once.
   */
  async refresh(force = false): Promise<boolean> {
    if (!force && performance.now() - this.lastRead < LANE_REFRESH_MS) return false;
    this.lastRead = performance.now();
    const { settings, withJobs } = await laneView(this.store, this.choice.allLanes);
    this.settings = new Map(settings.map((l) => [l.queue, l]));
    let changed = false;
    if (this.choice.allLanes) {
      const names = [...new Set([DEFAULTS.queue, ...withJobs.map((c) => c.queue)])].sort((a, b) =>
        a === DEFAULTS.queue ? -1 : b === DEFAULTS.queue ? 1 : a.localeCompare(b),
      );
      // Lanes are added as they get jobs, never dropped: a lane that just emptied may be refilled at once.
      const merged = [...this.servedNow, ...names.filter((n) => !this.servedNow.includes(n))];
      changed = merged.length !== this.servedNow.length;
      this.servedNow = merged;
    }
    this.say();
    return changed;
  }

  /** Emits what changed since the last refresh (see {@link refresh}). */
  private say(): void {
    const now = this.store.now();
    for (const lane of this.servedNow) {
      const setting = this.settings.get(lane);
      if (pauseInForce(setting, now)) {
        const text = pauseText(setting!, now);
        // Said once per pause (a new reason or end is a new pause), not at every refresh as its time left shrinks.
        const key = `${setting!.paused_at}|${setting!.paused_until}|${setting!.pause_reason}`;
        if (this.saidPaused.get(lane) !== key) this.emit({ type: "lane_paused", queue: lane, message: text });
        this.saidPaused.set(lane, key);
      } else if (this.saidPaused.delete(lane)) this.emit({ type: "lane_resumed", queue: lane });
      const slots = setting?.slots ?? null;
      if (slots !== null && this.choice.slots !== null && slots !== this.choice.slots) {
        if (this.saidSlots.get(lane) !== slots)
          this.emit({ type: "lane_slots", queue: lane, slots, own: this.choice.slots });
        this.saidSlots.set(lane, slots);
      } else this.saidSlots.delete(lane);
    }
  }

  /** What the waker was made for: freed-slot wake-ups or not, and the lanes. */
  private wakerKey = "";

  /**
   * The waker for the lanes served now: `current` when it still fits, else a
   * new one (the caller closes the old). A worker held back by a ceiling (its
   * --slots or a lane's own) or a drain also asks to be woken by a freed slot.
   */
  rewatch(current: WorkWaker | null, draining: boolean): WorkWaker {
    const freed = this.anySlots() || draining;
    const key = `${freed}|${this.servedNow.join(",")}`;
    if (current && key === this.wakerKey) return current;
    this.wakerKey = key;
    return this.store.watchWork(this.servedNow, { freed });
  }

  /**
   * Whether every lane served is settled (docs/architecture.md "Drain"):
   * nothing running, nothing waiting, one snapshot. A paused lane's queued
   * jobs hold no drain: they cannot start until it is resumed, and the
   * drain's closing line names the lane (src/commands/work.ts). With
   * `--all-lanes` the lanes are re-read first: a lane that appeared is not
   * settled until served. When nothing runs and only queued dependents wait,
   * they are judged ({@link dependentHolds}): dependents whose needs cannot run
   * in this drain hold it no more than a delayed job does; {@link holds} keeps
   * that judgement for the drain's lines.
   */
  async settled(): Promise<boolean> {
    // --all-lanes: a lane that got work since the last look (a hook's job in lane `hooks`,
    // added with the last result) is served before the drain may end.
    if (this.choice.allLanes && (await this.refresh(true))) return false;
    const lanes = this.servedNow;
    const now = this.store.now();
    const states = await drainStates(this.store, lanes, now);
    this.holds = null;
    if (states.every((state, i) => (this.isPaused(lanes[i]!) ? state.running === 0 : drainSettled(state)))) return true;
    // A running job, ours or another worker's, ends by itself: only an idle wait is judged.
    if (states.some((state) => state.running > 0)) return false;
    this.holds = await dependentHolds(
      this.store,
      lanes,
      this.choice.allLanes ? "all" : lanes,
      (lane) => this.isPaused(lane),
      this.timing,
    );
    return this.holds.settled;
  }

  /** The last judgement of the dependents that held the drain (null: none was needed). */
  holds: DependentHolds | null = null;
}
