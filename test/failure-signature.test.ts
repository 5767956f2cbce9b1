/**
 * Failure signatures (docs/architecture.md "Triage"): the masking of a stderr
 * line (numbers, hex ids, paths, hosts, timestamps, any script), the last
 * non-empty line of a tail, and the bounded read of a stderr file.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { STDERR_LINE_MAX } from "../src/model/job.ts";
import {
  lastNonEmptyLine,
  maskLine,
  readLastStderrLine,
  STDERR_TAIL_READ,
  signatureText,
} from "../src/ops/failure-signature.ts";

/** Lines that must mask to one signature, and that signature. */
const SAME: [string[], string][] = [
  [
    ["could not connect to host 3", "could not connect to host 7", "could not connect to host 1234"],
    "could not connect to host <n>",
  ],
  [["retrying in 1.5s (attempt 2/5)", "retrying in 30s (attempt 4/5)"], "retrying in <n>s (attempt <n>/<n>)"],
  [["commit 3f9c2e1ab4 not found", "commit 0a1b2c3d4e5f6789 not found"], "commit <hex> not found"],
  [["segfault at 0x7ffd1234", "segfault at 0xDEADBEEF"], "segfault at <hex>"],
  [
    ["lock 123e4567-e89b-12d3-a456-426614174000 held", "lock 9c4f1d2e-0000-4000-8000-00000000abcd held"],
    "lock <hex> held",
  ],
  [
    [
      "open /var/lib/app/cache/abc.json: no such file",
      "open /tmp/x: no such file",
      "open ./build/out.o: no such file",
      "open ~/.config/app: no such file",
    ],
    "open <path>: no such file",
  ],
  [["cannot stat src/foo/bar.ts", "cannot stat lib/baz.js"], "cannot stat <path>"],
  [["C:\\Users\\me\\x.txt not found", "D:\\build\\y not found"], "<path> not found"],
  [
    [
      "connect to db7.internal:5432 refused",
      "connect to db12.internal:5432 refused",
      "connect to api.eu.example.com refused",
      "connect to 10.0.0.17:22 refused",
      "connect to [fe80::1]:443 refused",
    ],
    "connect to <host> refused",
  ],
  [
    ["GET https://api.example.com:8443/v1/items failed", "GET https://10.1.2.3/v1/items failed"],
    "GET https://<host>/v<n>/items failed",
  ],
  [
    ["git@github.com: Permission denied", "git@gitlab.internal.example: Permission denied"],
    "git@<host>: Permission denied",
  ],
  [
    ["2024-05-01T12:03:04.123Z ERROR boom", "2026-12-01T18:00:00+02:00 ERROR boom", "2026-12-01 18:00:00,5 ERROR boom"],
    "<time> ERROR boom",
  ],
  [["[12:03:04] boom", "[23:59:59.999] boom"], "[<time>] boom"],
  [["May  3 14:00:01 kernel: oom", "Dec 11 04:05:06 kernel: oom"], "<time> kernel: oom"],
  [["  spaced    out   3  ", "spaced out 4"], "spaced out <n>"],
];

describe("maskLine", () => {
  for (const [lines, want] of SAME) {
    test(`${JSON.stringify(lines[0])} and its variants → ${JSON.stringify(want)}`, () => {
      for (const line of lines) expect(maskLine(line)).toBe(want);
    });
  }

  test("constant words stay: a file name without a path, a word with a dot, the message itself", () => {
    expect(maskLine("cannot read config.json")).toBe("cannot read config.json");
    expect(maskLine("node.js crashed: out of memory")).toBe("node.js crashed: out of memory");
    expect(maskLine("permission denied")).toBe("permission denied");
  });

  test("different failures stay different", () => {
    expect(maskLine("could not connect to host 3")).not.toBe(maskLine("could not resolve host 3"));
    expect(maskLine("open /etc/app.conf: permission denied")).not.toBe(maskLine("open /etc/app.conf: no such file"));
  });

  test("UTF-8: other scripts pass through, their digits and paths are masked", () => {
    expect(maskLine("Fehler: Verbindung zu Host 3 fehlgeschlagen – Zeitüberschreitung nach 30 s")).toBe(
      "Fehler: Verbindung zu Host <n> fehlgeschlagen – Zeitüberschreitung nach <n> s",
    );
    expect(maskLine("エラー: ファイル /tmp/データ/3.txt が見つかりません")).toBe(
      "エラー: ファイル <path> が見つかりません",
    );
    expect(maskLine("ошибка ٣ في 12 🚀")).toBe("ошибка <n> في <n> 🚀"); // Arabic-Indic digit ٣ is a digit too
  });
});

describe("lastNonEmptyLine", () => {
  test("the last line with text, trailing blanks and CR dropped; '' when there is none", () => {
    expect(lastNonEmptyLine("first\nsecond  \r\n\n   \n\t\n")).toBe("second");
    expect(lastNonEmptyLine("")).toBe("");
    expect(lastNonEmptyLine("\n \n\t\n")).toBe("");
    expect(lastNonEmptyLine("only")).toBe("only");
  });

  test("a line cut at the start of a tail is marked with …, a broken first character dropped", () => {
    expect(lastNonEmptyLine("\uFFFDlast part", true)).toBe("…last part");
    expect(lastNonEmptyLine("cut\nwhole", true)).toBe("whole");
  });

  test(`a long line is cut to ${STDERR_LINE_MAX} characters, never inside a surrogate pair`, () => {
    expect(lastNonEmptyLine("x".repeat(2000))).toHaveLength(STDERR_LINE_MAX);
    const emoji = `a${"🚀".repeat(400)}`; // the cut falls between the two halves of a pair
    const cut = lastNonEmptyLine(emoji);
    expect(cut.length).toBeLessThanOrEqual(STDERR_LINE_MAX);
    expect(cut.endsWith("🚀")).toBe(true);
    expect(Buffer.from(cut, "utf8").toString("utf8")).toBe(cut); // no lone surrogate
  });
});

describe("readLastStderrLine", () => {
  test("reads only the file's end: the last line of a large file; '' for an empty one; null for none", () => {
    const dir = mkdtempSync(join(tmpdir(), "spoolctl-sig-"));
    try {
      const big = join(dir, "big");
      writeFileSync(big, `${"noise line\n".repeat(100_000)}fatal: could not connect to host 9\n\n`);
      expect(readLastStderrLine(big)).toBe("fatal: could not connect to host 9");
      const oneLong = join(dir, "long");
      writeFileSync(oneLong, "é".repeat(STDERR_TAIL_READ)); // 2 bytes each: the read starts mid-line
      expect(readLastStderrLine(oneLong)!.startsWith("…é")).toBe(true);
      const empty = join(dir, "empty");
      writeFileSync(empty, "");
      expect(readLastStderrLine(empty)).toBe("");
      expect(readLastStderrLine(join(dir, "missing"))).toBeNull();
      expect(readLastStderrLine(null)).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test("signatureText: reason, exit code or signal, and the masked line", () => {
  expect(
    signatureText({ state: "dead", failure_reason: "process_exit", exit_code: 3, signal: null, stderr: "boom <n>" }),
  ).toBe("process_exit · exit 3 · boom <n>");
  expect(signatureText({ state: "dead", failure_reason: "timeout", exit_code: null, signal: 15, stderr: "" })).toBe(
    "timeout · signal 15 · (no stderr)",
  );
  expect(signatureText({ state: "canceled", failure_reason: null, exit_code: null, signal: null, stderr: "" })).toBe(
    "canceled · (no stderr)",
  );
});
