/**
 * `delete` at a terminal (a real pty under tmux): without --yes it asks once,
 * counting the jobs, attempts, events and output; No deletes nothing, Yes
 * deletes them.
 */
import { expect, test } from "bun:test";
import { useTempQueue } from "./support/temp-queue.ts";
import { exitCode, HAVE_TMUX, screenShows, Tty } from "./support/tmux.ts";

let tty: Tty | null = null;
const q = useTempQueue({
  teardown: () => {
    tty?.close();
    tty = null;
  },
});

test.skipIf(!HAVE_TMUX)("the confirm counts what goes; No keeps the jobs, Yes deletes them", async () => {
  const a = await q.addJob("--", "sh", "-c", "echo hi");
  expect((await q.run(["work", "--drain"])).code).toBe(0);
  const b = await q.addJob("--", "true");

  tty = new Tty(["delete", String(a), String(b)], { cwd: q.dir, env: { ...q.queueEnv(), NO_COLOR: "1" } });
  await screenShows(tty, `Delete 2 jobs (${a}, ${b}) with 1 attempt, 4 events and 3 bytes of output?`);
  tty.keys("Enter"); // the default is No
  await screenShows(tty, "Nothing deleted.");
  expect(await exitCode(tty)).toBe(0);
  expect((await q.jobs()).length).toBe(2);
  tty.close();

  tty = new Tty(["delete", String(a), String(b)], { cwd: q.dir, env: { ...q.queueEnv(), NO_COLOR: "1" } });
  await screenShows(tty, "This cannot be undone.");
  tty.keys("Left", "Enter"); // to Yes
  await screenShows(tty, `Deleted 2 jobs (${a}, ${b}) with 1 attempt and 4 events`);
  expect(await exitCode(tty)).toBe(0);
  expect(await q.jobs()).toEqual([]);
});

test.skipIf(!HAVE_TMUX)("the confirm counts the dependents a queued job's deletion closes", async () => {
  const d = await q.addJob("--key", "D", "--after", "1h", "--", "true");
  const e = await q.addJob("--needs", "D", "--", "true");
  tty = new Tty(["delete", String(d)], { cwd: q.dir, env: { ...q.queueEnv(), NO_COLOR: "1" } });
  await screenShows(tty, `and closes 1 job that waits on it (${e}): canceled, need deleted?`);
  tty.keys("Enter"); // No
  await screenShows(tty, "Nothing deleted.");
  expect(await exitCode(tty)).toBe(0);
  expect((await q.job(e))!.state).toBe("queued");
});
