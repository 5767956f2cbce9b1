/**
 * Envelope comparisons of the operator-verb tests: data keys, a queue's
 * selection taken out of hints, and the reference envelopes.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { selectionFlags } from "../../src/commands/selection.ts";
import type { TempQueue } from "./temp-queue.ts";

/** Data keys of an envelope's `data`, sorted (for shape comparisons with the reference envelopes). */
export function keysOf(value: unknown): string[] {
  return value && typeof value === "object" ? Object.keys(value).sort() : [];
}

/**
 * `value` with this queue's selection (`--db X`, which every hint of a run on
 * `q` carries: src/commands/selection.ts) taken out of its strings, to compare
 * with a reference envelope made without one.
 */
export function withoutSelection<T>(q: TempQueue, value: T): T {
  const flags = selectionFlags({ dbPath: q.location().dbPath, source: "env" });
  return JSON.parse(JSON.stringify(value).replaceAll(` ${JSON.stringify(flags).slice(1, -1)}`, ""));
}

/** Reads a reference envelope from ../shared/reference/envelopes/. */
export function reference(name: string): any {
  const candidates = [
    join(import.meta.dir, "../../../shared/reference/envelopes", name),
    join("/work/shared/reference/envelopes", name),
  ];
  const file = candidates.find((f) => existsSync(f));
  return file ? JSON.parse(readFileSync(file, "utf8")) : null;
}
