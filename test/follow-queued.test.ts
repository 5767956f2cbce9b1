/**
 * `output --follow ID` on a queued job waits for its first attempt and then
 * follows it (README "Looking at the queue"), end to end: at a terminal
 * (tmux), where it says that it waits, and in a pipe; a job canceled while
 * waited for ends the wait with NO_ATTEMPTS_YET saying so.
 */
import { expect, test } from "bun:test";
import { killJobGroups, killSpawned } from "./support/processes.ts";
import { useTempQueue } from "./support/temp-queue.ts";
import { exitCode, HAVE_TMUX, screenShows, Tty } from "./support/tmux.ts";

let tty: Tty | null = null;
const q = useTempQueue({
  teardown: async () => {
    tty?.close();
    tty = null;
    await killSpawned();
    await killJobGroups(q);
  },
});

test.skipIf(!HAVE_TMUX)("at a terminal: says it waits, then streams the attempt once a worker runs it", async () => {
  const id = await q.addJob("--", "sh", "-c", "echo from-the-job; echo oops >&2");
  tty = new Tty(["output", String(id), "--follow"], { cwd: q.dir, env: { ...q.queueEnv(), NO_COLOR: "1" } });
  await screenShows(tty, `spoolctl: job ${id} is queued; waiting for its first attempt (Ctrl-C to stop)`);
  expect((await q.run(["work", "--drain"])).code).toBe(0);
  const screen = await screenShows(tty, `spoolctl: job ${id} attempt 1 ended: succeeded`);
  expect(screen).toContain("from-the-job\noops\n");
  expect(await exitCode(tty)).toBe(0);
});

test("in a pipe: the follower started before any worker prints the job's bytes and exits 0", async () => {
  const id = await q.addJob("--", "sh", "-c", "echo piped-out");
  const follower = q.spawn(["output", String(id), "--follow", "--stream", "stdout"]);
  expect((await q.run(["work", "--drain"])).code).toBe(0);
  const [stdout, stderr, code] = await Promise.all([
    new Response(follower.stdout).text(),
    new Response(follower.stderr).text(),
    follower.exited,
  ]);
  expect([stdout, stderr, code]).toEqual(["piped-out\n", "", 0]);
});

test("a job canceled while waited for ends the wait: NO_ATTEMPTS_YET, exit 0", async () => {
  const id = await q.addJob("--", "true");
  const follower = q.spawn(["output", String(id), "--follow"]);
  expect((await q.run(["cancel", String(id)])).code).toBe(0);
  const [stdout, stderr, code] = await Promise.all([
    new Response(follower.stdout).text(),
    new Response(follower.stderr).text(),
    follower.exited,
  ]);
  expect(code).toBe(0);
  expect(stdout).toBe("");
  // Read before or after the cancel, the job never ran: the warning says which.
  expect(stderr).toMatch(
    new RegExp(`NO_ATTEMPTS_YET: job ${id} (was canceled before it ran|has not been executed yet)`),
  );
});
