/**
 * Interactive pickers for `retry` and `cancel` without an ID (and `delete`'s
 * confirm): a
 * @clack/prompts multi-select of the eligible jobs. Only ever opened when stdin
 * and stdout are terminals and --json is off; the verbs decide that. The
 * pickers only choose: the verbs then run their usual operation on the chosen
 * ids, in one transaction, so every rule of `retry ID…` / `cancel ID…` holds.
 */
import { styleText } from "node:util";
import * as p from "@clack/prompts";
import type { Job, JobState } from "../model/job.ts";
import type { DeletionPreview } from "../ops/delete.ts";
import { RETRYABLE_STATES } from "../ops/retry.ts";
import { counted } from "../ops/values.ts";
import { formatBytes } from "../store/read-bounded.ts";
import type { Store } from "../store/store.ts";
import { jobsInStates } from "../store/verbs/triage.ts";
import { clip, clipColumns, closesText, columns, escapeControl, formatArgv, idList } from "./text.ts";

/** Rows of the list shown at once; the rest scroll. */
const MAX_ITEMS = 12;

/** Columns of the hint (the last error) beside the row under the cursor. */
const HINT_COLUMNS = 30;

/**
 * One job as a picker option: id, state and command on one line, its last
 * error as the hint. The row under the cursor reads "│  ◻ label (hint)": label
 * and hint are cut (in terminal columns) so that it fits `width` and never wraps.
 */
function option(job: Job, width: number): { value: number; label: string; hint?: string } {
  const label = `${String(job.id).padStart(4)}  ${job.state.padEnd(8)}  ${job.queue === "default" ? "" : `[${escapeControl(job.queue)}] `}${clip(formatArgv(job.argv))}`;
  const hint = job.last_error ? clipColumns(escapeControl(job.last_error), HINT_COLUMNS) : undefined;
  // clack wraps each row at the terminal's width less the *length* of its colored "│  " prefix
  // (escape codes included), computed here the same way: then "◻ label (hint)" must fit.
  const wrapAt = width - `${styleText("cyan", "│")}  `.length;
  const room = Math.max(20, wrapAt - 2 - (hint ? columns(hint) + 3 : 0));
  return { value: job.id, label: clipColumns(label, room), hint };
}

/**
 * A multi-select over `jobs`: the chosen ids, [] when there was nothing to
 * choose, or null when the person canceled (Ctrl-C or Esc), which changes nothing.
 */
async function pickJobs(message: string, jobs: Job[], none: string): Promise<number[] | null> {
  if (jobs.length === 0) {
    p.log.info(none);
    return [];
  }
  const width = process.stdout.columns || 80;
  const picked = await p.multiselect({
    message,
    options: jobs.map((j) => option(j, width)),
    maxItems: MAX_ITEMS,
    required: true,
  });
  if (p.isCancel(picked)) {
    p.cancel("Canceled: nothing changed.");
    return null;
  }
  return picked;
}

/** `retry` without an ID: pick among dead and canceled jobs, newest first. Null when canceled. */
export async function pickToRetry(store: Store): Promise<number[] | null> {
  const jobs = await jobsInStates(store, RETRYABLE_STATES, { tags: {} });
  return pickJobs(
    "Jobs to retry (space selects, enter confirms, Ctrl-C stops)",
    jobs,
    "no dead or canceled jobs to retry",
  );
}

/**
 * `cancel` without an ID: pick among queued jobs, and running ones when
 * `--running` was given. Choosing a running job without `--yes` asks for the
 * confirmation `--yes` would give (its process group is killed); No or Ctrl-C
 * cancels nothing at all. Returns the ids and whether running ones are confirmed.
 */
export async function pickToCancel(
  store: Store,
  opts: { running: boolean; yes: boolean },
): Promise<{ ids: number[]; confirmedRunning: boolean }> {
  const states: JobState[] = opts.running ? ["running", "queued"] : ["queued"];
  const jobs = await jobsInStates(store, states, { tags: {} });
  const hint = opts.running ? "" : " — running jobs are listed with --running";
  const ids = await pickJobs(
    `Jobs to cancel (space selects, enter confirms, Ctrl-C stops)${hint}`,
    jobs,
    `no ${opts.running ? "queued or running" : "queued"} jobs to cancel`,
  );
  if (!ids?.length) return { ids: [], confirmedRunning: false };
  const running = jobs.filter((j) => j.state === "running" && ids.includes(j.id)).map((j) => j.id);
  if (running.length === 0 || opts.yes) return { ids, confirmedRunning: opts.yes };
  const sure = await p.confirm({
    message: `Job${running.length > 1 ? "s" : ""} ${running.join(", ")} ${running.length > 1 ? "are" : "is"} running: cancel anyway? Its worker kills the job's process group.`,
    initialValue: false,
  });
  if (p.isCancel(sure) || !sure) {
    p.cancel("Nothing canceled.");
    return { ids: [], confirmedRunning: false };
  }
  return { ids, confirmedRunning: true };
}

/**
 * `delete` at a terminal without `--yes`: asks once, counting what goes
 * (`preview`: jobs, attempts, events, bytes of output). True only on an
 * explicit yes; No, Ctrl-C or Esc delete nothing.
 */
export async function confirmDelete(preview: DeletionPreview, ids: number[]): Promise<boolean> {
  const jobs = ids.length === 1 ? `job ${ids[0]}` : `${ids.length} jobs (${idList(ids)})`;
  const sure = await p.confirm({
    message: `Delete ${jobs} with ${counted(preview.attempts, "attempt")}, ${counted(preview.events, "event")} and ${formatBytes(preview.bytes)} of output${closesText(preview.closes, ids.length)}? This cannot be undone.`,
    initialValue: false,
  });
  if (p.isCancel(sure) || !sure) {
    p.cancel("Nothing deleted.");
    return false;
  }
  return true;
}
