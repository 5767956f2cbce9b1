/**
 * `edit ID` at a terminal (a real pty under tmux) opens the job's JSON in
 * $EDITOR and applies what was saved; a job that ran while the editor was
 * open — here the "editor" itself runs a real worker on it — is refused with
 * CONFLICT (exit 5), though it is queued again for its retry.
 */
import { expect, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, useTempQueue } from "./support/temp-queue.ts";
import { exitCode, HAVE_TMUX, screenShows, shellQuote, Tty } from "./support/tmux.ts";

let tty: Tty | null = null;
const q = useTempQueue({
  teardown: () => {
    tty?.close();
    tty = null;
  },
});

/** An "editor": a shell script run as `$EDITOR FILE`, with `body` as its commands. */
function editor(name: string, body: string): string {
  const path = join(q.dir, name);
  writeFileSync(path, `#!/bin/sh\nset -e\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

test.skipIf(!HAVE_TMUX)("the JSON saved in $EDITOR is applied in one edit", async () => {
  const id = await q.addJob("--", "echo", "old");
  const ed = editor("ed.sh", `sed -i -e 's/"old"/"new"/' -e 's/"priority": 0/"priority": 8/' "$1"`);
  tty = new Tty(["edit", String(id)], { cwd: q.dir, env: { ...q.queueEnv(), NO_COLOR: "1", EDITOR: ed } });
  await screenShows(tty, `Edited job ${id}: argv, priority`);
  expect(await exitCode(tty)).toBe(0);
  expect(await q.job(id)).toMatchObject({ argv: ["echo", "new"], priority: 8, state: "queued" });
});

test.skipIf(!HAVE_TMUX)("a job that ran while its editor was open is refused, nothing changed", async () => {
  const id = await q.addJob("--max-retries", "3", "--", "sh", "-c", "exit 1");
  // The editor runs the job once (it fails and is queued again for a retry), then saves a change.
  const ed = editor(
    "ed.sh",
    `bun ${shellQuote(CLI)} work --once >/dev/null 2>&1\nsed -i 's/"priority": 0/"priority": 8/' "$1"`,
  );
  tty = new Tty(["edit", String(id)], { cwd: q.dir, env: { ...q.queueEnv(), NO_COLOR: "1", EDITOR: ed } });
  await screenShows(tty, `job ${id} ran (attempt 1) while being edited`);
  expect(await exitCode(tty)).toBe(5);
  expect(await q.job(id)).toMatchObject({ state: "queued", priority: 0, last_attempt_no: 1 });
});
