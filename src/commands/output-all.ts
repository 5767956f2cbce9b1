/**
 * `output --follow --all` (docs/architecture.md "Batches"): every line of a
 * selection's attempts on stdout, each whole, prefixed `[ID]` (`[ID stderr]`,
 * `[ID#N]` for attempt N > 1), or one JSON object per line under `--json`.
 * Ends when a batch is settled, or on Ctrl-C (SIGINT/SIGTERM).
 */

import { randomBytes } from "node:crypto";
import type { Attempt } from "../model/job.ts";
import { describeExit } from "../ops/outcome.ts";
import type { Store } from "../store/store.ts";
import { batchByName } from "../store/verbs/follow.ts";
import { resolveJobs } from "../store/verbs/jobs.ts";
import { errorText, groupText } from "../ui/github.ts";
import { type FollowedLine, type FollowSelection, followAll } from "./follow-all.ts";

/** Lines kept of one attempt in GitHub mode (a group is printed whole when the attempt ends). */
const GROUP_MAX_LINES = 20_000;
/** Last stderr lines an error annotation carries. */
const ERROR_LINES = 10;

/** Pause between two looks at the queue, milliseconds. */
const POLL_MS = 100;

/** Writes text to stdout whole, waiting while the reader is slow. */
async function writeOut(text: string): Promise<void> {
  if (!process.stdout.write(text)) await new Promise<void>((resolve) => process.stdout.once("drain", () => resolve()));
}

/** A line as text: `[12] …`, `[12 stderr] …`, `[12#2] …`. */
function prefixed(line: FollowedLine): string {
  const id = line.attempt > 1 ? `${line.job}#${line.attempt}` : String(line.job);
  return `[${id}${line.stream === "stderr" ? " stderr" : ""}] ${line.text}\n`;
}

/**
 * GitHub mode (README "CI example"): each attempt's lines kept until it
 * ends, then printed as one `::group::NAME (exit N, 3.2s)` (NAME the job's
 * name, else `job ID`; `#N` for attempt N > 1), and one `::error` annotation
 * with its last stderr lines when the job ended dead.
 */
class GithubGroups {
  private readonly lines = new Map<string, { out: string[]; err: string[]; cut: number }>();
  private readonly token = randomBytes(12).toString("hex");

  constructor(private readonly store: Store) {}

  take(line: FollowedLine): void {
    const key = `${line.job}.${line.attempt}`;
    let kept = this.lines.get(key);
    if (!kept) this.lines.set(key, (kept = { out: [], err: [], cut: 0 }));
    if (kept.out.length < GROUP_MAX_LINES)
      kept.out.push(line.stream === "stderr" ? `[stderr] ${line.text}` : line.text);
    else kept.cut++;
    if (line.stream === "stderr") kept.err = [...kept.err.slice(-(ERROR_LINES - 1)), line.text];
  }

  async ended(attempt: Attempt): Promise<void> {
    const key = `${attempt.job_id}.${attempt.attempt_no}`;
    const kept = this.lines.get(key) ?? { out: [], err: [], cut: 0 };
    this.lines.delete(key);
    const job = (await resolveJobs(this.store, [String(attempt.job_id)]).catch(() => []))[0];
    const name = `${job?.name ?? `job ${attempt.job_id}`}${attempt.attempt_no > 1 ? ` #${attempt.attempt_no}` : ""}`;
    const seconds = Math.max(0, (attempt.finished_at ?? attempt.started_at) - attempt.started_at);
    const how = attempt.state === "timed_out" ? "timed out" : describeExit(attempt.exit_code, attempt.signal);
    const body =
      kept.cut > 0 ? [...kept.out, `… ${kept.cut} more lines (spoolctl output ${attempt.job_id})`] : kept.out;
    let text = groupText(`${name} (${how}, ${seconds.toFixed(1)}s)`, body, this.token);
    // Once per dead job, with its last attempt: a replay of a finished job walks its earlier ones too.
    if (job?.state === "dead" && attempt.attempt_no === job.last_attempt_no) {
      const detail = attempt.error ?? how;
      const tail = kept.err.length > 0 ? `\n${kept.err.join("\n")}` : "";
      text += errorText(job.name ?? `job ${job.id}`, `job ${job.id} ended dead: ${detail}${tail}`);
    }
    await writeOut(text);
  }
}

/** Follows `sel` to stdout until it is settled or interrupted; `github`: GitHub Actions groups (see {@link GithubGroups}). */
export async function followAllCommand(
  store: Store,
  sel: FollowSelection,
  json: boolean,
  github = false,
): Promise<void> {
  let stop = false;
  const onSignal = () => void (stop = true);
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    // A batch may be added after its follower starts (a CI step's background follower), but a
    // mistyped name would follow nothing for ever: say it once.
    if (sel.batch !== undefined && (await batchByName(store, sel.batch)) === null)
      process.stderr.write(
        `spoolctl: warning: no batch named ${JSON.stringify(sel.batch)} yet; following it from when its first job is added (spoolctl batch list shows the batches; Ctrl-C stops)\n`,
      );
    const groups = github && !json ? new GithubGroups(store) : null;
    const end = await followAll(
      store,
      sel,
      { pollMs: POLL_MS, shouldStop: () => stop, ...(groups ? { ended: (a: Attempt) => groups.ended(a) } : {}) },
      (line) => (groups ? groups.take(line) : writeOut(json ? `${JSON.stringify(line)}\n` : prefixed(line))),
    );
    if (!json && process.stderr.isTTY)
      process.stderr.write(`spoolctl: ${end === "settled" ? `batch ${sel.batch} settled` : "stopped"}\n`);
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
