/** `spoolctl workers`: live and recently seen workers from the registry. */
import type { VerbResult } from "../contract/envelope.ts";
import type { WorkerRecord } from "../model/job.ts";
import type { HealthContext } from "../ops/worker-health.ts";
import { staleAfter, type WorkerView } from "../ops/workers.ts";
import { fullDisks } from "../store/space.ts";
import type { Store } from "../store/store.ts";
import { workerList } from "../store/verbs/workers.ts";
import { humanDuration, iso, table } from "../ui/text.ts";
import { deathCertain, foreignPidSpace, HOST, judge, processState, reapableByLease } from "../worker/liveness.ts";
import { readTiming } from "../worker/timing.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";

/** Judges a registry row by its recorded process identity: live, or how it died (see src/worker/liveness.ts). */
export function judgeRecord(w: WorkerRecord) {
  return judge({ host: w.host, pid: w.pid, bootId: w.boot_id, startTime: w.start_time, pidNs: w.pid_ns ?? null });
}

/** Heartbeat intervals without a heartbeat after which a live worker is shown `stale`. */
const STALE_BEATS = 3;

/**
 * How the views judge workers and their running jobs (docs/architecture.md
 * "Dead workers in the views"): process look-ups on this host, the queue's
 * clock (this host's without a store), the lease (the reap threshold) and
 * the `stale` age, 3 heartbeat intervals; `sharedQueue` (PostgreSQL: every
 * worker keeps a watchdog) says who is reaped by lease, see
 * src/worker/liveness.ts reapableByLease.
 */
export function healthContext(
  store: (Pick<Store, "now"> & Partial<Parameters<typeof fullDisks>[0]> & Partial<Pick<Store, "shipsOutput">>) | null,
  sharedQueue = store?.shipsOutput ?? true,
): HealthContext {
  const timing = readTiming();
  let full: boolean | undefined;
  const disksFull = () => (full ??= store?.driver !== undefined && fullDisks(store as Store).length > 0);
  return {
    judge,
    certain: deathCertain,
    foreign: foreignPidSpace,
    // Not told: judged as a shared queue, where every worker keeps a watchdog.
    reapable: (who) => reapableByLease(who, sharedQueue),
    stall: (who) => {
      if (foreignPidSpace(who)) return null;
      const state = processState(who.pid);
      if (state === "T" || state === "t") return "stopped";
      return disksFull() ? "disk_full" : null;
    },
    host: HOST,
    now: store ? store.now() : Date.now() / 1000,
    leaseSeconds: timing.reapThreshold,
    staleSeconds: STALE_BEATS * timing.heartbeat,
  };
}

export default defineVerb({
  name: "workers",
  description:
    "List live and recently seen workers: id, pid, host, lane, status (live, stale, lease_expired, stopped, dead), started, last heartbeat, running jobs.",
  examples: ["spoolctl workers", "spoolctl workers --all --json"],
  flags: {
    ...COMMON_FLAGS,
    all: {
      type: "boolean",
      description:
        "include stopped and dead workers, and lease_expired ones without running jobs (those holding running jobs are always shown)",
    },
  },
  async run(ctx): Promise<VerbResult<{ count: number; workers: WorkerView[] }>> {
    const store = await ctx.open({ create: false });
    const health = healthContext(store);
    const all = await workerList(store, judgeRecord, 100, staleAfter(health));
    // A lease_expired worker is listed while its running jobs wait for their reap; after that only with --all.
    const workers = ctx.args.all
      ? all
      : all.filter(
          (w) =>
            w.status === "live" || w.status === "stale" || (w.status === "lease_expired" && w.running_jobs.length > 0),
        );
    return { data: { count: workers.length, workers } };
  },
  render({ data }, ctx) {
    if (data.count === 0)
      return ctx.suggest("no live workers (spoolctl workers --all shows stopped, dead and lease_expired ones)");
    const now = Date.now() / 1000;
    return table(
      ["WORKER", "PID", "HOST", "LANE", "STATUS", "STARTED", "HEARTBEAT", "RUNNING"],
      data.workers.map((w) => [
        w.worker_id,
        String(w.pid),
        w.host,
        w.queue,
        w.stop_requested && w.status === "live" ? "stopping" : w.status,
        iso(w.started_at),
        `${humanDuration(Math.max(0, now - w.heartbeat_at))} ago`,
        w.running_jobs.length ? w.running_jobs.join(",") : "-",
      ]),
    );
  },
});
