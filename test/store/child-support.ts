/**
 * The child side of the race cases: argument parsing, the start barrier and
 * opening the queue. A child script (claimant.ts, adder.ts, opener.ts) is run
 * as `bun SCRIPT DB_PATH SPOOL_DIR --barrier DIR --id N [options]`, where
 * DB_PATH is a file path or a postgres:// URL: the same script serves every
 * driver. (opener.ts takes several DB_PATH SPOOL_DIR pairs.) It prints one JSON line on stdout and exits 0, or prints the error
 * on stderr and exits 1.
 */
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openQueue } from "../../src/store/index.ts";
import type { QueueLocation } from "../../src/store/location.ts";
import type { Store } from "../../src/store/store.ts";

/** How long a child waits at the barrier before giving up (ms). */
const BARRIER_TIMEOUT_MS = 60_000;

type Options = NonNullable<Parameters<typeof parseArgs>[0]>["options"];

/** Parses `DB_PATH SPOOL_DIR [more pairs] --barrier DIR --id N` plus the script's own options. */
export function childArgs<O extends Options>(options: O) {
  const parsed = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: { barrier: { type: "string" }, id: { type: "string" }, ...options },
  });
  const p = parsed.positionals;
  if (p.length < 2 || p.length % 2 !== 0)
    throw new Error("usage: SCRIPT DB_PATH SPOOL_DIR [DB_PATH SPOOL_DIR …] --barrier DIR --id N [options]");
  const locations: QueueLocation[] = [];
  for (let i = 0; i < p.length; i += 2) locations.push({ dbPath: p[i]!, spoolDir: p[i + 1]!, source: "flag" });
  const values = parsed.values as Record<string, string | boolean | undefined>;
  return {
    location: locations[0]!,
    locations,
    values,
    id: String(values.id ?? process.pid),
    barrierDir: values.barrier as string | undefined,
  };
}

/**
 * Says "ready" (a file `ready-<id>` in the barrier folder) and waits for the
 * parent's `go` file, so that every child starts its work at the same moment.
 */
export async function barrier(dir: string | undefined, id: string): Promise<void> {
  if (!dir) return;
  writeFileSync(join(dir, `ready-${id}`), String(process.pid));
  const deadline = Date.now() + BARRIER_TIMEOUT_MS;
  while (!existsSync(join(dir, "go"))) {
    if (Date.now() > deadline) throw new Error(`child ${id}: no go signal within ${BARRIER_TIMEOUT_MS} ms`);
    await Bun.sleep(2);
  }
}

/**
 * A barrier among the children themselves, for round `round`: says ready
 * (`round-<round>-<id>`) and waits until `parties` children have, so that a
 * child that ran ahead waits for the others before its next step.
 */
export async function rendezvous(dir: string | undefined, round: number, id: string, parties: number): Promise<void> {
  if (!dir) return;
  const prefix = `round-${round}-`;
  writeFileSync(join(dir, `${prefix}${id}`), "");
  const deadline = Date.now() + BARRIER_TIMEOUT_MS;
  while (readdirSync(dir).filter((f) => f.startsWith(prefix)).length < parties) {
    if (Date.now() > deadline)
      throw new Error(`child ${id}: round ${round} not reached by ${parties} children within ${BARRIER_TIMEOUT_MS} ms`);
    await Bun.sleep(1);
  }
}

/** Opens the queue, creating it (and migrating) if needed. */
export function openFromArgs(location: QueueLocation): Promise<Store> {
  return openQueue(location, { create: true });
}

/** Whether an error is the driver's `LOCKED` (a transient wait-out, exit 4). */
export function isLocked(error: unknown): boolean {
  return (error as { code?: unknown })?.code === "LOCKED";
}

/** Runs a child's main: prints its JSON result, or the error, and exits. */
export function runChild(main: () => Promise<unknown>): void {
  main().then(
    (result) => {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      process.exit(0);
    },
    (error) => {
      const e = error as { code?: unknown; message?: unknown; stack?: unknown };
      process.stderr.write(`child failed: ${e?.code ?? ""} ${e?.stack ?? e?.message ?? String(error)}\n`);
      process.exit(1);
    },
  );
}
