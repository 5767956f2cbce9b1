/**
 * The CLI as a user in a folder of their own, for the folder and file
 * ownership tests (docs/architecture.md "Folder ownership"): no queue selection
 * inherited, `HOME` set to the test's folder, and scripts run as another user.
 */
import { CLI } from "./temp-queue.ts";

/** `runuser` on PATH, or null (then the tests that need another user skip). */
export const RUNUSER = Bun.which("runuser");

/** Runs the CLI in `cwd` with `HOME=home` and no SPOOLCTL_DB or SPOOLCTL_TRUSTED_DIRS inherited, `extra` over it. */
export async function cliIn(home: string, args: string[], cwd: string, extra: Record<string, string> = {}) {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), NO_COLOR: "1", HOME: home };
  delete env.SPOOLCTL_DB;
  delete env.SPOOLCTL_TRUSTED_DIRS;
  Object.assign(env, extra);
  const proc = Bun.spawn(["bun", CLI, ...args], { env, cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/** Runs `script` with sh as `user` (through runuser); throws when it fails. */
export function asUser(user: string, script: string): void {
  const r = Bun.spawnSync([RUNUSER!, "-u", user, "--", "sh", "-c", script], { stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`as ${user}: ${script}: ${r.stderr.toString()}`);
}
