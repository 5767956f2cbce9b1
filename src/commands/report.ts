/**
 * `spoolctl report`: the jobs of a run, or those matching filters, as
 * JUnit XML (`--junit FILE`) and/or a markdown summary (`--markdown [FILE]`,
 * stdout without FILE), or as a text table when neither is asked for.
 */
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, resolve } from "node:path";
import type { VerbResult } from "../contract/envelope.ts";
import { SpoolError } from "../contract/errors.ts";
import { parseBatchName } from "../ops/batch.ts";
import { parseSince, REPORT_LIMIT, type ReportData } from "../ops/report.ts";
import { reportSnapshot } from "../store/verbs/report.ts";
import { stdoutPaint } from "../ui/color.ts";
import { renderJunit } from "../ui/junit.ts";
import { renderMarkdown } from "../ui/markdown.ts";
import { renderReportText } from "../ui/report-text.ts";
import { batchMustExist } from "./job-filters.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";

function writeReport(flag: string, path: string, text: string): string {
  const absolute = resolve(path);
  try {
    mkdirSync(dirname(absolute), { recursive: true });
    writeFileSync(absolute, text);
  } catch (error) {
    const reason = (error as { code?: string }).code ?? (error instanceof Error ? error.message : String(error));
    throw new SpoolError("INVALID_INPUT", `cannot write ${flag} ${JSON.stringify(path)}: ${reason}`, {
      remediation: `give ${flag} a path in a writable folder`,
      detail: { flag, value: path },
    });
  }
  return absolute;
}

/**
 * `report --summary`: appends `text` to the file `$GITHUB_STEP_SUMMARY`
 * names (GitHub Actions shows it on the run's page). Returns its path.
 * Raises `INVALID_INPUT` when the variable is unset or the file cannot be written.
 */
function appendSummary(text: string): string {
  const path = process.env.GITHUB_STEP_SUMMARY;
  if (!path)
    throw new SpoolError("INVALID_INPUT", "--summary appends to $GITHUB_STEP_SUMMARY, which is not set", {
      remediation: "run it in a GitHub Actions step, or write the summary to a file: spoolctl report --markdown FILE",
    });
  try {
    appendFileSync(path, text);
  } catch (error) {
    const reason = (error as { code?: string }).code ?? String(error);
    throw new SpoolError("INVALID_INPUT", `cannot append to $GITHUB_STEP_SUMMARY (${path}): ${reason}`, {
      remediation: "point GITHUB_STEP_SUMMARY at a writable file",
    });
  }
  return resolve(path);
}

/** Whether `--markdown` writes to stdout (no FILE, or `-`). */
function markdownToStdout(value: string | undefined): boolean {
  return value === "" || value === "-";
}

export default defineVerb({
  name: "report",
  description:
    "Report jobs for CI: JUnit XML test cases (--junit FILE; dead → failure, canceled and unfinished → skipped) and/or a markdown summary table (--markdown [FILE], stdout without FILE, e.g. >> $GITHUB_STEP_SUMMARY). Without either, prints a table. Filters combine: job ids, --queue, --tag, --since, --batch.",
  examples: [
    "spoolctl report --junit reports/spoolctl.xml",
    'spoolctl report --markdown >> "$GITHUB_STEP_SUMMARY"',
    "spoolctl report --junit smoke.xml --markdown smoke.md --tag run=$GITHUB_RUN_ID",
    "spoolctl report 3 4 5 --json",
    "spoolctl report --queue builds --since 2h",
  ],
  flags: {
    ...COMMON_FLAGS,
    junit: {
      type: "string",
      description: "write JUnit XML to FILE (parent folders are created)",
      valueHint: "FILE",
      valueType: "path",
      hint: "write --junit reports/spoolctl.xml",
    },
    markdown: {
      type: "string",
      optionalValue: true,
      description: "write a markdown summary to FILE, or to stdout when FILE is left out or is -",
      valueHint: "[FILE]",
      valueType: "path",
    },
    summary: {
      type: "boolean",
      description: "append the markdown summary to $GITHUB_STEP_SUMMARY (the job summary of a GitHub Actions step)",
    },
    title: {
      type: "string",
      description: "heading of the markdown summary",
      valueHint: "TEXT",
      default: "spoolctl report",
    },
    queue: { type: "string", description: "only jobs of this lane", valueHint: "NAME", format: "lane" },
    tag: {
      type: "string",
      repeatable: true,
      description: "only jobs with this tag",
      valueHint: "K=V",
      valueType: "pair",
    },
    batch: {
      type: "string",
      description: "only the jobs of this batch (add --batch NAME): one test suite per CI run",
      valueHint: "NAME",
    },
    since: {
      type: "string",
      description:
        "only jobs created since: a duration back from now (30m, 2h, 1d) or a time (ISO-8601, epoch seconds)",
      valueHint: "DURATION|TIME",
    },
    limit: {
      type: "string",
      description: `at most N jobs, the newest (${REPORT_LIMIT.min}-${REPORT_LIMIT.max})`,
      valueHint: "N",
      default: String(REPORT_LIMIT.default),
      valueType: "integer",
      min: REPORT_LIMIT.min,
      max: REPORT_LIMIT.max,
    },
    ids: {
      type: "positional",
      required: false,
      variadic: true,
      description: "job ids, idempotency keys or last (the newest job) (default: every job matching the filters)",
      valueHint: "ID…",
    },
  },
  async run(ctx): Promise<VerbResult<ReportData>> {
    const { args } = ctx;
    const { junit, markdown } = args;
    if (markdown !== undefined && /^\d+$/.test(markdown)) {
      throw new SpoolError("INVALID_INPUT", `--markdown ${markdown}: a file name of digits only looks like a job id`, {
        remediation: `put job ids before --markdown (spoolctl report ${markdown} --markdown), or write --markdown ./${markdown}`,
        detail: { flag: "--markdown", value: markdown },
      });
    }
    if (ctx.json && markdownToStdout(markdown)) {
      throw new SpoolError(
        "INVALID_INPUT",
        "--markdown without a FILE writes to stdout, which --json uses for the envelope",
        { remediation: "give --markdown a FILE, or drop --json" },
      );
    }
    const now = Date.now() / 1000;
    // A duration back from now, or a time: which one depends on the text, so --since is read here.
    const since = args.since === undefined ? undefined : parseSince(args.since, now);
    const batch = args.batch === undefined ? {} : { batch: parseBatchName("--batch", args.batch) };
    const query = { refs: args.ids, queue: args.queue, tags: args.tag, since, limit: args.limit, ...batch };
    const store = await ctx.open({ create: false });
    const report = await reportSnapshot(store, query, now);
    if (report.totals.jobs === 0) await batchMustExist(store, query.batch);
    if (args.summary) report.files.summary = appendSummary(renderMarkdown(report, args.title));
    if (junit !== undefined) report.files.junit = writeReport("--junit", junit, renderJunit(report, hostname()));
    if (markdown !== undefined && !markdownToStdout(markdown))
      report.files.markdown = writeReport("--markdown", markdown, renderMarkdown(report, args.title));
    return {
      data: report,
      warnings: report.truncated
        ? [
            {
              code: "REPORT_TRUNCATED",
              message: `more jobs matched than --limit ${args.limit}; the oldest were left out`,
            },
          ]
        : [],
    };
  },
  render({ data }, ctx) {
    const t = data.totals;
    const counts = `${t.jobs} job${t.jobs === 1 ? "" : "s"}: ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped${t.pending ? `, ${t.pending} not finished` : ""}${t.flaky ? `, ${t.flaky} flaky` : ""}`;
    // Straight to stderr (not through consola, whose level hides info lines under NODE_ENV=test).
    if (data.files.junit) process.stderr.write(`spoolctl: wrote JUnit report (${counts}) to ${data.files.junit}\n`);
    if (data.files.markdown)
      process.stderr.write(`spoolctl: wrote markdown summary (${counts}) to ${data.files.markdown}\n`);
    if (data.files.summary)
      process.stderr.write(`spoolctl: appended the summary (${counts}) to $GITHUB_STEP_SUMMARY\n`);
    const { markdown, junit, title } = ctx.args;
    if (markdownToStdout(markdown)) return renderMarkdown(data, title);
    if (markdown === undefined && junit === undefined) return renderReportText(data, stdoutPaint());
    return "";
  },
});
