/**
 * The SQLite driver's wake-up source: wakes an idle worker (or `events
 * --follow`) when another process commits to the queue; idle workers wait on
 * it plus a slow poll and never spin (docs/architecture.md "Waking"). It
 * watches the database folder for changes to the database or its WAL; the poll
 * interval remains the fallback where file events are unavailable.
 */
import { watch, type FSWatcher } from "node:fs";
import { basename, dirname } from "node:path";
import type { Waker } from "../store.ts";
import { WakeSignal } from "../wake-signal.ts";


/** Delay of the second wake after a burst of file events, milliseconds. */
export const TRAILING_WAKE_MS = 15;

/** Watches `dbPath`'s folder for changes to the database, its WAL or shm file. */
export function watchQueue(dbPath: string): Waker {
  const name = basename(dbPath);
  const signal = new WakeSignal();
  const fire = signal.fire;
  // A commit appends WAL frames (file events) and then publishes them in the
  // shared-memory index (an mmap write: no event). The first event can thus
  // arrive before the commit is visible, and the last one too; so wake now and
  // again shortly after the burst settles.
  let trailing: ReturnType<typeof setTimeout> | null = null;
  const onChange = () => {
    fire();
    if (trailing) clearTimeout(trailing);
    trailing = setTimeout(() => {
      trailing = null;
      fire();
    }, TRAILING_WAKE_MS);
  };
  let watcher: FSWatcher | null = null;
  try {
    watcher = watch(dirname(dbPath), { persistent: false }, (_event, file) => {
      if (file === null || file === name || file === `${name}-wal`) onChange();
    });
    watcher.on("error", () => {});
  } catch {
    watcher = null; // no file events here: rely on the poll
  }
  return {
    wait: (ms) => signal.wait(ms),
    poke: fire,
    close() {
      if (trailing) clearTimeout(trailing);
      watcher?.close();
      fire();
    },
  };
}
