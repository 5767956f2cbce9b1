/** `spoolctl stop`: ask workers, through the registry, to finish their running jobs and exit (like one Ctrl-C). */
import type { VerbResult } from "../contract/envelope.ts";
import { SpoolError } from "../contract/errors.ts";
import type { StopData } from "../describe/schemas-core.ts";
import { staleAfter } from "../ops/workers.ts";
import { stopProgress, stopWorkers } from "../store/verbs/workers.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";
import { healthContext, judgeRecord } from "./workers.ts";

/** Longest `--wait --timeout`, seconds. */
const MAX_TIMEOUT = 30 * 86400;

export default defineVerb({
  name: "stop",
  description:
    "Ask running workers to stop claiming, finish their running jobs and exit (like Ctrl-C in their terminal).",
  mutates: true,
  examples: ["spoolctl stop", "spoolctl stop --worker-id ci-1 --wait --timeout 5m"],
  flags: {
    ...COMMON_FLAGS,
    "worker-id": { type: "string", description: "only this worker (default: all)", valueHint: "ID" },
    wait: { type: "boolean", description: "return when the workers have exited" },
    timeout: {
      type: "string",
      description: "with --wait: give up after this long (TIMEOUT, exit 4)",
      valueHint: "DURATION",
      valueType: "duration",
      min: 0,
      max: MAX_TIMEOUT,
    },
  },
  noArgsHint: "use --worker-id ID for one worker",
  async run(ctx): Promise<VerbResult<StopData>> {
    if (ctx.given("timeout") && !ctx.args.wait)
      throw new SpoolError("INVALID_INPUT", "--timeout only applies with --wait");
    const timeout = ctx.args.timeout ?? null;
    const store = await ctx.open({ create: false });
    const requested = await stopWorkers(
      store,
      ctx.args["worker-id"] ?? null,
      judgeRecord,
      staleAfter(healthContext(store)),
    );
    if (!ctx.args.wait) return { data: { requested, stopped: null } };
    const deadline = timeout === null ? Infinity : performance.now() + timeout * 1000;
    for (;;) {
      // A stale worker (SIGSTOPped, stuck) is still there and still waited for; a lease_expired one
      // (its lease expired on another host, as the reaper judges it) will never answer.
      const { views, records } = await stopProgress(store, judgeRecord, staleAfter(healthContext(store)));
      const running = views.filter(
        (w) => requested.includes(w.worker_id) && (w.status === "live" || w.status === "stale"),
      );
      // Stopped in the registry, and on this host gone too: a worker marks itself stopped just before it exits.
      const exiting =
        running.length > 0 ? [] : records.filter((r) => requested.includes(r.worker_id) && judgeRecord(r) === "alive");
      if (running.length === 0 && exiting.length === 0) return { data: { requested, stopped: requested } };
      if (performance.now() > deadline) {
        const left = [...running.map((w) => w.worker_id), ...exiting.map((r) => r.worker_id)];
        throw new SpoolError("TIMEOUT", `workers still running after ${timeout}s: ${left.join(", ")}`, {
          remediation: "they finish their running jobs first; wait longer, or send them SIGTERM twice to kill the jobs",
        });
      }
      await Bun.sleep(100);
    }
  },
  render({ data }) {
    if (data.requested.length === 0) return "no running workers";
    return data.stopped
      ? `stopped ${data.stopped.join(", ")}`
      : `asked ${data.requested.join(", ")} to stop after their running jobs`;
  },
});
