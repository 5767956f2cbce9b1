/** `spoolctl wait IDS…`: block until every job is terminal; exit 6 if any ended dead or canceled (docs/contract.md "Exit codes and codes"). */
import type { VerbResult } from "../contract/envelope.ts";
import { EXIT, SpoolError, type Warning } from "../contract/errors.ts";
import type { FailFastMode } from "../model/job.ts";
import { LIMITS } from "../model/limits.ts";
import { parseBatchName, parseFailFast } from "../ops/batch.ts";
import { ALL_LANES, workerLanes } from "../ops/lanes.ts";
import { counted } from "../ops/values.ts";
import { stallReason } from "../ops/worker-health.ts";
import { staleAfter, type WorkerView } from "../ops/workers.ts";
import type { Store } from "../store/store.ts";
import { resolveJobs } from "../store/verbs/jobs.ts";
import { escapeControl } from "../ui/text.ts";
import { batchLine } from "./batch.ts";
import { pausedJobWarnings } from "./lane-notices.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";
import { type LaneService, type LaneServiceCheck, type WaitData, waitForJobs } from "./wait-jobs.ts";
import { type WaitSelection, waitForSelection } from "./wait-selection.ts";
import { healthContext, judgeRecord } from "./workers.ts";

/** Default pause between two looks at the queue, seconds. */
const DEFAULT_POLL = 0.1;

/**
 * The selection a `wait` follows instead of ids (`--batch`, `--queue`, `--tag`), or null for ids.
 * Raises `INVALID_INPUT` for ids given with a selection, `--batch` with `--queue`/`--tag`, or
 * `--fail-fast` without `--batch`; `MISSING_REQUIRED` for neither ids nor a selection.
 */
function selectionOf(
  batch: string | undefined,
  queue: string | undefined,
  tags: Record<string, string>,
  failFast: string | undefined,
  ids: string[],
): (WaitSelection & { failFast: FailFastMode | null }) | null {
  const bySet = queue !== undefined || Object.keys(tags).length > 0;
  if (failFast !== undefined && batch === undefined)
    throw new SpoolError("INVALID_INPUT", "--fail-fast acts on a batch; give --batch NAME", {
      remediation: "spoolctl wait --batch NAME --fail-fast",
    });
  if (batch === undefined && !bySet) {
    if (ids.length === 0)
      throw new SpoolError("MISSING_REQUIRED", "wait needs at least one job id, or --batch, --queue or --tag", {
        remediation: "spoolctl wait ID…  (spoolctl list shows ids), or spoolctl wait --batch NAME",
      });
    return null;
  }
  if (ids.length > 0)
    throw new SpoolError("INVALID_INPUT", "give job ids or a selection (--batch, --queue, --tag), not both", {
      remediation: `spoolctl wait ${ids.join(" ")}  or  spoolctl wait --batch NAME`,
    });
  if (batch !== undefined && bySet)
    throw new SpoolError("INVALID_INPUT", "--batch waits for a whole batch; --queue and --tag select without one", {
      remediation: `spoolctl wait --batch ${batch}`,
    });
  return {
    ...(batch !== undefined ? { batch: parseBatchName("--batch", batch) } : {}),
    ...(queue !== undefined ? { queue } : {}),
    tags,
    failFast: failFast === undefined ? null : parseFailFast(failFast),
  };
}

/**
 * `LANE_PAUSED` for awaited jobs queued in a paused lane (src/commands/lane-notices.ts);
 * references that do not resolve are left to the wait, which reports them.
 */
async function pausedAwaited(store: Store, refs: string[]): Promise<Warning[]> {
  try {
    return await pausedJobWarnings(store, await resolveJobs(store, refs));
  } catch {
    return [];
  }
}

export default defineVerb({
  name: "wait",
  description:
    "Wait until every given job is done, dead or canceled, or a whole batch (--batch: sealed, jobs added meanwhile included) or lane/tag selection. Exit 0 when all succeeded, 6 when any ended dead or canceled, 4 (TIMEOUT) after --timeout.",
  examples: [
    "spoolctl wait 1 2 3",
    "spoolctl wait nightly-1 --timeout 10m --json",
    "spoolctl work --drain && spoolctl wait 1 2",
    "spoolctl wait --batch ci-42 --fail-fast --json   # the whole batch, jobs added meanwhile included",
    "spoolctl wait --queue builds --tag ci=1",
  ],
  mutates: true,
  flags: {
    ...COMMON_FLAGS,
    timeout: {
      type: "string",
      description: "give up after this long (TIMEOUT, exit 4); default: wait for ever",
      valueHint: "DURATION",
      valueType: "duration",
      min: 0,
      max: LIMITS.delay_seconds.max,
    },
    "poll-interval": {
      type: "string",
      description: "seconds between two looks at the queue",
      valueHint: "SECONDS",
      valueType: "number",
      default: String(DEFAULT_POLL),
      min: LIMITS.poll_interval.min,
      max: 60,
    },
    batch: {
      type: "string",
      description:
        "wait for this batch: until it is sealed and every job of it ended, jobs added while waiting included",
      valueHint: "NAME",
    },
    queue: {
      type: "string",
      description:
        "wait for the jobs of this lane: until none is queued or running, jobs added while waiting included; the verdict judges every job of the lane, ended ones included (no job: NOT_FOUND)",
      valueHint: "NAME",
      format: "lane",
    },
    tag: {
      type: "string",
      repeatable: true,
      description: "wait for the jobs with this tag (all given must match), like --queue",
      valueHint: "K=V",
      valueType: "pair",
    },
    "fail-fast": {
      type: "string",
      optionalValue: true,
      description:
        "with --batch: at its first dead job cancel its queued jobs and exit 6 (the queue keeps the property, so it holds if this wait dies); --fail-fast=now also stops its running jobs",
      valueHint: "[now]",
    },
    ids: {
      type: "positional",
      required: false,
      variadic: true,
      description: "job ids, idempotency keys or last (the newest job)",
      valueHint: "ID…",
      noun: "at least one job id",
      hint: "spoolctl wait ID…  (spoolctl list shows ids), or wait --batch NAME",
    },
  },
  async run(ctx): Promise<VerbResult<WaitData>> {
    const { ids: refs, "poll-interval": pollSeconds } = ctx.args;
    const timeoutSeconds = ctx.args.timeout ?? null;
    const progress = !ctx.json && Boolean(process.stderr.isTTY);
    let shown = false;
    const onProgress = progress
      ? (settled: number, total: number) => {
          process.stderr.write(`\r\u001b[2Kspoolctl: waiting: ${settled}/${total} jobs settled`);
          shown = true;
        }
      : undefined;
    const selection = selectionOf(ctx.args.batch, ctx.args.queue, ctx.args.tag, ctx.args["fail-fast"], refs);
    try {
      // Read-only unless it sets a batch's fail-fast: a reading wait never touches the file (docs/architecture.md "Location").
      const store = await ctx.open({ create: false, readOnly: !selection?.failFast });
      // Judged at each check (the queue's clock moves); `decide` reads the rows so judged.
      let health = healthContext(store);
      const judging = () => {
        health = healthContext(store);
        return { judge: judgeRecord, stale: staleAfter(health) };
      };
      const decide = (workers: WorkerView[]): LaneService => {
        // A worker's registry row names its lanes: `a,b`, or `*` for every lane (src/ops/lanes.ts).
        const lanesOf = (column: string) => {
          const lanes = workerLanes(column);
          return lanes === "all" ? [ALL_LANES] : lanes;
        };
        const live = new Set(workers.filter((w) => w.status === "live").flatMap((w) => lanesOf(w.queue)));
        const stalled = new Map<string, string>();
        for (const w of workers) {
          if (w.status !== "stale") continue;
          const who = { host: w.host, pid: w.pid, bootId: null, startTime: null };
          const name = `worker ${w.worker_id} (pid ${w.pid})`;
          for (const lane of lanesOf(w.queue)) {
            if (live.has(lane) || stalled.has(lane)) continue;
            stalled.set(lane, stallReason(name, health.stall?.(who) ?? null, w.pid, health.now - w.heartbeat_at));
          }
        }
        return { live, stalled };
      };
      const servedLanes: LaneServiceCheck = { judging, decide };
      // Said at once on stderr (a person or a CI log sees why nothing moves); under --json it is in the envelope's warnings.
      const onUnattended = ctx.json
        ? undefined
        : (w: Warning) => {
            process.stderr.write(
              `${shown ? "\r\u001b[2K" : ""}spoolctl: warning: ${w.code}: ${ctx.suggest(w.message)}\n`,
            );
          };
      if (selection) {
        const { data, anyFailed, warnings } = await waitForSelection(store, selection, {
          timeoutSeconds,
          pollSeconds,
          onProgress,
          servedLanes,
          onUnattended,
          failFast: selection.failFast,
        });
        // NO_WORKER was said as it happened; EMPTY_BATCH is said here.
        if (!ctx.json)
          for (const w of warnings.filter((w) => w.code !== "NO_WORKER"))
            process.stderr.write(`spoolctl: warning: ${w.code}: ${ctx.suggest(w.message)}\n`);
        return { data, exitCode: anyFailed ? EXIT.JOB_FAILED : EXIT.OK, warnings: ctx.json ? warnings : [] };
      }
      // Awaited jobs of a paused lane cannot start until it is resumed: said before the wait, not after it.
      const paused = await pausedAwaited(store, refs);
      if (onUnattended) for (const w of paused) onUnattended(w);
      const { data, anyFailed, warnings } = await waitForJobs(store, refs, {
        timeoutSeconds,
        pollSeconds,
        onProgress,
        servedLanes,
        onUnattended,
      });
      return {
        data,
        exitCode: anyFailed ? EXIT.JOB_FAILED : EXIT.OK,
        warnings: ctx.json ? [...paused, ...warnings] : [],
      };
    } finally {
      if (shown) process.stderr.write("\r\u001b[2K");
    }
  },
  render({ data }) {
    if (data.batch) return batchLine(data.batch);
    if (data.counts)
      return `${counted(
        Object.values(data.counts).reduce((a, b) => a + b, 0),
        "job",
      )} ended: ${Object.entries(data.counts)
        .filter(([, n]) => n > 0)
        .map(([state, n]) => `${n} ${state}`)
        .join(", ")}`;
    return Object.entries(data.jobs)
      .map(
        ([id, j]) =>
          `job ${id} ${j.state}${j.state === "done" ? "" : j.last_error ? ` (${escapeControl(j.last_error)})` : ""}`,
      )
      .join("\n");
  },
});
