/**
 * Captured output of attempts (`output`, `feedback`; docs/architecture.md "Output"): the shapes of
 * each stream's path, size and text (the tail when it is large), read from a file here; the reads
 * through the queue are verbs of src/store/verbs/output.ts.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { invalidValue } from "../contract/errors.ts";
import type { AttemptOutput } from "../describe/schemas-core.ts";
import type { StreamView } from "../describe/schemas-rows.ts";

/** The two streams. */
export const STREAMS = ["stdout", "stderr"] as const;
/** One stream name. */
export type StreamName = (typeof STREAMS)[number];

// Defined once, as the JSON Schemas `spoolctl schema` prints.
export type { AttemptOutput, StreamView };

/** More than one in this many characters decoded as U+FFFD, or any NUL byte, makes a stream's tail binary. */
const BINARY_REPLACEMENT_RATIO = 8;

/** Whether `bytes` (a UTF-8 text's expected bytes) look like binary: a NUL, or many bytes that are not UTF-8. */
function looksBinary(bytes: Uint8Array, text: string): boolean {
  if (bytes.includes(0)) return true;
  let replaced = 0;
  for (const ch of text) if (ch === "\uFFFD") replaced++;
  return replaced > 0 && replaced * BINARY_REPLACEMENT_RATIO > text.length;
}

/**
 * The view of a stream of `size` bytes from its last bytes `window`, which
 * start at byte `from` of the stream (docs/architecture.md "Output"). A tail
 * that does not start the stream is cut at the next line's start (when
 * `prevNewline`, the byte before `from` ends a line, nothing is cut), or, when
 * the window holds no line break, at the next character's start; so no view
 * starts mid-line when it can help it, and none mid-character.
 * `omitted_bytes` counts the stream's bytes before the text, from the stream's
 * offsets (not the decoded text). A tail with a NUL byte or mostly bytes that
 * are not UTF-8 is `binary`: its text is empty (`output --raw` has the bytes).
 */
export function tailView(
  path: string | null,
  window: Uint8Array,
  from: number,
  size: number,
  prevNewline: boolean,
): StreamView {
  let start = 0;
  let partial = false;
  if (from > 0 && !prevNewline) {
    const nl = window.indexOf(0x0a);
    if (nl >= 0 && nl < window.length - 1) start = nl + 1;
    else {
      partial = true;
      // No line start to cut at: skip what continues a character begun before the window.
      while (start < Math.min(3, window.length) && (window[start]! & 0xc0) === 0x80) start++;
    }
  }
  const shown = window.subarray(start);
  const text = Buffer.from(shown.buffer, shown.byteOffset, shown.length).toString("utf8");
  const binary = looksBinary(shown, text);
  const omitted = from + start;
  return {
    path,
    missing: false,
    size_bytes: size,
    text: binary ? "" : text,
    truncated: omitted > 0,
    omitted_bytes: omitted,
    partial_first_line: partial && !binary,
    binary,
  };
}

/** A stream that has no file (nor shipped copy). */
function missingView(path: string | null): StreamView {
  return {
    path,
    missing: true,
    size_bytes: 0,
    text: "",
    truncated: false,
    omitted_bytes: 0,
    partial_first_line: false,
    binary: false,
  };
}

/** Reads at most the last `maxBytes` of a file, as {@link tailView} shows them. */
export function readTail(path: string | null, maxBytes: number): StreamView {
  if (path === null) return missingView(path);
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return missingView(path);
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, maxBytes);
    const from = size - length;
    // One byte more, before the window: whether the window starts a line.
    const buffer = Buffer.alloc(length + (from > 0 ? 1 : 0));
    const read = readSync(fd, buffer, 0, buffer.length, from > 0 ? from - 1 : 0);
    if (from === 0) return tailView(path, buffer.subarray(0, read), 0, size, true);
    return tailView(path, buffer.subarray(1, read), from, size, buffer[0] === 0x0a);
  } finally {
    closeSync(fd);
  }
}

/** Parses `--stream`: stdout, stderr or both. */
export function parseStream(raw: string | undefined): StreamName[] {
  if (raw === undefined || raw === "both") return [...STREAMS];
  if (raw === "stdout" || raw === "stderr") return [raw];
  throw invalidValue("--stream", raw, "stdout, stderr or both");
}
