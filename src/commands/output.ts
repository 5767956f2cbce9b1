/** `spoolctl output ID`: an attempt's captured stdout and stderr. */

import { closeSync, openSync, readSync, writeSync } from "node:fs";
import type { VerbResult } from "../contract/envelope.ts";
import { SpoolError } from "../contract/errors.ts";
import type { Attempt } from "../model/job.ts";
import { parseBatchName } from "../ops/batch.ts";
import { describeExit } from "../ops/outcome.ts";
import { type AttemptOutput, parseStream, type StreamName } from "../ops/output.ts";
import type { Store } from "../store/store.ts";
import { attemptOutput, jobAttempt } from "../store/verbs/output.ts";
import { githubMode } from "../ui/github.ts";
import { escapeControl, formatArgv } from "../ui/text.ts";
import { type FollowChunk, shippedChunks } from "./follow.ts";
import type { FollowSelection } from "./follow-all.ts";
import { COMMON_FLAGS, defineVerb, jobIdPositional } from "./verb.ts";

/** Streams larger than this are shown as their tail (bytes). */
const MAX_TEXT_BYTES = 1024 * 1024;

/** Writes bytes, waiting when the reader is slow (a pipe into `less`, say). */
async function writeAll(out: NodeJS.WriteStream, bytes: Uint8Array): Promise<void> {
  if (!out.write(bytes)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
}

/** Bytes read per step of `--raw`: memory stays near this whatever the file's size. */
const RAW_CHUNK_BYTES = 1024 * 1024;

/**
 * `--raw`: the file's exact bytes on stdout, never decoded, one chunk at a time
 * written synchronously, so memory stays constant whatever the size. Stdout may
 * be a non-blocking pipe (EAGAIN while the reader is slow): then it waits a
 * little, longer while the reader stays idle. (`Bun.write(Bun.stdout, file)`
 * fails there, and a FileSink leaves an unhandled EPIPE behind.) A missing file
 * writes nothing, as before; a reader that went away (`| head`) ends the copy quietly.
 */
async function writeRaw(path: string | null, shipped: () => AsyncGenerator<FollowChunk>): Promise<void> {
  if (path === null) return;
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    if ((error as { code?: unknown })?.code !== "ENOENT") throw error;
    // Written on another host: the copy its worker shipped into the database.
    for await (const chunk of shipped()) await writeAll(process.stdout, chunk.bytes);
    return;
  }
  const chunk = Buffer.allocUnsafe(RAW_CHUNK_BYTES);
  try {
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) return;
      let done = 0;
      let pauseMs = 1;
      while (done < n) {
        try {
          done += writeSync(1, chunk, done, n - done);
          pauseMs = 1;
        } catch (error) {
          if ((error as { code?: unknown })?.code !== "EAGAIN") throw error;
          await Bun.sleep(pauseMs);
          pauseMs = Math.min(pauseMs * 2, 50);
        }
      }
    }
  } catch (error) {
    if ((error as { code?: unknown })?.code !== "EPIPE") throw error;
  } finally {
    closeSync(fd);
  }
}

/**
 * `--follow`: the job's stdout to stdout and its stderr to stderr (one stream
 * asked for goes to stdout) as they are written, until the attempt ends; on a
 * terminal a last line on stderr says how it ended. An attempt whose worker
 * (or host) died is said on stderr when the views would say it; when it is
 * reaped, the job's next attempt is followed (docs/architecture.md "Output").
 * `pinned` (`--attempt N`): that attempt only.
 */
async function streamAttempt(store: Store, first: Attempt, streams: StreamName[], pinned: boolean): Promise<void> {
  const { awaitFirstAttempt, followAttempt } = await import("./follow.ts");
  const say = (line: string) => process.stderr.write(`spoolctl: ${line}\n`);
  let attempt = first;
  for (;;) {
    const { job_id, attempt_no } = attempt;
    const follow = followAttempt(store, attempt, streams, 100, (fate) =>
      say(`job ${job_id} attempt ${attempt_no}: ${escapeControl(fate)}`),
    );
    let end: Attempt;
    for (;;) {
      const next = await follow.next();
      if (next.done) {
        end = next.value;
        break;
      }
      const { stream, bytes } = next.value;
      await writeAll(stream === "stderr" && streams.length === 2 ? process.stderr : process.stdout, bytes);
    }
    if (end.state === "abandoned" && !pinned) {
      // Reaped: its worker or host died, or its lease expired. The job runs again as a new attempt.
      say(
        `job ${job_id} attempt ${attempt_no} was abandoned: ${escapeControl(end.error ?? "its worker died")}; following its next attempt once it starts (Ctrl-C to stop)`,
      );
      const after = await awaitFirstAttempt(store, job_id, 1000, attempt_no);
      if (!after.attempt) {
        say(
          after.job
            ? `job ${job_id} is ${after.job.state}: no attempt after ${attempt_no}`
            : `job ${job_id} was deleted before it ran again`,
        );
        return;
      }
      say(`following job ${job_id} attempt ${after.attempt.attempt_no}`);
      attempt = after.attempt;
      continue;
    }
    if (process.stderr.isTTY || end.state === "abandoned") {
      const how =
        end.state === "running"
          ? "is still running"
          : `ended: ${end.state}${end.state === "succeeded" ? "" : ` (${end.error ?? describeExit(end.exit_code, end.signal)})`}`;
      say(`job ${end.job_id} attempt ${end.attempt_no} ${how}`);
    }
    return;
  }
}

/** The command that writes all of one stream's bytes: `spoolctl output 179 --raw --stream stdout` (with `--attempt N` when one was named). */
function rawCommand(id: string, stream: StreamName, attempt: number | undefined): string {
  return `spoolctl output ${formatArgv([id])}${attempt === undefined ? "" : ` --attempt ${attempt}`} --raw --stream ${stream}`;
}

/**
 * The selection of `output --follow --all` (`--batch`, `--queue`, `--tag`), or
 * null for one job's output. Raises `INVALID_INPUT` for `--all` without
 * `--follow` or a selection, with a job id, or with `--raw`/`--attempt`/`--stream`;
 * a selection without `--all`; `MISSING_REQUIRED` for no job id and no `--all`.
 */
function followAllSelection(ctx: {
  args: {
    all: boolean;
    follow: boolean;
    raw: boolean;
    id?: string;
    batch?: string;
    queue?: string;
    tag: Record<string, string>;
    attempt?: number;
  };
  given(name: string): boolean;
}): FollowSelection | null {
  const { all, follow, id, batch, queue, tag } = ctx.args;
  const selected = batch !== undefined || queue !== undefined || Object.keys(tag).length > 0;
  if (!all) {
    if (selected)
      throw new SpoolError("INVALID_INPUT", "--batch, --queue and --tag select jobs for --follow --all", {
        remediation: "spoolctl output --follow --all --batch NAME",
      });
    if (id === undefined)
      throw new SpoolError(
        "MISSING_REQUIRED",
        "output needs a job id (or --follow --all with --batch, --queue or --tag)",
        {
          remediation: "spoolctl output ID  (spoolctl list shows ids)",
        },
      );
    return null;
  }
  if (!follow || !selected)
    throw new SpoolError("INVALID_INPUT", "--all follows many jobs: give --follow and --batch, --queue or --tag", {
      remediation: "spoolctl output --follow --all --batch NAME",
    });
  if (id !== undefined)
    throw new SpoolError("INVALID_INPUT", "--all follows a selection, not one job; drop the job id or --all", {
      remediation: `spoolctl output ${formatArgv([id])} --follow`,
    });
  for (const flag of ["raw", "attempt", "stream"])
    if (ctx.given(flag))
      throw new SpoolError("INVALID_INPUT", `--${flag} applies to one job's output, not --all`, {
        remediation: "spoolctl output --follow --all --batch NAME",
      });
  return {
    ...(batch !== undefined ? { batch: parseBatchName("--batch", batch) } : {}),
    ...(queue !== undefined ? { queue } : {}),
    tags: tag,
  };
}

export default defineVerb({
  name: "output",
  description: "Print the captured stdout and stderr of a job's latest attempt (or --attempt N).",
  examples: [
    "spoolctl output 1",
    "spoolctl output 1 --attempt 2 --stream stderr",
    "spoolctl output 1 --stream stdout --raw > out.txt",
    "spoolctl output 7 --follow            # like tail -f, until the attempt ends",
  ],
  flags: {
    ...COMMON_FLAGS,
    attempt: {
      type: "string",
      description: "attempt number (default: the latest)",
      valueHint: "N",
      valueType: "integer",
      min: 1,
      max: Number.MAX_SAFE_INTEGER,
    },
    stream: {
      type: "string",
      description: "stdout, stderr or both",
      valueHint: "STREAM",
      default: "both",
      choices: ["stdout", "stderr", "both"],
    },
    raw: { type: "boolean", description: "write the stream's bytes only, no headers (needs --stream stdout|stderr)" },
    follow: {
      type: "boolean",
      description:
        "stream a running attempt's output until it ends, then exit 0 (bytes only: the job's stdout to stdout, its stderr to stderr; one --stream goes to stdout); a queued job's first attempt is waited for; an attempt that has ended prints what exists",
    },
    all: {
      type: "boolean",
      description:
        "with --follow and --batch, --queue or --tag: every line of every matching attempt, prefixed [ID] ([ID stderr] for stderr), jobs that start later included; ends when the batch is settled, else on Ctrl-C; --json streams {job, attempt, stream, text} per line",
    },
    batch: { type: "string", description: "with --follow --all: the jobs of this batch", valueHint: "NAME" },
    queue: {
      type: "string",
      description: "with --follow --all: the jobs of this lane",
      valueHint: "NAME",
      format: "lane",
    },
    tag: {
      type: "string",
      repeatable: true,
      description: "with --follow --all: the jobs with this tag (all given must match)",
      valueHint: "K=V",
      valueType: "pair",
    },
    ci: {
      type: "string",
      description:
        "with --follow --all: github groups each attempt's output (::group::) and annotates dead jobs (::error); default github under GITHUB_ACTIONS=true, none elsewhere",
      valueHint: "KIND",
      choices: ["github", "none"],
    },
    id: { ...jobIdPositional("output"), required: false },
  },
  async run(ctx): Promise<VerbResult<{ attempts: AttemptOutput[] }>> {
    const { raw, follow } = ctx.args;
    const selection = followAllSelection(ctx);
    if (selection) {
      const { followAllCommand } = await import("./output-all.ts");
      const github = githubMode(ctx.args.ci, process.env);
      await followAllCommand(await ctx.open({ create: false }), selection, ctx.json, github);
      return { data: { attempts: [] }, streamed: true };
    }
    const streams = parseStream(ctx.args.stream);
    if (follow && ctx.json)
      throw new SpoolError("INVALID_INPUT", "--follow streams bytes, not JSON; drop --json or --follow", {
        remediation: `spoolctl output ${formatArgv([ctx.args.id!])} --json reads what exists so far`,
      });
    if (raw && ctx.json) throw new SpoolError("INVALID_INPUT", "--raw writes bytes, not JSON; drop --json or --raw");
    if (raw && !follow && streams.length !== 1) {
      const again = rawCommand(ctx.args.id!, "stdout", ctx.args.attempt);
      throw new SpoolError(
        "INVALID_INPUT",
        "--raw writes one stream's bytes; name it with --stream stdout or --stream stderr",
        { remediation: `${again}  (or --stream stderr)` },
      );
    }
    const store = await ctx.open({ create: false });
    const found = await jobAttempt(store, ctx.args.id!, ctx.args.attempt ?? null);
    let { attempt } = found;
    let notRun = `job ${found.job.id} has not been executed yet`;
    if (!attempt && follow && found.job.state === "queued") {
      // A queued job's first attempt is waited for, then followed (Ctrl-C ends the wait).
      if (process.stderr.isTTY)
        process.stderr.write(
          `spoolctl: job ${found.job.id} is queued; waiting for its first attempt (Ctrl-C to stop)\n`,
        );
      const { awaitFirstAttempt } = await import("./follow.ts");
      const first = await awaitFirstAttempt(store, found.job.id);
      attempt = first.attempt;
      if (!first.attempt)
        notRun = first.job
          ? `job ${found.job.id} was ${first.job.state} before it ran`
          : `job ${found.job.id} was deleted before it ran`;
    }
    if (!attempt) {
      return { data: { attempts: [] }, warnings: [{ code: "NO_ATTEMPTS_YET", message: notRun }] };
    }
    if (follow) {
      await streamAttempt(store, attempt, streams, ctx.args.attempt !== undefined);
      return { data: { attempts: [] }, streamed: true };
    }
    if (raw) {
      await writeRaw(streams[0] === "stdout" ? attempt.stdout_path : attempt.stderr_path, () =>
        shippedChunks(store, attempt, streams[0]!),
      );
      return { data: { attempts: [] }, streamed: true };
    }
    return {
      data: { attempts: [await attemptOutput(store, attempt, streams, MAX_TEXT_BYTES)] },
    };
  },
  render({ data }, ctx) {
    const parts: string[] = [];
    for (const a of data.attempts) {
      for (const s of ["stdout", "stderr"] as const) {
        const view = a[s];
        if (!view) continue;
        parts.push(`=== job ${a.job_id} attempt ${a.attempt_no} ${s} ===`);
        const all = () => ctx.suggest(rawCommand(ctx.args.id ?? "ID", s, ctx.args.attempt));
        if (view.binary) {
          parts.push(`[binary, ${view.size_bytes} bytes: use ${all()}]`);
          continue;
        }
        if (view.omitted_bytes > 0)
          parts.push(
            `[… ${view.omitted_bytes} earlier bytes not shown (the last ${MAX_TEXT_BYTES / (1024 * 1024)} MiB at most, from a line's start); all of them: ${all()}]`,
          );
        if (view.missing) parts.push("[no output file]");
        else if (view.text) parts.push(view.text.endsWith("\n") ? view.text.slice(0, -1) : view.text);
      }
    }
    return parts.join("\n");
  },
});
