/**
 * A real pseudo-terminal for tests, driven through tmux: each {@link Tty} runs
 * one command in its own tmux server (a private socket), so tests never touch
 * a user's sessions. Read the screen with `screen()`, type with `keys()`, and
 * poll with `waitFor` from wait.ts; never sleep-and-hope.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { CLI } from "./temp-queue.ts";
import { waitFor } from "./wait.ts";

/** Whether tmux is installed (tests that need a terminal skip without it). */
export const HAVE_TMUX = spawnSync("tmux", ["-V"]).status === 0;

/** POSIX single-quoting. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Kills the tmux server on `socket` (a `-L` name) and removes the socket file, which tmux leaves behind. */
export function killTmuxServer(socket: string): void {
  spawnSync("tmux", ["-L", socket, "kill-server"]);
  rmSync(join(process.env.TMUX_TMPDIR ?? "/tmp", `tmux-${process.getuid?.() ?? 0}`, socket), { force: true });
}

/** A command running in a tmux pane of `width` × `height`. */
export class Tty {
  private readonly socket = `spoolctl-test-${process.pid}-${randomBytes(4).toString("hex")}`;

  /**
   * Starts `bun src/cli.ts ARGS` in `cwd` with exactly `env` (plus PATH, HOME,
   * TERM). When it exits the pane prints `EXIT=<code>` and stays open. The
   * wrapper is bash, which survives a Ctrl-C that its child handled (dash would
   * die with it and take the pane along).
   */
  constructor(args: string[], opts: { cwd: string; env: Record<string, string>; width?: number; height?: number }) {
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/tmp",
      TERM: "xterm-256color",
      ...opts.env,
    };
    const assignments = Object.entries(env).map(([k, v]) => `${k}=${shellQuote(v)}`);
    const command = `cd ${shellQuote(opts.cwd)} && env -i ${assignments.join(" ")} bun ${shellQuote(CLI)} ${args.map(shellQuote).join(" ")}; echo "EXIT=$?"; exec sleep 600`;
    this.tmux([
      "new-session",
      "-d",
      "-s",
      "t",
      "-x",
      String(opts.width ?? 200),
      "-y",
      String(opts.height ?? 50),
      "bash",
      "-c",
      command,
    ]);
  }

  private tmux(args: string[]): string {
    const r = spawnSync("tmux", ["-L", this.socket, "-f", "/dev/null", ...args], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`tmux ${args[0]} failed: ${r.stderr}`);
    return r.stdout;
  }

  /** The visible screen as text (colors dropped). */
  screen(): string {
    return this.tmux(["capture-pane", "-p", "-t", "t"]);
  }

  /** The visible screen with lines the terminal wrapped joined again (`-J`): a long line reads as one. */
  screenJoined(): string {
    return this.tmux(["capture-pane", "-p", "-J", "-t", "t"]);
  }

  /** The visible screen with escape sequences kept (`-e`). */
  screenWithColors(): string {
    return this.tmux(["capture-pane", "-p", "-e", "-t", "t"]);
  }

  /** Sends keys, tmux names (`C-c`, `Enter`) or literal text. */
  keys(...keys: string[]): void {
    this.tmux(["send-keys", "-t", "t", "--", ...keys]);
  }

  /** Ends the tmux server and everything in it, and removes its socket file. */
  close(): void {
    killTmuxServer(this.socket);
  }
}

/** Each read of the pane is a tmux round trip: a few reads a second is plenty. */
const POLL_MS = 150;
/** Generous: a loaded CI machine may take seconds to start bun. */
const DEADLINE_MS = 30_000;

/** Waits until the screen of `t` matches `pattern` (string or regex); returns the screen. */
export function screenShows(t: Tty, pattern: string | RegExp): Promise<string> {
  const test = (s: string) => (typeof pattern === "string" ? s.includes(pattern) : pattern.test(s));
  return waitFor(
    `the screen to show ${pattern}`,
    () => {
      const s = t.screen();
      return test(s) ? s : null;
    },
    DEADLINE_MS,
    POLL_MS,
  );
}

/** Waits until `check(screen)` holds; returns the screen. */
export function screenWhere(t: Tty, what: string, check: (screen: string) => boolean): Promise<string> {
  return waitFor(
    what,
    () => {
      const s = t.screen();
      return check(s) ? s : null;
    },
    DEADLINE_MS,
    POLL_MS,
  );
}

/** Waits for the program to end (the pane prints EXIT=<code>); returns the code. */
export async function exitCode(t: Tty): Promise<number> {
  const s = await screenShows(t, /EXIT=\d+/);
  return Number(/EXIT=(\d+)/.exec(s)![1]);
}
