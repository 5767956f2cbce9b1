/**
 * Reading `bun test` output for the suite runner (test/run-suite.ts): the
 * counts of its summary, and each failing test with the start of its error,
 * so that the end of a CI log (of which only the last lines come back) says
 * which tests failed and why.
 *
 * What bun test (1.4.5) prints on stderr when its output is not a terminal: a
 * `test/x.test.ts:` line per file; per test, whatever the test wrote and, for
 * a failure, the error block (source excerpt, `error: …`, diff, stack), then
 * `(pass|fail|skip|todo) name [ms]`; for a timeout one more line after it,
 * `  ^ this test timed out after …`, and maybe an `# Unhandled error between
 * tests` block. The summary ends with ` N pass`, ` N fail`.
 */

/** Lines of an error kept per failing test. */
export const ERROR_LINES = 25;

/** Pass and fail counts of a run. */
export interface Counts {
  pass: number;
  fail: number;
}

/** One failing test (or a file that failed without a failing test): where, and the start of its error. */
export interface Failure {
  /** Which pass of the suite: "sqlite" or "postgres". */
  store: string;
  /** The test file, relative to the repository (test/x.test.ts). */
  file: string;
  /** The test's name as bun prints it (describe blocks joined by " > "). */
  name: string;
  /** The first {@link ERROR_LINES} lines of its error, or fewer. */
  error: string[];
}

/** The counts of a `bun test` run, from its last summary lines (0 when absent). */
export function counts(output: string): Counts {
  const last = (word: string) => {
    const all = [...output.matchAll(new RegExp(`^ *(\\d+) ${word}$`, "gm"))];
    return all.length === 0 ? 0 : Number(all[all.length - 1]![1]);
  };
  return { pass: last("pass"), fail: last("fail") };
}

const FILE_LINE = /^(\S.*\.(?:test|spec)\.[cm]?[jt]sx?):$/;
const RESULT_LINE = /^\((pass|fail|skip|todo)\) (.*?)(?: \[[\d.]+m?s\])?$/;
/** Where an error block starts: a source excerpt, `error: …`, an unhandled-error banner, or an Error's own line. */
const ERROR_START = /^(\d+ \| |error: |# Unhandled error|\w*Error: )/;

/** The start of the error in `block` (the lines before a `(fail)` line), at most {@link ERROR_LINES}. */
function errorOf(block: string[]): string[] {
  const from = block.findIndex((line) => ERROR_START.test(line));
  const lines = block.slice(from === -1 ? 0 : from);
  while (lines.length > 0 && lines[0]!.trim() === "") lines.shift();
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === "") lines.pop();
  return lines.slice(0, ERROR_LINES);
}

/**
 * Every `(fail)` in `output` (bun test's stderr), with its file and the start
 * of the error printed before it (and the timeout note after it).
 * `file` is used until a file line is seen.
 */
export function failuresIn(output: string, store: string, file: string): Failure[] {
  const lines = output.split("\n");
  const out: Failure[] = [];
  let current = file;
  let block: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fileMatch = FILE_LINE.exec(line);
    if (fileMatch) {
      current = fileMatch[1]!;
      block = [];
      continue;
    }
    const result = RESULT_LINE.exec(line);
    if (!result) {
      block.push(line);
      continue;
    }
    if (result[1] === "fail") {
      const error = errorOf(block);
      // A timeout is said on the line after `(fail)`; what the test left running may then fail
      // "between tests" (a child killed by the timeout): that block is this test's too.
      while (lines[i + 1]?.startsWith("  ^ ")) error.push(lines[++i]!.trim());
      let j = i + 1;
      while (lines[j]?.trim() === "") j++;
      if (lines[j]?.startsWith("# Unhandled error between tests")) {
        const end = lines.findIndex((l, k) => k > j + 1 && /^-{10,}$/.test(l));
        error.push(...lines.slice(j, end === -1 ? j + ERROR_LINES : end + 1));
        i = end === -1 ? i : end;
      }
      out.push({ store, file: current, name: result[2]!, error: error.slice(0, ERROR_LINES) });
    }
    block = [];
  }
  return out;
}

/**
 * The failure of a file whose `bun test` exited non-zero without a failing
 * test (it did not load, an error between tests, a crash): the first error
 * block of its output, else its last lines.
 */
export function fileFailure(output: string, store: string, file: string, code: number): Failure {
  const all = output.split("\n");
  const summary = all.findIndex((l) => /^ *\d+ (pass|fail)$/.test(l));
  const lines = summary === -1 ? all : all.slice(0, summary); // the counts are said elsewhere
  const error = errorOf(lines);
  const tail = lines.filter((l) => l.trim() !== "").slice(-ERROR_LINES);
  return {
    store,
    file,
    name: `(the file: bun test exited ${code} with no failing test)`,
    error: error.length > 0 && lines.some((l) => ERROR_START.test(l)) ? error : tail,
  };
}

/**
 * The failures as the last part of the log: each one's store, file and name,
 * then its error, every line behind `  | ` (so that no line of an error can be
 * taken for the counts lines that .ci/run reads); then a one-line-each list.
 * Sorted by file, then store. Empty when nothing failed.
 */
export function failureReport(failures: Failure[]): string {
  if (failures.length === 0) return "";
  failures = [...failures].sort((a, b) => a.file.localeCompare(b.file) || a.store.localeCompare(b.store));
  const title = (f: Failure) => `[${f.store}] ${f.file} > ${f.name}`;
  const parts = [`\n==== ${failures.length} failed (store, file > test; then the start of its error) ====\n`];
  for (const f of failures) {
    parts.push(`\n(fail) ${title(f)}\n`);
    for (const line of f.error) parts.push(`  | ${line}\n`);
  }
  parts.push(`\n==== failed: ${failures.length} ====\n`);
  for (const f of failures) parts.push(`(fail) ${title(f)}\n`);
  return parts.join("");
}
