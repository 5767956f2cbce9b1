/** `spoolctl status`: counts per state, scheduled, lanes, recent dead jobs; `--watch` redraws them live. */
import type { VerbResult } from "../contract/envelope.ts";
import { SpoolError, type Warning } from "../contract/errors.ts";
import { parseBatchName } from "../ops/batch.ts";
import type { StatusData } from "../ops/status.ts";
import { fullDisks } from "../store/space.ts";
import { showBatch } from "../store/verbs/batches.ts";
import { liveSnapshot, statusSnapshot } from "../store/verbs/status.ts";
import { stdoutPaint } from "../ui/color.ts";
import { renderLiveStatus, renderStatus } from "../ui/status-view.ts";
import { guardStdio } from "../ui/stdio.ts";
import { lineRoom } from "../ui/text.ts";
import { batchLine } from "./batch.ts";
import { readRidingOut } from "./ride-out.ts";
import { COMMON_FLAGS, defineVerb, type VerbContext } from "./verb.ts";
import { healthContext, judgeRecord } from "./workers.ts";

/** Bounds of `--interval` (seconds). */
const INTERVAL = { min: 0.1, max: 3600, default: "1" } as const;

/**
 * `status --watch`: redraws on the terminal until Ctrl-C. Refused off a
 * terminal and under --json (a redrawing screen is not a stream a pipe or a
 * program can read; `status` without --watch prints one snapshot).
 */
async function watch(ctx: VerbContext, intervalSeconds: number): Promise<StatusData> {
  if (ctx.json) {
    throw new SpoolError("INVALID_INPUT", "--watch redraws a terminal and cannot be combined with --json", {
      remediation: "drop --watch: spoolctl status --json prints one snapshot",
    });
  }
  guardStdio(); // the screen writes through process.stdout
  if (!process.stdout.isTTY) {
    throw new SpoolError("INVALID_INPUT", "--watch needs a terminal, and stdout is not one", {
      remediation: "drop --watch to print the status once (or poll: spoolctl status --json)",
    });
  }
  const { runWatchScreen } = await import("../ui/live.ts");
  const store = await ctx.openAppearing();
  let last: StatusData | null = null;
  const wake = store.watch();
  try {
    await runWatchScreen({
      out: process.stdout,
      intervalMs: intervalSeconds * 1000,
      wake,
      frame: async (color) => {
        const live = await liveSnapshot(store, judgeRecord, 50, 5, healthContext(null, store.shipsOutput));
        last = live.status;
        return renderLiveStatus(live, color, intervalSeconds);
      },
    });
  } finally {
    wake.close();
  }
  return last ?? (await statusSnapshot(store, judgeRecord));
}

export default defineVerb({
  name: "status",
  description: "Show job counts per state (and per lane), scheduled jobs, and recent dead jobs.",
  examples: [
    "spoolctl status",
    "spoolctl status --json",
    "spoolctl status --watch --interval 2   # live, on a terminal; Ctrl-C to quit",
  ],
  flags: {
    ...COMMON_FLAGS,
    watch: {
      type: "boolean",
      description:
        "redraw live on a terminal (lanes, running jobs, recent failures) until Ctrl-C; refused off a terminal and with --json",
    },
    batch: { type: "string", description: "also show this batch: its counts, seal and verdict", valueHint: "NAME" },
    interval: {
      type: "string",
      description: `seconds between redraws with --watch (${INTERVAL.min}-${INTERVAL.max}; queue changes also redraw)`,
      valueHint: "SECONDS",
      default: INTERVAL.default,
      valueType: "number",
      min: INTERVAL.min,
      max: INTERVAL.max,
    },
  },
  async run(ctx): Promise<VerbResult<StatusData>> {
    if (ctx.given("interval") && !ctx.args.watch)
      throw new SpoolError("INVALID_INPUT", "--interval only applies to --watch", {
        remediation: "add --watch, or drop --interval",
      });
    if (ctx.args.watch) return { data: await watch(ctx, ctx.args.interval), streamed: true };
    // A busy queue or a server out of connection slots is waited out, as `add` does (docs/architecture.md "Contention").
    return await readRidingOut(ctx, async (store) => {
      // The health view reads the whole file once: counts alone come from a table that may be intact beside damage.
      await store.checkIntact();
      const status = await statusSnapshot(store, judgeRecord, 5, healthContext(store));
      const active = (status.schedules ?? []).filter((s) => !s.paused).length;
      // Any live worker, of any lane, runs the due-slot pass (docs/architecture.md "Recurring jobs").
      const warnings: Warning[] =
        active > 0 && status.live_workers === 0
          ? [
              {
                code: "SCHEDULES_UNFIRED",
                message: ctx.suggest(
                  `${active} active schedule(s) but no live worker: their slots pass unfired until one runs (spoolctl work), or fire them once with spoolctl schedule tick`,
                ),
              },
            ]
          : [];
      const batch =
        ctx.args.batch === undefined
          ? {}
          : { batch: await showBatch(store, parseBatchName("--batch", ctx.args.batch)) };
      return { data: { ...status, full_disks: fullDisks(store), ...batch }, warnings };
    });
  },
  render({ data }, ctx) {
    const text = renderStatus(data, stdoutPaint(), ctx.suggest, lineRoom());
    return data.batch ? `batch ${batchLine(data.batch)}\n${text}` : text;
  },
});
