/**
 * The worker's interface to the commands (src/commands/work.ts renders it):
 * how a worker runs ({@link WorkOptions}), what it reports as it goes
 * ({@link WorkerEvent}) and what it did in the end ({@link WorkSummary}).
 */
import type { WorkSummary } from "../describe/schemas-core.ts";
import type { Job } from "../model/job.ts";
import type { NeedHold } from "../ops/need-holds.ts";
import type { Leftovers, Outcome } from "../ops/outcome.ts";
import type { SlotOutcome } from "../store/recurring.ts";
import type { ReapedJob } from "./reaper.ts";
import type { Timing } from "./timing.ts";

/** How a worker runs. Times in seconds. */
export interface WorkOptions {
  /** The lane served first (with `lanes`, their first; with `allLanes`, `default`): named in the worker's messages. */
  queue: string;
  /**
   * Every lane served, in order of preference (`work --queue a,b`): a claim
   * tries them in this order (docs/architecture.md "Lanes and slots"). Absent: `[queue]`.
   */
  lanes?: string[];
  /** Serve every lane (`work --all-lanes`): those with jobs, `default` first, then by name. */
  allLanes?: boolean;
  slots: number | null;
  concurrency: number;
  pollInterval: number;
  workerId: string;
  mode: "loop" | "once" | "drain";
  timing?: Timing;
  onEvent?: (event: WorkerEvent) => void;
  /**
   * How to start this worker's watchdog on a shared queue (docs/architecture.md
   * "A stopped worker"): the command that runs `runWatchdog` given one more
   * argument, and whether it may write on stderr. Without it (a worker run
   * inside another program), none is started.
   */
  watchdog?: { command: string[]; say: boolean };
}

/** What a worker reports as it goes; the command renders these. */
export type WorkerEvent =
  | {
      type: "finished";
      jobId: number;
      attemptNo: number;
      argv: string[];
      outcome: Outcome;
      seconds: number;
      /** What the attempt left running once its own process exited (docs/architecture.md "Leftover processes"). */
      left?: Leftovers;
    }
  | { type: "lost"; jobId: number; attemptNo: number }
  | { type: "reaped"; reaped: ReapedJob }
  | { type: "orphans"; killed: { jobId: number; attemptNo: number; pgid: number }[] }
  /** A group that carries an attempt's marker (or writes its files) but holds this worker: left alone. */
  | { type: "orphan_spared"; jobId: number; attemptNo: number; pgid: number }
  | { type: "lease_lost"; jobIds: number[]; seconds: number }
  /** This worker's watchdog could not be started, or died and is started again. */
  | { type: "watchdog"; message: string }
  | { type: "transient"; message: string }
  /** A storage condition began or ended (claiming paused, space back, results left to the reaper). */
  | { type: "storage"; message: string }
  /** Spans cannot be exported over OTLP (README "Metrics and traces"); jobs run on. */
  | { type: "tracing"; message: string }
  | { type: "stopping"; reason: string; inFlight: number }
  /** Registration waits for the lease of a holder of its worker id that cannot be judged from here. */
  | { type: "id_wait"; message: string }
  /** An attempt was started; `job` as claimed (its counters and last error are the previous attempts'). */
  | { type: "started"; job: Job; attemptNo: number }
  /** This worker's due-slot pass fired, skipped or counted missed slots of schedules (src/worker/schedule-pass.ts). */
  | { type: "schedule"; outcomes: SlotOutcome[] }
  /** A lane this worker serves is paused (said once per pause): `message` says why and until when. */
  | { type: "lane_paused"; queue: string; message: string }
  /** A lane this worker serves is no longer paused. */
  | { type: "lane_resumed"; queue: string }
  /** A lane's own ceiling (`lane set --slots`) differs from this worker's --slots, and wins (said once per value). */
  | { type: "lane_slots"; queue: string; slots: number; own: number }
  /** A looping worker has nothing to run and waits (once, the first time). */
  | { type: "idle"; queue: string }
  /**
   * A drain has had nothing to run for a while: jobs of other workers hold the lane (the first
   * few, with how long each worker has been silent, seconds; `leaseSeconds`: on a queue shared by
   * hosts, the silence after which a job is reaped; null on one host, where only a dead worker's
   * job is). Once per idle spell.
   */
  | {
      type: "drain_waiting";
      queue: string;
      leaseSeconds: number | null;
      running: { jobId: number; workerId: string | null; host: string | null; silentSeconds: number }[];
    }
  /**
   * A drain with nothing running is held by dependents whose needs are still to run (in
   * another lane a live worker serves, or out of a backoff): which job waits on which need,
   * and why. Once per idle spell.
   */
  | { type: "drain_needs"; holds: NeedHold[] }
  /**
   * A drain settled leaving dependents queued whose needs cannot run in it (delayed, in a
   * paused lane, in a lane no live worker serves, deleted): each, with its need and why.
   */
  | { type: "drain_left"; holds: NeedHold[] }
  /** A drain ended with held jobs in its lanes (docs/architecture.md "Holding a job"): the first few, and how many. */
  | { type: "drain_held"; jobs: { id: number; queue: string }[]; count: number };

// Defined once, as the JSON Schema `spoolctl schema` prints.
export type { WorkSummary };
