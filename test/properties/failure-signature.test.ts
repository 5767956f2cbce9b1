/**
 * Properties of failure signatures (src/ops/failure-signature.ts) for random stderr lines. The
 * rules are docs/architecture.md "Triage" (and README "Triage: sorting out what failed"):
 *
 * - a signature is the last non-empty stderr line with its variable parts masked — timestamps
 *   `<time>`, UUIDs and hex ids `<hex>`, URL/IP/e-mail/dotted hosts `<host>`, paths `<path>`,
 *   digit runs `<n>` — so lines that differ only in those parts are one failure: the mask is
 *   stable under any change of them;
 * - spaces are collapsed: a line masks alike however its words are spaced (column-aligned output);
 * - masking a signature again changes nothing (rows of an older mask version are masked again on
 *   read, so a masked line must be a fixed point);
 * - text in any script passes through;
 * - the stored form is the masks' version, `|`, the masked line;
 * - the line kept is the last one holding anything but whitespace, at most 500 characters
 *   (`STDERR_LINE_MAX`), never cut inside a UTF-16 surrogate pair.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import fc from "fast-check";
import { STDERR_LINE_MAX } from "../../src/model/job.ts";
import { lastNonEmptyLine, MASK_VERSION, maskLine, storedSignature } from "../../src/ops/failure-signature.ts";
import { runs } from "../support/properties.ts";

// Milliseconds of CPU a property; on a loaded machine its wall time may outlast bun's 5 s default.
setDefaultTimeout(60_000);

const hexDigit = fc.constantFrom(..."0123456789abcdef");
const hexOf = (n: number) => fc.array(hexDigit, { minLength: n, maxLength: n }).map((a) => a.join(""));
const pad2 = (n: number) => String(n).padStart(2, "0");

/** The variable parts a mask stands for, each kind with the mask it becomes. */
const VARIABLE: Record<string, fc.Arbitrary<string>> = {
  "<n>": fc.nat({ max: 10_000_000 }).map(String),
  "<time>": fc
    .date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2099-12-31T23:59:59Z"), noInvalidDate: true })
    .chain((d) =>
      fc.constantFrom(
        d.toISOString(),
        d.toISOString().slice(0, 19).replace("T", " "),
        `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}`,
      ),
    ),
  "<hex>": fc.oneof(
    fc.uuid({ version: 4 }),
    hexOf(8).map((h) => `0x${h}`),
    // 8+ hex characters with at least one digit and one letter (a commit or container id).
    fc
      .tuple(hexOf(6), fc.constantFrom(..."0123456789"), fc.constantFrom(..."abcdef"))
      .map(([h, d, l]) => `${d}${h}${l}`),
  ),
  "<host>": fc.oneof(
    fc
      .tuple(fc.nat({ max: 255 }), fc.nat({ max: 255 }), fc.nat({ max: 255 }), fc.nat({ max: 255 }))
      .map((p) => p.join(".")),
    fc.constantFrom("db7.internal", "api.eu-west-1.example.com", "cache3.local:6379"),
  ),
  "<path>": fc
    .array(fc.constantFrom("var", "lib", "tmp", "app", "cache", "x.json", "build", "out.o"), {
      minLength: 1,
      maxLength: 4,
    })
    .chain((parts) => fc.constantFrom(`/${parts.join("/")}`, `./${parts.join("/")}`, `~/${parts.join("/")}`)),
};
const KINDS = Object.keys(VARIABLE);

/** Words with no digit, dot, slash, colon or @: never masked themselves. Several scripts. */
const word = fc.constantFrom(
  "could",
  "not",
  "connect",
  "to",
  "host",
  "error",
  "retrying",
  "in",
  "failed",
  "Ошибка",
  "соединения",
  "错误",
  "接続できません",
  "خطأ",
  "Fehler",
  "échec",
);

/** A line template: words and slots of a kind, separated by spaces. */
const template = fc.array(
  fc.oneof(
    word.map((w) => ({ word: w })),
    fc.constantFrom(...KINDS).map((k) => ({ kind: k })),
  ),
  {
    minLength: 1,
    maxLength: 10,
  },
);
type Part = { word: string } | { kind: string };

/** The template filled with random variable parts, spaced by random runs of blanks. */
function filled(parts: Part[]): fc.Arbitrary<string> {
  return fc
    .tuple(
      ...parts.map((p) => ("word" in p ? fc.constant(p.word) : VARIABLE[p.kind]!)),
      fc.array(fc.constantFrom(" ", "  ", "\t", "   "), { minLength: parts.length, maxLength: parts.length }),
    )
    .map((values) => {
      const gaps = values.pop() as string[];
      return values.map((v, i) => `${v}${gaps[i]}`).join("");
    });
}

test("lines that differ only in their variable parts (and spacing) mask to one signature, the template's", () => {
  fc.assert(
    fc.property(
      template.chain((t) => fc.tuple(fc.constant(t), filled(t), filled(t))),
      ([parts, a, b]) => {
        const expected = parts.map((p) => ("word" in p ? p.word : p.kind)).join(" ");
        expect(maskLine(a)).toBe(expected);
        expect(maskLine(b)).toBe(expected);
      },
    ),
    runs(300),
  );
});

test("masking is idempotent: a signature masks to itself", () => {
  const anyLine = fc.oneof(
    fc.string({ maxLength: 120 }),
    fc.string({ unit: "grapheme", maxLength: 60 }),
    template.chain(filled),
    fc
      .array(fc.oneof(template.chain(filled), fc.constantFrom(":", "/", "@", ".", ",", "-", "=", "[", "]", "(", ")")), {
        maxLength: 6,
      })
      .map((xs) => xs.join("")),
  );
  fc.assert(
    fc.property(anyLine, (line) => {
      const once = maskLine(line);
      expect(maskLine(once)).toBe(once);
    }),
    runs(500),
  );
});

test("text with no variable part passes through in any script, spaces collapsed", () => {
  fc.assert(
    fc.property(fc.array(word, { minLength: 1, maxLength: 8 }), (words) => {
      expect(maskLine(words.join(" \t "))).toBe(words.join(" "));
    }),
    runs(),
  );
});

test("the stored form is the masks' version, a bar, and the masked line", () => {
  fc.assert(
    fc.property(template.chain(filled), (line) => {
      expect(storedSignature(line)).toBe(`${MASK_VERSION}|${maskLine(line)}`);
    }),
    runs(),
  );
});

test("the line kept is the last non-blank one, trimmed at its end, at most 500 characters, no surrogate cut", () => {
  const line = fc.oneof(
    fc.constantFrom("", " ", "\t", "  \r"),
    fc.string({ unit: "grapheme", maxLength: 40 }),
    fc.string({ unit: "binary", minLength: 490, maxLength: 520 }),
    fc.string({ unit: fc.constantFrom("😀", "a", "é"), minLength: 240, maxLength: 520 }),
  );
  fc.assert(
    fc.property(fc.array(line, { maxLength: 6 }), (lines) => {
      const text = lines.join("\n");
      const kept = lastNonEmptyLine(text);
      const last = text
        .split("\n")
        .map((l) => l.replace(/\s+$/u, ""))
        .filter((l) => l.trim() !== "")
        .at(-1);
      if (last === undefined) return expect(kept).toBe("");
      expect(last.startsWith(kept)).toBe(true);
      const max = Math.min(last.length, STDERR_LINE_MAX);
      const high = (i: number) => last.charCodeAt(i) >= 0xd800 && last.charCodeAt(i) <= 0xdbff;
      // Cut one short only where the cut would split a surrogate pair.
      expect(kept.length).toBe(max < last.length && high(max - 1) ? max - 1 : max);
    }),
    runs(300),
  );
});
