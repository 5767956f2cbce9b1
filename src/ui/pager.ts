/**
 * Showing long text through a pager (triage's "view the full output"):
 * `$PAGER` when set, else `less -R` when it is on PATH, on a terminal only.
 * `PAGER` set but empty means no pager (as git reads it). Without a pager
 * the caller prints the text inline.
 */

let running = false;

/** Whether a pager runs now: Ctrl-C is then the pager's (it quits a search in less), not the caller's. */
export function pagerRunning(): boolean {
  return running;
}

/** The pager command to run through `sh -c`, or null for none. */
export function pagerCommand(
  env: Record<string, string | undefined> = process.env,
  isTTY = Boolean(process.stdout.isTTY),
): string | null {
  if (!isTTY) return null;
  const asked = env.PAGER;
  if (asked !== undefined) return asked.trim() === "" ? null : asked;
  return Bun.which("less", { PATH: env.PATH ?? "" }) ? "less -R" : null;
}

/**
 * Pipes `text` into the pager `command` (run by `sh -c`, so `PAGER="less -S"`
 * works) on this terminal and waits for it to end. Returns false, having shown
 * nothing, when it could not be started or failed at once (the caller then
 * prints inline); true when it ran.
 */
export async function runPager(command: string, text: string): Promise<boolean> {
  let child: Bun.Subprocess<"pipe", "inherit", "inherit">;
  try {
    // less without LESS of its own: F prints output that fits on one screen and quits at once
    // (short output reads as inline); R keeps colors; no X, so longer output gets the
    // alternate screen and quitting it brings back the session as it was, not less's last page.
    child = Bun.spawn(["sh", "-c", command], {
      stdin: "pipe",
      stdout: "inherit",
      stderr: "inherit",
      env: { ...process.env, LESS: process.env.LESS ?? "FR" },
    });
  } catch {
    return false;
  }
  running = true;
  try {
    try {
      child.stdin.write(text.endsWith("\n") ? text : `${text}\n`);
      await child.stdin.end();
    } catch {
      // The pager quit before reading everything (q in less): that is fine.
    }
    await child.exited;
  } finally {
    running = false;
  }
  const code = child.exitCode;
  // 127: sh found no such command; nothing was shown.
  return code !== 127;
}
