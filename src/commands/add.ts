/** `spoolctl add`: enqueue one job, or many with `--from` (all lines in one transaction). */
import { existsSync } from "node:fs";
import type { VerbResult } from "../contract/envelope.ts";
import { SpoolError } from "../contract/errors.ts";
import type { RawArgs } from "../contract/flags.ts";
import type { AddData } from "../describe/schemas-core.ts";
import type { BatchAdd } from "../model/job.ts";
import { DEFAULTS, LIMITS } from "../model/limits.ts";
import { relativePathWarning } from "../ops/add.ts";
import { parseJobLines } from "../ops/add-from.ts";
import { needsBatch, parseBatchName, parseFailFast } from "../ops/batch.ts";
import { markHookBorn } from "../ops/hooks.ts";
import { type AddInput, validateAddInput } from "../ops/job-spec.ts";
import { expandLines, expandMatrix, MATRIX_MAX_CELLS, parseMatrixFlags } from "../ops/matrix.ts";
import { addJobs } from "../store/verbs/add.ts";
import { formatArgv, rerunCommand } from "../ui/text.ts";
import { addMatrix } from "./add-matrix.ts";
import { addWithLaneWarnings, withTrace } from "./add-write.ts";
import { readFrom } from "./from-file.ts";
import { writeRidingOut } from "./ride-out.ts";
import { DELAY_VALUE, PRIORITY_VALUE, RETRIES_VALUE, TIME_VALUE, TIMEOUT_VALUE } from "./setting-flags.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";

/**
 * The job spec as typed. The parser has checked each value against its
 * definition already; `add` still hands the text, not the typed values, to
 * the job-spec rules of src/ops/add.ts, which `--from` lines and `enqueue`
 * share: they also check what spans fields, and a field left out takes the
 * queue's setting (`config set timeout`), not the default shown in `--help`.
 */
export function inputFromFlags(raw: RawArgs, argv: string[]): AddInput {
  const text = (name: string) => {
    const v = raw.values[name];
    return typeof v === "string" ? v : undefined;
  };
  const texts = (name: string) => {
    const v = raw.values[name];
    return Array.isArray(v) ? v : [];
  };
  return {
    argv: argv.length ? argv : undefined,
    command: text("command"),
    timeout: text("timeout"),
    maxRetries: text("max-retries"),
    maxCrashes: text("max-crashes"),
    priority: text("priority"),
    queue: text("queue"),
    after: text("after"),
    at: text("at"),
    cwd: text("cwd"),
    env: texts("env"),
    tag: texts("tag"),
    note: text("note"),
    key: text("key"),
    name: text("name"),
    needs: texts("needs").length > 0 ? texts("needs") : undefined,
    needsPolicy: text("needs-policy"),
    ...(raw.values["kill-leftovers"] === true ? { killLeftovers: true } : {}),
  };
}

/**
 * The batch an add puts its jobs in (docs/architecture.md "Batches"): a
 * `--from` batch is sealed by the add; one added job by job by `--seal`.
 * Raises `INVALID_INPUT` for a bad name, or `--seal`/`--fail-fast` without `--batch`.
 */
function batchOf(
  name: string | undefined,
  seal: boolean,
  failFast: string | undefined,
  from: boolean,
): BatchAdd | null {
  if (name === undefined) {
    if (seal) throw needsBatch("--seal");
    if (failFast !== undefined) throw needsBatch("--fail-fast");
    return null;
  }
  return {
    name: parseBatchName("--batch", name),
    failFast: failFast === undefined ? null : parseFailFast(failFast),
    seal: seal || from,
  };
}

const addVerb = defineVerb({
  name: "add",
  description: "Add a job to the queue. The command runs without a shell: argv is stored verbatim.",
  mutates: true,
  examples: [
    'spoolctl add -- echo "hello from spoolctl"',
    "spoolctl add -c 'make test > report.txt'",
    "spoolctl add --timeout 10m --max-retries 5 --queue builds --tag ci=1 -- ./build.sh",
    "spoolctl add --after 30s --key nightly-1 -- ./nightly.sh",
    'spoolctl add --from jobs.ndjson     # one {"argv": [...]} per line',
    "spoolctl add --batch ci-42 --from tests.ndjson --fail-fast   # sealed when added",
    "spoolctl add --batch ci-42 -- ./lint.sh; spoolctl add --batch ci-42 --seal -- ./test.sh",
    "spoolctl add --needs 12,13 -- ./deploy.sh   # after jobs 12 and 13 succeeded",
    'spoolctl add --from graph.ndjson    # {"ref": "build", …} then {"needs": ["build"], …}',
    "spoolctl add --batch ci-42 --matrix os=linux,mac --matrix node=20,22 -- ./test.sh {os} {node}",
  ],
  flags: {
    ...COMMON_FLAGS,
    command: {
      type: "string",
      alias: "c",
      description: "run a shell string: stored as [sh, -c, STRING]",
      valueHint: "STRING",
    },
    timeout: {
      ...TIMEOUT_VALUE,
      description: `kill the job after this long (${LIMITS.timeout_seconds.min}s-30d), or none for no time limit`,
      default: `${DEFAULTS.timeout_seconds}s`,
    },
    "max-retries": {
      ...RETRIES_VALUE,
      description: "retries after a failed, timed-out or unstartable attempt",
      default: String(DEFAULTS.max_retries),
    },
    "max-crashes": {
      type: "string",
      description: "requeues after a worker crash (default: unbounded)",
      valueHint: "N",
      valueType: "integer",
      min: LIMITS.max_crashes.min,
      max: LIMITS.max_crashes.max,
    },
    priority: {
      ...PRIORITY_VALUE,
      description: "higher runs first (32-bit integer)",
      default: "0",
    },
    queue: { type: "string", description: "lane name", valueHint: "NAME", format: "lane", default: DEFAULTS.queue },
    after: {
      ...DELAY_VALUE,
      description: "run no sooner than this delay: 30, 90s, 5m, 2h, 1d",
    },
    at: {
      ...TIME_VALUE,
      description: "run no sooner than this time: epoch seconds or ISO-8601",
    },
    cwd: {
      type: "string",
      description: "working directory of the job (made absolute now)",
      valueHint: "DIR",
      valueType: "path",
    },
    env: {
      type: "string",
      repeatable: true,
      description: "environment variable for the job; last wins",
      valueHint: "K=V",
      valueType: "pair",
    },
    tag: {
      type: "string",
      repeatable: true,
      description: `tag for filtering (at most ${LIMITS.tags.max})`,
      valueHint: "K=V",
      valueType: "pair",
    },
    note: { type: "string", description: "free text kept with the job", valueHint: "TEXT" },
    key: { type: "string", description: "idempotency key: reuse the active job with this key", valueHint: "KEY" },
    name: {
      type: "string",
      description: "name the job: shown in list, show, reports; usable wherever an id or key is",
      valueHint: "NAME",
    },
    batch: {
      type: "string",
      description:
        "put the job(s) in this batch (one verdict: spoolctl wait --batch NAME); a --from batch is sealed when added, else seal it with --seal on the last add or spoolctl batch seal NAME",
      valueHint: "NAME",
    },
    seal: { type: "boolean", description: "with --batch: seal the batch after this add (its last job)" },
    "kill-leftovers": {
      type: "boolean",
      description:
        "end what the job leaves running (cmd &, nohup, setsid) once its own process exits, instead of only reporting it (left_running); stored as SPOOLCTL_KILL_LEFTOVERS=1",
    },
    "fail-fast": {
      type: "string",
      optionalValue: true,
      description:
        "with --batch: at the batch's first dead job cancel its queued jobs (kept by the queue); --fail-fast=now also stops its running jobs",
      valueHint: "[now]",
    },
    needs: {
      type: "string",
      repeatable: true,
      separator: ",",
      description: "run only after these jobs succeeded: ids, idempotency keys or last (see --needs-policy)",
      valueHint: "ID,…",
    },
    "needs-policy": {
      type: "string",
      description: "success: run once every need succeeded (a failed need cancels this job); done: once they ended",
      valueHint: "POLICY",
      choices: ["success", "done"],
      default: "success",
    },
    matrix: {
      type: "string",
      repeatable: true,
      description: `one job per cell of the axes (at most ${MATRIX_MAX_CELLS}), {KEY} in the command filled, each named BASE[k=v,…]`,
      valueHint: "KEY=V1,V2",
    },
    from: {
      type: "string",
      description: "add one JSON job spec per line from FILE (- for stdin), in one transaction",
      valueHint: "FILE",
      valueType: "path",
    },
    cmd: {
      type: "positional",
      required: false,
      variadic: true,
      afterDashDash: true,
      description: "the command and its arguments (after --)",
      valueHint: "CMD ARGS…",
      hint: "spoolctl add [flags] -- CMD ARGS…  (or -c 'SHELL STRING')",
    },
  },
  async run(ctx): Promise<VerbResult<AddData>> {
    const input = inputFromFlags(ctx.raw, ctx.args.cmd);
    const from = ctx.args.from;
    const cwd = process.cwd();
    const batch = batchOf(ctx.args.batch, ctx.args.seal, ctx.args["fail-fast"], from !== undefined);
    const axes = ctx.args.matrix.length > 0 ? parseMatrixFlags(ctx.args.matrix) : null;
    if (from !== undefined) {
      if (input.argv || input.command !== undefined) {
        throw new SpoolError(
          "INVALID_INPUT",
          "--from reads the commands from a file; do not also give one after -- or with -c",
          {
            remediation: "put every command in the file, one JSON object per line",
          },
        );
      }
      const lines = expandLines(parseJobLines(readFrom(from), input), axes);
      if (lines.length === 0 && batch) {
        // A CI step that generated no job: the batch exists, sealed and empty, and its wait ends at once.
        await writeRidingOut(ctx, (store) => addJobs(store, [], undefined, [], batch));
        return {
          data: { count: 0, jobs: [] },
          warnings: [
            { code: "EMPTY_BATCH", message: `--from ${from} has no job lines: batch ${batch.name} is sealed empty` },
          ],
        };
      }
      if (lines.length === 0)
        throw new SpoolError("MISSING_REQUIRED", `--from ${from} has no job lines`, {
          remediation: 'write one JSON object per line, e.g. {"argv": ["echo", "hi"]}',
        });
      const parsed = lines.map(({ input: i, line, label }) => {
        try {
          return validateAddInput(i, (name) => `${label}: ${name}`, cwd);
        } catch (error) {
          // Some rules (a missing or empty command) name no field: say which line it was.
          if (!(error instanceof SpoolError) || error.message.includes(`line ${line}:`)) throw error;
          throw new SpoolError(error.code, `--from line ${line}: ${error.message}`, {
            remediation: error.remediation,
            did_you_mean: error.did_you_mean,
            detail: { ...error.detail, line },
          });
        }
      });
      // Added from inside a hook's job: hook-born, so no hook fires for them (README "Hooks").
      const traced = withTrace(markHookBorn(parsed, process.env));
      const specs = traced.specs;
      const { jobs, warnings } = await writeRidingOut(ctx, (store) =>
        addWithLaneWarnings(
          store,
          specs,
          undefined,
          lines.map(({ label }) => label),
          batch,
        ),
      );
      specs.forEach((spec, i) => {
        const w = relativePathWarning(
          spec,
          cwd,
          `add "cwd": "." to the line (resolved against this folder)`,
          `--from line ${lines[i]!.line}: `,
        );
        if (w) warnings.push(w);
      });
      return { data: { count: jobs.length, jobs }, warnings: [...traced.warnings, ...warnings] };
    }
    if (axes) return addMatrix(ctx, expandMatrix(input, axes, "--matrix"), batch, cwd);
    const traced = withTrace(
      markHookBorn(
        [validateAddInput(input, (name) => (name.length === 1 ? `-${name}` : `--${name}`), cwd)],
        process.env,
      ),
    );
    const spec = traced.specs[0]!;
    const { jobs, warnings } = await writeRidingOut(ctx, (store) =>
      addWithLaneWarnings(store, [spec], undefined, [], batch),
    );
    warnings.unshift(...traced.warnings);
    if (spec.cwd !== null && !existsSync(spec.cwd)) {
      // Not an error: the folder may be made before the job runs (a missing cwd fails the job when it starts: CWD_MISSING).
      warnings.push({
        code: "CWD_MISSING",
        message: `--cwd ${spec.cwd} does not exist yet; job ${jobs[0]!.job_id} will fail to start unless it is created first`,
      });
    }
    // The exact command again with --cwd . (a -c string is given again as --command).
    const rerun = `${rerunCommand("add", { cwd: ".", ...ctx.raw.values }, {})}${input.command === undefined ? ` -- ${formatArgv(spec.argv)}` : ""}`;
    const relative = relativePathWarning(spec, cwd, rerun);
    if (relative) warnings.push(relative);
    return { data: jobs[0]!, warnings };
  },
  render(result) {
    const jobs = "jobs" in result.data ? result.data.jobs : [result.data];
    return jobs
      .map((j) =>
        j.deduplicated ? `Job ${j.job_id} is already ${j.state} (deduplicated by --key)` : `Added job ${j.job_id}`,
      )
      .join("\n");
  },
});

export default addVerb;
