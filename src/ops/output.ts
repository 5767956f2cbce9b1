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

/** Reads at most the last `maxBytes` of a file. */
export function readTail(path: string | null, maxBytes: number): StreamView {
  if (path === null) return { path, missing: true, size_bytes: 0, text: "", truncated: false };
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return { path, missing: true, size_bytes: 0, text: "", truncated: false };
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return { path, missing: false, size_bytes: size, text: buffer.toString("utf8"), truncated: size > length };
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
