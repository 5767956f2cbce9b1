/**
 * The SQLite driver's wake-up sources (docs/architecture.md "Waking"), each
 * with the slow poll as the fallback where file events are unavailable:
 *
 * - readers (`events --follow`, `status --watch`, `wait`): {@link watchQueue}
 *   watches the database folder for changes to the database or its WAL, so
 *   any commit wakes them;
 * - workers: {@link watchWork} watches the queue's wake folder
 *   (`<spool>/wake/`), whose small files writers touch after COMMIT when they
 *   made work available (see {@link signalWork}): a worker is woken by work of
 *   its lane, not by every commit of every worker.
 */
import { closeSync, type FSWatcher, mkdirSync, openSync, utimesSync, watch } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Waker, WorkWaker } from "../store.ts";
import { pollingWorkWaker, WakeSignal, type WorkSignals, workWaker } from "../wake-signal.ts";

/** Delay of the second wake after a burst of file events, milliseconds. */
const TRAILING_WAKE_MS = 15;

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

/** The wake folder of a spool. */
function wakeDir(spoolDir: string): string {
  return join(spoolDir, "wake");
}

/** The file name part of a lane: the name itself when it is a plain lane name, else its hex. */
function laneFile(lane: string): string {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(lane)
    ? `lane-${lane}`
    : `hex-${Buffer.from(lane).toString("hex").slice(0, 200)}`;
}

/** File touched for work every worker of every lane should look at. */
const ALL_FILE = "all";

/**
 * Touches the wake files of what a committed transaction made available (one
 * `utimes` each). A file that does not exist has no watcher (workers create
 * theirs when they start watching): nothing is created here. Errors are
 * ignored: the poll remains.
 */
export function signalWork(spoolDir: string, signals: WorkSignals): void {
  const dir = wakeDir(spoolDir);
  const now = new Date();
  const touch = (name: string) => {
    try {
      utimesSync(join(dir, name), now, now);
    } catch {
      // no worker watches (ENOENT), or the folder is not ours to touch: the poll remains
    }
  };
  if (signals.all) touch(ALL_FILE);
  for (const lane of signals.ready) touch(`${laneFile(lane)}.ready`);
  for (const lane of signals.freed) touch(`${laneFile(lane)}.freed`);
}

/**
 * A worker's waker for `lane` (or each of several lanes): creates the wake
 * folder (0700) and the lanes' files (0600) when missing, and watches each
 * file it listens to (not the folder: a worker is not even woken by the
 * touches it ignores): each lane's `.ready` and `all`, and each lane's
 * `.freed` when `freed` (a worker that will ask for it). Falls back to the
 * poll when they cannot be made or watched.
 */
export function watchWork(spoolDir: string, lane: string | readonly string[], freed: boolean): WorkWaker {
  const dir = wakeDir(spoolDir);
  const lanes = typeof lane === "string" ? [lane] : [...lane];
  const watchers: FSWatcher[] = [];
  const release = () => {
    for (const w of watchers) w.close();
  };
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const signal = new WakeSignal();
    const listen = (name: string, fire: () => void) => {
      closeSync(openSync(join(dir, name), "a", 0o600));
      const w = watch(join(dir, name), { persistent: false }, fire);
      w.on("error", () => {});
      watchers.push(w);
    };
    listen(ALL_FILE, () => signal.fireStop());
    for (const l of lanes) {
      listen(`${laneFile(l)}.ready`, () => signal.fire());
      if (freed) listen(`${laneFile(l)}.freed`, () => signal.fire("freed"));
      else closeSync(openSync(join(dir, `${laneFile(l)}.freed`), "a", 0o600));
    }
    return workWaker(signal, release, true);
  } catch {
    release();
    return pollingWorkWaker();
  }
}
