/**
 * Windows of a job's output for the web view (docs/architecture.md "The web
 * view"): the job page shows the tail of a stream and loads earlier windows
 * on demand, and the live tail reads what was written after an offset, so a
 * 100 MB output is never read or sent whole. Output on this machine's spool
 * is read from its file; output shipped into a shared database from there.
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";
import type { Attempt } from "../model/job.ts";
import type { StreamName } from "../ops/output.ts";
import type { Store } from "../store/store.ts";
import { shippedOutput } from "../store/verbs/output.ts";

/** One window: `text` is bytes `[offset, end)` of the stream, `size` the stream's size now (bytes). */
export interface OutputWindow {
  offset: number;
  end: number;
  size: number;
  text: string;
}

/** The bytes `[start, start + max)` of a local file, and its size; null when the file is not here. */
function readLocal(path: string | null, start: number, max: number): { bytes: Uint8Array; size: number } | null {
  if (!path) return null;
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return null;
  }
  try {
    const size = statSync(path).size;
    const length = Math.max(0, Math.min(max, size - start));
    const bytes = new Uint8Array(length);
    let got = 0;
    while (got < length) {
      const n = readSync(fd, bytes, got, length - got, start + got);
      if (n === 0) break;
      got += n;
    }
    return { bytes: bytes.subarray(0, got), size };
  } finally {
    closeSync(fd);
  }
}

/** The stream's size and bytes from `start`, at most `max`, wherever the output lives. */
async function readAt(
  store: Store,
  attempt: Attempt,
  stream: StreamName,
  start: number,
  max: number,
): Promise<{ bytes: Uint8Array; size: number }> {
  const local = readLocal(stream === "stdout" ? attempt.stdout_path : attempt.stderr_path, start, max);
  if (local) return local;
  const shipped = await shippedOutput(store, attempt, stream, start, max);
  return shipped ? { bytes: shipped.bytes, size: shipped.size } : { bytes: new Uint8Array(), size: 0 };
}

/** Where the text of `bytes` (read from `offset`) may start: after the first newline, unless at the stream's start. */
function lineStart(bytes: Uint8Array, offset: number): number {
  if (offset === 0) return 0;
  const nl = bytes.indexOf(10);
  return nl === -1 ? 0 : nl + 1;
}

/** Where whole UTF-8 characters end in `bytes`: a character cut at the end is left for the next read. */
function charEnd(bytes: Uint8Array): number {
  let i = bytes.length;
  let back = 0;
  while (i > 0 && back < 4 && (bytes[i - 1]! & 0xc0) === 0x80) {
    i--;
    back++;
  }
  if (i === 0) return bytes.length;
  const lead = bytes[i - 1]!;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return need > back + 1 ? i - 1 : bytes.length;
}

/**
 * The window of at most `max` bytes that ends at `before` (the stream's end
 * when null), starting at a line start unless it reaches the stream's start.
 */
export async function windowBefore(
  store: Store,
  attempt: Attempt,
  stream: StreamName,
  before: number | null,
  max: number,
): Promise<OutputWindow> {
  const size = (await readAt(store, attempt, stream, 0, 0)).size;
  const end = Math.min(before ?? size, size);
  const start = Math.max(0, end - max);
  const { bytes } = await readAt(store, attempt, stream, start, end - start);
  const cut = lineStart(bytes, start);
  return { offset: start + cut, end, size, text: new TextDecoder().decode(bytes.subarray(cut)) };
}

/** What was written from `from` on, at most `max` bytes, ending at a whole character (for the live tail). */
export async function windowFrom(
  store: Store,
  attempt: Attempt,
  stream: StreamName,
  from: number,
  max: number,
): Promise<OutputWindow> {
  const { bytes, size } = await readAt(store, attempt, stream, from, max);
  const end = charEnd(bytes);
  return { offset: from, end: from + end, size, text: new TextDecoder().decode(bytes.subarray(0, end)) };
}
