/**
 * Helpers for the operator-verb tests (wait, retry, cancel, prune, events,
 * config): add jobs through the CLI, drain, and a job that blocks until the
 * test lets it go. Queue state is read through TempQueue (the driver);
 * test-only shortcuts are in support/queue-fixtures.ts.
 */
import { expect } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { selectionFlags } from "../src/commands/selection.ts";
import { FAST_KNOBS, type TempQueue } from "./helpers.ts";

/** `add --json ARGS` → the new job's id. */
export async function addJob(q: TempQueue, ...args: string[]): Promise<number> {
  const r = await q.run(["add", "--json", ...args]);
  if (r.code !== 0) throw new Error(`add failed (${r.code}): ${r.stdout}${r.stderr}`);
  return r.json.data.job_id as number;
}

/** Runs `work --drain` and expects it to succeed. */
export async function drain(q: TempQueue, ...args: string[]): Promise<void> {
  const r = await q.run(["work", "--drain", ...args], { env: FAST_KNOBS });
  expect(r.code).toBe(0);
}

/**
 * The argv of a job that runs until `release()` creates its gate file; it
 * writes its pid to `pidfile` first. Returns the argv and the release function.
 * It also ends when the queue's folder is gone, so a job a test left running
 * (claimed by a worker killed before its first heartbeat) cannot outlive it.
 */
export function gatedJob(q: TempQueue, name: string): { argv: string[]; release(): void; pid(): number | null } {
  const gate = join(q.dir, `${name}.go`);
  const pidfile = join(q.dir, `${name}.pid`);
  return {
    argv: [
      "sh",
      "-c",
      `echo $$ > '${pidfile}'; while [ ! -f '${gate}' ] && [ -d '${q.dir}' ]; do sleep 0.05; done; echo released`,
    ],
    release: () => writeFileSync(gate, "go"),
    pid: () =>
      existsSync(pidfile) && readFileSync(pidfile, "utf8").trim() ? Number(readFileSync(pidfile, "utf8").trim()) : null,
  };
}

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
    join(import.meta.dir, "../../shared/reference/envelopes", name),
    join("/work/shared/reference/envelopes", name),
  ];
  const file = candidates.find((f) => existsSync(f));
  return file ? JSON.parse(readFileSync(file, "utf8")) : null;
}
