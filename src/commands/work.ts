/** `spoolctl work`: run jobs from one lane, several, or all, until stopped, once, or drained. */
import type { VerbResult } from "../contract/envelope.ts";
import { SpoolError } from "../contract/errors.ts";
import { DEFAULTS, LIMITS } from "../model/limits.ts";
import { counted } from "../ops/values.ts";
import type { Store } from "../store/store.ts";
import { closedByNeedsSince, drainProgress } from "../store/verbs/lane-reads.ts";
import { ProgressLine } from "../ui/live.ts";
import { closedLines, workerLine } from "../ui/worker-lines.ts";
import type { WorkSummary } from "../worker/api.ts";
import { Worker } from "../worker/loop.ts";
import { newWorkerId } from "../worker/registry.ts";
import { WATCHDOG_ARG } from "../worker/watchdog.ts";
import { drainNotes } from "./lane-notices.ts";
import { COMMON_FLAGS, defineVerb, type VerbContext } from "./verb.ts";

/** How long a starting worker waits for a database it reached but lost (seconds). */
const OPEN_PATIENCE_SECONDS = 30;
/** While it waits, the same condition is said once, then summed up this often (docs/architecture.md "Storage conditions"). */
const SUMMARY_EVERY_MS = 30_000;

/**
 * Opens the queue for a worker. A held lock or a full disk is waited out for as
 * long as it lasts (docs/architecture.md "Contention"); a connection cut while
 * opening (a restarting server, a killed backend) with a growing pause for up
 * to {@link OPEN_PATIENCE_SECONDS}, as the worker rides out the same condition
 * later; then, or at once for any other error, the error is raised. The
 * condition is said in one line, then in a summary every 30 s (how many more
 * tries met it), never once per try.
 */
async function openRidingOut(ctx: VerbContext): Promise<Store> {
  const started = performance.now();
  const deadline = started + OPEN_PATIENCE_SECONDS * 1000;
  let tries = 0;
  let said: { message: string; at: number; since: number } | null = null;
  for (let pause = 100; ; pause = Math.min(pause * 2, 2000)) {
    try {
      return await ctx.open({ create: true, overlapping: true });
    } catch (error) {
      tries++;
      const transient = error instanceof SpoolError && (error.code === "LOCKED" || error.detail?.storage !== undefined);
      // A held lock or a full disk is waited out for as long as it lasts, as a running worker does.
      const endless = error instanceof SpoolError && (error.code === "LOCKED" || error.detail?.storage === "full");
      if (!transient || (!endless && performance.now() + pause > deadline))
        throw gaveUp(error, tries, (performance.now() - started) / 1000);
      const e = error as SpoolError;
      const now = performance.now();
      if (said === null || said.message !== e.message) {
        // The first line also says for how long, and what to do (a mistyped URL never comes back).
        const first =
          said === null && !endless
            ? ` for up to ${OPEN_PATIENCE_SECONDS}s${e.remediation ? `: ${ctx.suggest(e.remediation)}` : ""}`
            : "";
        if (!ctx.json) process.stderr.write(`spoolctl: ${e.message}; will retry${first}\n`);
        said = { message: e.message, at: now, since: 0 };
      } else {
        said.since++;
        if (now - said.at >= SUMMARY_EVERY_MS) {
          if (!ctx.json)
            process.stderr.write(
              `spoolctl: still waiting: ${e.message} (${counted(said.since, "more try", "more tries")} in ${Math.round((now - said.at) / 1000)}s); will retry\n`,
            );
          said = { message: e.message, at: now, since: 0 };
        }
      }
      await Bun.sleep(pause);
    }
  }
}

/**
 * The error a worker gives up starting with: an unreachable database's
 * remediation also says how often and how long this worker tried, and that
 * a running worker rides such an outage out (docs/architecture.md
 * "Heartbeat and lease"), which only `work` may promise.
 */
function gaveUp(error: unknown, tries: number, seconds: number): unknown {
  if (!(error instanceof SpoolError) || error.detail?.storage !== "unreachable") return error;
  return new SpoolError(error.code, error.message, {
    remediation: `${error.remediation}; this worker tried ${counted(tries, "time")} in ${Math.round(seconds)}s to start, while a worker already running keeps its jobs and retries`,
    did_you_mean: error.did_you_mean,
    detail: error.detail,
  });
}

/**
 * The closing line of `work --drain` (README "Running jobs"): how many
 * attempts ran and how each ended, e.g. `spoolctl: drained lane default: 4
 * executed: 2 succeeded, 1 failed and retried, 1 dead`.
 */
function drainSummary(
  queue: string,
  many: boolean,
  drained: boolean,
  executed: number,
  ended: { succeeded: number; retried: number; dead: number; canceled: number; lost: number },
): string {
  const parts = [`${ended.succeeded} succeeded`, `${ended.retried} failed and retried`, `${ended.dead} dead`];
  if (ended.canceled) parts.push(`${ended.canceled} canceled or interrupted`);
  if (ended.lost) parts.push(`${ended.lost} taken from this worker`);
  const what = executed === 0 ? "nothing to run" : `${executed} executed: ${parts.join(", ")}`;
  const lanes = queue === "every lane" ? queue : `lane${many ? "s" : ""} ${queue}`;
  return `spoolctl: ${drained ? "drained" : "stopped draining"} ${lanes}: ${what}`;
}

/** `work --json` data. */
export type WorkData = WorkSummary;

export default defineVerb({
  name: "work",
  description:
    "Run jobs: claim, execute in their own process group, record, retry. Ctrl-C stops after running jobs finish; a second Ctrl-C kills them.",
  mutates: true,
  examples: [
    "spoolctl work                      # run until Ctrl-C",
    "spoolctl work --drain              # run until the lane is settled, then exit",
    "spoolctl work --once --json        # claim and run at most one job",
    "spoolctl work --queue builds --concurrency 4 --slots 8",
    "spoolctl work --queue deploy,builds     # deploy first, then builds",
    "spoolctl work --all-lanes --drain       # every lane, until all are settled",
  ],
  flags: {
    ...COMMON_FLAGS,
    once: { type: "boolean", description: "claim at most one job, run it, exit" },
    drain: { type: "boolean", description: "exit when nothing is running, due or waiting on a retry backoff" },
    queue: {
      type: "string",
      description: "lane(s) to serve, in order of preference: a,b (or --queue a --queue b)",
      valueHint: "NAME[,NAME…]",
      format: "lane",
      separator: ",",
      repeatable: true,
      default: DEFAULTS.queue,
    },
    "all-lanes": { type: "boolean", description: "serve every lane (default first, then by name)" },
    slots: {
      type: "string",
      description: "fleet-wide ceiling of running jobs in the lane",
      valueHint: "N",
      valueType: "integer",
      min: LIMITS.slots.min,
      max: LIMITS.slots.max,
    },
    concurrency: {
      type: "string",
      description: "jobs this process runs at once",
      valueHint: "N",
      valueType: "integer",
      default: "1",
      min: LIMITS.concurrency.min,
      max: LIMITS.concurrency.max,
    },
    "poll-interval": {
      type: "string",
      description: "seconds between polls when no file change wakes the worker",
      valueHint: "SECONDS",
      valueType: "number",
      default: "1",
      min: LIMITS.poll_interval.min,
      max: LIMITS.poll_interval.max,
    },
    "worker-id": {
      type: "string",
      description: "name of this worker in the registry",
      valueHint: "ID",
      format: "worker-id",
    },
  },
  async run(ctx): Promise<VerbResult<WorkData>> {
    const { once, drain, concurrency, "poll-interval": pollInterval } = ctx.args;
    const allLanes = ctx.args["all-lanes"];
    if (allLanes && ctx.given("queue"))
      throw new SpoolError("INVALID_INPUT", "give --queue or --all-lanes, not both", {
        remediation: "--queue a,b serves those lanes in that order; --all-lanes serves every lane",
      });
    // A repeatable flag's default is not filled in: no --queue is the default lane.
    const lanes = ctx.args.queue.length > 0 ? [...new Set(ctx.args.queue)] : [DEFAULTS.queue];
    const queue = lanes[0]!;
    const named = allLanes ? "every lane" : lanes.join(", ");
    if (once && drain) {
      throw new SpoolError("INVALID_INPUT", "give --once or --drain, not both", {
        remediation: "--once runs one job; --drain runs until the lane is settled",
      });
    }
    const slots = ctx.args.slots ?? null;
    const workerId = ctx.args["worker-id"] ?? newWorkerId();
    const store = await openRidingOut(ctx);
    // Once, at start: a worker would otherwise run jobs from a damaged file until it met the damage.
    await store.checkIntact();
    const mode = once ? "once" : drain ? "drain" : "loop";
    // Progress: `--drain` on a terminal only; never on a pipe or under --json.
    const progress = new ProgressLine(
      process.stderr,
      mode === "drain" && !ctx.json && Boolean(process.stderr.isTTY) && process.env.TERM !== "dumb",
    );
    let executed = 0;
    // What the drain's closing line counts, by how each attempt ended (they add up to `executed`).
    const ended = { succeeded: 0, retried: 0, dead: 0, canceled: 0, lost: 0 };
    const refresh = async () => {
      try {
        // What holds the drain, counted as the worker's exit counts it (docs/architecture.md "Drain").
        const { left, running, paused } = await drainProgress(store, allLanes ? "all" : lanes);
        const pausedNote = paused.length ? `; PAUSED: ${paused.join(", ")} (spoolctl resume LANE)` : "";
        progress.update(
          `spoolctl: draining ${named}: ${executed} executed, ${left} left (${running} running)${pausedNote}`,
        );
      } catch {
        // progress is best effort
      }
    };
    const ticker = progress.enabled ? setInterval(() => void refresh(), 250) : null;
    if (progress.enabled) await refresh();
    const worker = new Worker(store, {
      queue,
      lanes: allLanes ? undefined : lanes,
      allLanes,
      slots,
      concurrency,
      pollInterval,
      workerId,
      mode,
      // This very program, run again as the watchdog (src/cli.ts): a bundle or a checkout alike.
      watchdog: { command: [process.execPath, Bun.main, WATCHDOG_ARG], say: !ctx.json },
      onEvent: ctx.json
        ? undefined
        : (event) => {
            if (event.type === "finished" || event.type === "lost") executed++;
            if (event.type === "lost") ended.lost++;
            if (event.type === "finished") {
              const state = event.outcome.jobState;
              ended[
                state === "done" ? "succeeded" : state === "queued" ? "retried" : state === "dead" ? "dead" : "canceled"
              ]++;
            }
            const line = workerLine(event);
            if (line !== null) progress.println(`${ctx.suggest(line)}\n`);
            if (progress.enabled) void refresh();
          },
    });
    const onSignal = (signal: NodeJS.Signals) => {
      if (worker.isStopping) worker.interrupt();
      else worker.requestStop(`got ${signal}`);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    // Ctrl-Z stops the worker between two of its write transactions, never inside one: stopped while
    // holding SQLite's write lock (PostgreSQL: row locks) it would lock other writers out of the queue
    // until resumed (docs/architecture.md "Contention"). On PostgreSQL its watchdog then ends its jobs
    // before its lease expires ("A stopped worker").
    // One stop per Ctrl-Z burst: a second Ctrl-Z while a write ends must not stop it again once resumed.
    let stopPending = false;
    const onStopKey = () => {
      if (stopPending) return;
      stopPending = true;
      void store
        .betweenWrites(() => {
          stopPending = false;
          process.kill(process.pid, "SIGSTOP");
        })
        .catch(() => {});
    };
    process.on("SIGTSTP", onStopKey);
    const startedAt = store.now();
    try {
      const data = await worker.run();
      progress.clear();
      if (mode === "drain" && !ctx.json) {
        process.stderr.write(`${drainSummary(named, allLanes || lanes.length > 1, data.drained, executed, ended)}\n`);
        // The dependents closed because a need died while it drained, by name (best effort: a read that fails says nothing).
        const closed = ended.dead > 0 ? await closedByNeedsSince(store, startedAt, 21).catch(() => []) : [];
        for (const line of closedLines(closed.slice(0, 20), closed.length - 20)) process.stderr.write(`${line}\n`);
        // Paused lanes it left jobs in, and other lanes with work: a drain of one lane must not leave them unsaid.
        for (const note of await drainNotes(store, lanes, allLanes).catch(() => []))
          process.stderr.write(`${ctx.suggest(`spoolctl: ${note}`)}\n`);
      }
      // --once that found nothing would otherwise end in silence, as if it had hung up.
      if (mode === "once" && !ctx.json && "claimed" in data && !data.claimed)
        process.stderr.write(
          ctx.suggest(
            `spoolctl: no job due in ${allLanes ? "any lane" : `lane${lanes.length > 1 ? "s" : ""} ${named}`}; nothing ran (spoolctl status shows what is queued)`,
          ) + "\n",
        );
      return { data };
    } finally {
      if (ticker) clearInterval(ticker);
      progress.clear();
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      process.off("SIGTSTP", onStopKey);
    }
  },
  render() {
    return "";
  },
});
