/**
 * Jobs have no terminal (README "Running jobs"), even when their worker runs in
 * one: no controlling terminal, stdin /dev/null, output to files; so a
 * program that would prompt fails at once instead of waiting for a person.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { useTempQueue } from "./support/temp-queue.ts";
import { HAVE_TMUX, Tty } from "./support/tmux.ts";
import { waitFor } from "./support/wait.ts";

setDefaultTimeout(60_000);

let tty: Tty | null = null;
const q = useTempQueue({
  teardown: () => {
    tty?.close();
    tty = null;
  },
});

test.skipIf(!HAVE_TMUX)(
  "a job of a worker running in a terminal has no terminal: tty fails, /dev/tty cannot be opened, a prompt ends at once",
  async () => {
    const probe = [
      "tty; echo tty=$?",
      "test -t 0 && echo stdin-tty || echo stdin-not-tty",
      "test -t 1 && echo stdout-tty || echo stdout-not-tty",
      "(exec 3</dev/tty) 2>/dev/null && echo devtty-open || echo devtty-none",
      "read -r answer; echo read=$?",
    ].join("; ");
    const id = await q.addJob("--timeout", "20s", "-c", probe);
    tty = new Tty(["work", "--drain"], { cwd: q.dir, env: { ...q.queueEnv(), NO_COLOR: "1" }, width: 160, height: 40 });
    await waitFor("the drain to end", () => (/EXIT=\d+/.test(tty!.screen()) ? true : null), 30_000, 150);
    const job = (await q.job(id))!;
    expect(job.state).toBe("done");
    const out = readFileSync((await q.attempt(id))!.stdout_path, "utf8");
    expect(out).toBe("not a tty\ntty=1\nstdin-not-tty\nstdout-not-tty\ndevtty-none\nread=1\n");
  },
);

test("the README says so, and names the batch forms", () => {
  const readme = readFileSync(join(import.meta.dir, "..", "README.md"), "utf8");
  expect(readme).toContain("**Jobs have no terminal**");
  expect(readme).toContain("`sudo -n`");
  expect(readme).toContain("`ssh -o BatchMode=yes`");
});
