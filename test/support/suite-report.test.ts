/**
 * The suite runner's reading of `bun test` output (suite-report.ts): counts,
 * each failing test with the start of its error, and the report's shape.
 * The sample is bun test 1.4.5's stderr for two files, verbatim in form.
 */
import { expect, test } from "bun:test";
import { counts, ERROR_LINES, failureReport, failuresIn, fileFailure } from "./suite-report.ts";

const SAMPLE = `
test/a.test.ts:
(pass) ok one [0.30ms]
3 | describe("grp", () => {
4 | test("bad one", () => { expect({a: 1}).toEqual({a: 2}); });
                                       ^
error: expect(received).toEqual(expected)

  {
-   "a": 2,
+   "a": 1,
  }

      at <anonymous> (/tmp/x/test/a.test.ts:4:40)
(fail) grp > bad one [1204.69ms]
(fail) slow [125.33ms]
  ^ this test timed out after 100ms.
(skip) skipped

test/b.test.ts:
some output of the test
1 | import { expect, test } from "bun:test";
error: boom
      at <anonymous> (/tmp/x/test/b.test.ts:2:59)
(fail) throws [415.38ms]
(pass) fine [0.19ms]

 2 pass
 1 skip
 3 fail
 2 expect() calls
Ran 6 tests across 2 files. [17.47s]
`;

test("counts: the summary's pass and fail lines", () => {
  expect(counts(SAMPLE)).toEqual({ pass: 2, fail: 3 });
  expect(counts("no summary")).toEqual({ pass: 0, fail: 0 });
});

test("failuresIn: each (fail) with its file, its name and the error printed before it", () => {
  const failures = failuresIn(SAMPLE, "sqlite", "test/fallback.test.ts");
  expect(failures.map((f) => [f.store, f.file, f.name])).toEqual([
    ["sqlite", "test/a.test.ts", "grp > bad one"],
    ["sqlite", "test/a.test.ts", "slow"],
    ["sqlite", "test/b.test.ts", "throws"],
  ]);
  expect(failures[0]!.error[0]).toBe('3 | describe("grp", () => {');
  expect(failures[0]!.error).toContain("error: expect(received).toEqual(expected)");
  expect(failures[0]!.error.at(-1)).toBe("      at <anonymous> (/tmp/x/test/a.test.ts:4:40)");
  expect(failures[1]!.error).toEqual(["^ this test timed out after 100ms."]);
  // The test's own output before the error is left out.
  expect(failures[2]!.error).toEqual([
    '1 | import { expect, test } from "bun:test";',
    "error: boom",
    "      at <anonymous> (/tmp/x/test/b.test.ts:2:59)",
  ]);
});

test("failuresIn: an unhandled error right after a timed-out test is that test's", () => {
  const output = [
    "test/h.test.ts:",
    "(fail) copies [70110.56ms]",
    "  ^ this test timed out after 60000ms.",
    "",
    "# Unhandled error between tests",
    "-------------------------------",
    "error: expect(received).toBe(expected)",
    "Received: 143",
    "-------------------------------",
    "",
    "(skip) later",
    "(fail) next [1.00ms]",
  ].join("\n");
  const failures = failuresIn(output, "postgres", "test/h.test.ts");
  expect(failures.map((f) => f.name)).toEqual(["copies", "next"]);
  expect(failures[0]!.error).toEqual([
    "^ this test timed out after 60000ms.",
    "# Unhandled error between tests",
    "-------------------------------",
    "error: expect(received).toBe(expected)",
    "Received: 143",
    "-------------------------------",
  ]);
  expect(failures[1]!.error).toEqual([]);
});

test("failuresIn: an error is cut at ERROR_LINES lines", () => {
  const long = `test/c.test.ts:\nerror: long\n${"x\n".repeat(100)}(fail) long one [1.00ms]\n`;
  const [failure] = failuresIn(long, "postgres", "test/c.test.ts");
  expect(failure!.error).toHaveLength(ERROR_LINES);
  expect(failure!.error[0]).toBe("error: long");
});

test("fileFailure: a file that failed with no failing test shows its first error, without the counts", () => {
  const output =
    "test/d.test.ts:\n# Unhandled error between tests\nerror: Cannot find module './gone'\n\n 0 pass\n 1 fail\n";
  const failure = fileFailure(output, "sqlite", "test/d.test.ts", 1);
  expect(failure.name).toBe("(the file: bun test exited 1 with no failing test)");
  expect(failure.error).toEqual(["# Unhandled error between tests", "error: Cannot find module './gone'"]);
});

test("failureReport: every error line behind '  | ', so none reads as a count line; empty without failures", () => {
  const report = failureReport(failuresIn(SAMPLE.replace("error: boom", "3 pass"), "sqlite", "x"));
  expect(report).toContain("(fail) [sqlite] test/b.test.ts > throws\n  | 1 | import");
  expect(report).toContain("  | 3 pass\n");
  expect(report).not.toMatch(/^ *\d+ (pass|fail)/m);
  expect(report.trimEnd().split("\n").at(-1)).toBe("(fail) [sqlite] test/b.test.ts > throws");
  expect(failureReport([])).toBe("");
});
