/**
 * Demonstrates why an idle worker sometimes waits for its poll instead of
 * waking on `add` (the add→start latency outliers of ~1 s): the file events
 * the waker (src/worker/wake.ts) listens to are raised by write() calls on
 * the WAL, and a commit becomes visible to other connections only afterwards,
 * when the writer updates the wal-index header in the -shm file (an mmap
 * write, which raises no file event). A reader that wakes on the last WAL
 * event can still see the old snapshot, and then nothing wakes it again.
 *
 * This script watches the queue folder exactly like the waker (database and
 * -wal names), and on every event immediately reads max(id) through its own
 * open connection (like a worker's hasDueJob). After each `add` it counts the
 * adds for which *no* event-triggered read saw the new job.
 *
 *   bun bench/wake-race.ts [ADDS]        # default 30
 */
import { Database } from "bun:sqlite";
import { watch } from "node:fs";
import { basename, dirname, join } from "node:path";
import { cleanup, cliOk, sleep, tempDir } from "./lib.ts";

const adds = Number(process.argv[2] ?? 30);
const dir = tempDir("wake-race");
const path = join(dir, "queue.db");
await cliOk(["add", "--db", path, "--", "true"], { quiet: true });

const db = new Database(path);
db.exec("PRAGMA busy_timeout = 5000");
const maxId = () => (db.query("SELECT max(id) AS m FROM jobs").get() as { m: number }).m;
let seen = maxId();
let events = 0;
let staleReads = 0;
const name = basename(path);
const watcher = watch(dirname(path), { persistent: false }, (_e, file) => {
  if (file !== null && file !== name && file !== `${name}-wal`) return;
  events++;
  const m = maxId();
  if (m === seen) staleReads++;
  else seen = m;
});

let missed = 0;
for (let i = 0; i < adds; i++) {
  await cliOk(["add", "--db", path, "--", "true"], { quiet: true });
  await sleep(150); // let every event of this add be delivered
  const now = maxId();
  if (now !== seen) {
    missed++; // every event-triggered read saw the old snapshot
    seen = now;
  }
}
watcher.close();
db.close();
cleanup();
console.log(
  `${adds} adds, ${events} file events, ${staleReads} event-triggered reads saw the old snapshot; ` +
    `${missed} adds (${Math.round((100 * missed) / adds)}%) were never visible to any event-triggered read ` +
    `— a worker waiting on the waker would have slept until its next poll for each of these.`,
);
