/**
 * Failure signatures (docs/architecture.md "Triage"): how dead jobs that
 * failed the same way are recognised as one group. A signature is the failure
 * reason, the exit code or signal, and the last non-empty stderr line with
 * its variable parts masked, so `could not connect to host 3` and `… host 7`
 * are one failure. Pure functions, except {@link readLastStderrLine}.
 */

import type { FailureSignature } from "../describe/schemas-rows.ts";
import { STDERR_LINE_MAX } from "../model/job.ts";
import { readTail } from "./output.ts";

/** Bytes read from the end of a stderr file to find its last line (a bounded read). */
export const STDERR_TAIL_READ = 4096;

/**
 * The last line of `text` holding anything but whitespace, trimmed at its end
 * and cut to {@link STDERR_LINE_MAX} characters (never inside a UTF-16
 * surrogate pair); "" when there is none. `partialStart` says that `text` is the
 * tail of a longer stream: a line that begins at its first byte is incomplete
 * and is marked with a leading "…".
 */
export function lastNonEmptyLine(text: string, partialStart = false): string {
  let end = text.length;
  while (end > 0) {
    const start = text.lastIndexOf("\n", end - 1) + 1;
    const line = text.slice(start, end).replace(/\s+$/u, "");
    if (line.trim() !== "") {
      // A tail cut mid-character starts with U+FFFD from the decoder: drop it with the marker.
      const whole = partialStart && start === 0 ? `…${line.replace(/^\uFFFD+/u, "")}` : line;
      return cutChars(whole, STDERR_LINE_MAX);
    }
    end = start - 1;
  }
  return "";
}

/** `text` cut to at most `max` code units, never splitting a surrogate pair. */
function cutChars(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/**
 * The last non-empty line of the stderr file at `path`, from a bounded read of
 * its last {@link STDERR_TAIL_READ} bytes; "" when it has none, null when the
 * file cannot be read (missing). Never raises.
 */
export function readLastStderrLine(path: string | null): string | null {
  try {
    const tail = readTail(path, STDERR_TAIL_READ);
    return tail.missing ? null : lastNonEmptyLine(tail.text, tail.partial_first_line);
  } catch {
    return null;
  }
}

/**
 * The masks, applied in this order (earlier ones protect what later ones would
 * cut apart): timestamps, UUIDs and hex ids, URLs' hosts, paths, IP and
 * e-mail-like hosts, dotted host names, then any run of digits.
 */
const MASKS: [RegExp, string][] = [
  // ISO 8601 / RFC 3339 and their space-separated log variants, with fractions and zones.
  [/\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b/gu, "<time>"],
  // syslog's "Jan  2 15:04:05", and a bare clock time.
  [/\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} \d{2}:\d{2}:\d{2}\b/gu, "<time>"],
  [/\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/gu, "<time>"],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/giu, "<hex>"],
  [/\b0x[0-9a-f]+\b/giu, "<hex>"],
  // A hex run of 8+ with at least one digit and one letter (commit ids, container ids, digests).
  [/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b/giu, "<hex>"],
  [/\b([a-z][a-z0-9+.-]*:\/\/)(?:[^\s/@]+@)?(?:\[[0-9a-f:.]+\]|[^\s/:?#]+)(?::\d+)?/giu, "$1<host>"],
  // Absolute, home-relative and dot-relative paths; then relative ones with a slash and a letter.
  [/(?<![\p{L}\p{N}<>:/])(?:~|\.{1,2})?\/[^\s'"`,;:()<>[\]{}]+/gu, "<path>"],
  [/(?<![\p{L}\p{N}<>/])[A-Za-z]:\\[^\s'"`,;:()<>]+/gu, "<path>"],
  [/(?<![\p{L}\p{N}<>/])(?=[^\s/]*\p{L})[\p{L}\p{N}._-]+(?:\/[\p{L}\p{N}._-]+)+\/?/gu, "<path>"],
  [/\[(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}\](?::\d+)?/giu, "<host>"],
  [/\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/gu, "<host>"],
  [/(?<=[\p{L}\p{N}._-]@)[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*/gu, "<host>"],
  // Dotted names ending in a letters-only label: three labels or more, or two with a digit (db7.internal), or with a port.
  [/\b(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.){2,}[a-z]{2,63}(?::\d+)?\b/giu, "<host>"],
  [/\b(?=[a-z-]*\d)[a-z0-9-]+\.[a-z]{2,63}(?::\d+)?\b/giu, "<host>"],
  [/\b[a-z0-9-]+\.[a-z]{2,63}:\d+\b/giu, "<host>"],
  [/\p{Nd}+(?:[.,]\p{Nd}+)*/gu, "<n>"],
];

/**
 * `line` with its variable parts masked (see {@link MASKS}): `<time>`,
 * `<hex>`, `<host>`, `<path>`, `<n>`. Runs of whitespace become one space, so
 * column-aligned output masks alike. Any script (UTF-8 text) passes through.
 */
export function maskLine(line: string): string {
  let out = line;
  for (const [pattern, replacement] of MASKS) out = out.replace(pattern, replacement);
  return out.replace(/\s+/gu, " ").trim();
}

/**
 * Version of {@link MASKS}. Stored signatures carry it, so a later binary with
 * other masks does not group by what an older one masked: rows of another
 * version are grouped by their raw line and masked again.
 */
export const MASK_VERSION = 1;

/** A stderr line's signature as an attempt row stores it: `<MASK_VERSION>|<masked line>`. */
export function storedSignature(line: string): string {
  return `${MASK_VERSION}|${maskLine(line)}`;
}

// Defined once, as the JSON Schema `spoolctl schema` prints.
export type { FailureSignature };

/** A stable key of a signature (for merging groups). */
export function signatureKey(s: FailureSignature): string {
  return JSON.stringify([s.state, s.failure_reason, s.exit_code, s.signal, s.stderr]);
}

/** A signature as one line, e.g. `process_exit · exit 3 · could not connect to host <n>`. */
export function signatureText(s: FailureSignature): string {
  const parts = [s.failure_reason ?? (s.state === "canceled" ? "canceled" : "unknown")];
  if (s.signal !== null) parts.push(`signal ${s.signal}`);
  else if (s.exit_code !== null) parts.push(`exit ${s.exit_code}`);
  parts.push(s.stderr === "" ? "(no stderr)" : s.stderr);
  return parts.join(" · ");
}
