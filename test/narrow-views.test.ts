/**
 * A long command takes one line at a terminal (issue 21 item 4): `list`,
 * `status` and the `retry` picker cut it (in terminal columns: wide
 * characters count 2, Bun.stringWidth) rather than wrap it, in a REAL
 * 80-column pseudo-terminal (tmux, test/support/tmux.ts); off a terminal `list`
 * still prints it whole.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { addJob, drain } from "./support/jobs.ts";
import { useTempQueue } from "./support/temp-queue.ts";
import { HAVE_TMUX, screenShows, Tty } from "./support/tmux.ts";

setDefaultTimeout(120_000);

let tty: Tty | null = null;
const q = useTempQueue({
  teardown: () => {
    tty?.close();
    tty = null;
  },
});

const WIDE = `echo 日本語のとても長いコマンドの説明文がここに入ります ${"x".repeat(100)}; exit 3`;
const LONG = `exit 4; ${"y".repeat(150)}`;

/** Two dead jobs with commands far wider than 80 columns; returns their ids. */
async function twoLongDead(): Promise<[number, number]> {
  const wide = await addJob(q, "--max-retries", "0", "--", "sh", "-c", WIDE);
  const long = await addJob(q, "--max-retries", "0", "--", "sh", "-c", LONG);
  await drain(q);
  return [wide, long];
}

/** Every line of `screen` fits 80 columns, and the rows of the jobs are followed by `next` (no wrapped tail). */
function oneLineEach(screen: string, rows: RegExp[], next: RegExp[]): void {
  const lines = screen.split("\n");
  for (const l of lines) expect(Bun.stringWidth(l)).toBeLessThanOrEqual(80);
  rows.forEach((row, i) => {
    const at = lines.findIndex((l) => row.test(l));
    expect(at).toBeGreaterThanOrEqual(0);
    expect(lines[at]).toContain("…");
    expect(lines[at + 1]).toMatch(next[i]!);
  });
}

test.skipIf(!HAVE_TMUX)("list and status at 80 columns: one line per job, the command cut with …", async () => {
  const [wide, long] = await twoLongDead();
  tty = new Tty(["list"], { cwd: q.dir, env: { ...q.queueEnv() }, width: 80, height: 40 });
  const list = await screenShows(tty, "EXIT=0");
  oneLineEach(
    list,
    [new RegExp(`^${long} .*exit 4;`), new RegExp(`^${wide} .*日本語`)],
    [new RegExp(`^${wide} `), /^EXIT=0/],
  );
  tty.close();
  tty = new Tty(["status"], { cwd: q.dir, env: { ...q.queueEnv() }, width: 80, height: 40 });
  const status = await screenShows(tty, "EXIT=0");
  oneLineEach(
    status,
    [new RegExp(`^ {2}job ${long} .*yyy`), new RegExp(`^ {2}job ${wide} .*日本語`)],
    [new RegExp(`^ {2}job ${wide} `), /^EXIT=0/],
  );
  // Off a terminal the whole command is printed.
  const piped = await q.run(["list"]);
  expect(piped.stdout).toContain(LONG);
});

test.skipIf(!HAVE_TMUX)(
  "the retry picker at 80 columns, in color: the row under the cursor and its hint on one line",
  async () => {
    const [wide, long] = await twoLongDead();
    tty = new Tty(["retry"], { cwd: q.dir, env: { ...q.queueEnv() }, width: 80, height: 40 });
    const first = await screenShows(tty, "Jobs to retry");
    oneLineEach(first, [new RegExp(`◻ +${long} +dead .*\\(exit 4\\)$`)], [new RegExp(`◻ +${wide} +dead`)]);
    tty.keys("Down");
    const second = await screenShows(tty, /\(exit 3\)/);
    oneLineEach(second, [new RegExp(`◻ +${wide} +dead .*日本語.*\\(exit 3\\)$`)], [/↑\/↓ to navigate/]);
    tty.keys("C-c");
    await screenShows(tty, "EXIT=0");
  },
);
