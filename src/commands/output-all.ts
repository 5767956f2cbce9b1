/**
 * `output --follow --all` (docs/architecture.md "Batches"): every line of a
 * selection's attempts on stdout, each whole, prefixed `[ID]` (`[ID stderr]`,
 * `[ID#N]` for attempt N > 1), or one JSON object per line under `--json`.
 * Ends when a batch is settled, or on Ctrl-C (SIGINT/SIGTERM).
 */

import type { Store } from "../store/store.ts";
import { batchByName } from "../store/verbs/follow.ts";
import { type FollowedLine, type FollowSelection, followAll } from "./follow-all.ts";

/** Pause between two looks at the queue, milliseconds. */
const POLL_MS = 100;

/** Writes text to stdout whole, waiting while the reader is slow. */
async function writeOut(text: string): Promise<void> {
  if (!process.stdout.write(text)) await new Promise<void>((resolve) => process.stdout.once("drain", () => resolve()));
}

/** A line as text: `[12] …`, `[12 stderr] …`, `[12#2] …`. */
function prefixed(line: FollowedLine): string {
  const id = line.attempt > 1 ? `${line.job}#${line.attempt}` : String(line.job);
  return `[${id}${line.stream === "stderr" ? " stderr" : ""}] ${line.text}\n`;
}

/** Follows `sel` to stdout until it is settled or interrupted. */
export async function followAllCommand(store: Store, sel: FollowSelection, json: boolean): Promise<void> {
  let stop = false;
  const onSignal = () => void (stop = true);
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    // A batch may be added after its follower starts (a CI step's background follower), but a
    // mistyped name would follow nothing for ever: say it once.
    if (sel.batch !== undefined && (await batchByName(store, sel.batch)) === null)
      process.stderr.write(
        `spoolctl: warning: no batch named ${JSON.stringify(sel.batch)} yet; following it from when its first job is added (spoolctl batch list shows the batches; Ctrl-C stops)\n`,
      );
    const end = await followAll(store, sel, { pollMs: POLL_MS, shouldStop: () => stop }, (line) =>
      writeOut(json ? `${JSON.stringify(line)}\n` : prefixed(line)),
    );
    if (!json && process.stderr.isTTY)
      process.stderr.write(`spoolctl: ${end === "settled" ? `batch ${sel.batch} settled` : "stopped"}\n`);
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
