/**
 * Terminal drivers for live views: the `status --watch` screen that
 * redraws in place until Ctrl-C, and the single updating progress line of
 * `work --drain` on stderr. Callers decide whether a terminal is there; these
 * only draw.
 */
import { colorEnabled, type Paint, paint } from "./color.ts";
import { fitScreen } from "./status-view.ts";

/** A redraw trigger: resolves at the next queue change or after `ms` (a store's `watch()`). */
export interface Wakeable {
  wait(ms: number): Promise<void>;
  poke(): void;
}

/**
 * Redraws `frame()` on `out` every `intervalMs` (and on queue changes, at most
 * every 100 ms) until SIGINT/SIGTERM; then restores the cursor and resolves.
 * The last frame stays on screen.
 */
export async function runWatchScreen(opts: {
  out: NodeJS.WriteStream;
  intervalMs: number;
  frame: (color: Paint) => Promise<string[]>;
  wake: Wakeable;
}): Promise<void> {
  const { out, intervalMs, wake } = opts;
  const color = paint(colorEnabled(out));
  let stopped = false;
  const stop = () => {
    stopped = true;
    wake.poke();
  };
  const resize = () => wake.poke();
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  out.on("resize", resize);
  out.write("\u001b[?25l\u001b[H\u001b[2J"); // hide the cursor, clear once
  try {
    while (!stopped) {
      const lines = fitScreen(await opts.frame(color), out.columns || 80, out.rows || 24);
      out.write(`\u001b[H${lines.map((l) => `${l}\u001b[K`).join("\n")}\u001b[J`);
      const started = performance.now();
      await wake.wait(intervalMs);
      const spent = performance.now() - started;
      if (!stopped && spent < 100) await Bun.sleep(100 - spent); // a burst of commits: cap the redraw rate
    }
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    out.off("resize", resize);
    out.write("\u001b[0m\u001b[?25h\n"); // reset, show the cursor, leave the last frame visible
  }
}

/**
 * One line on a terminal that is redrawn in place (`\r` + erase), with other
 * lines printed above it. Inactive (a no-op that prints lines plainly) when
 * `enabled` is false: pipes and `--json` never see progress.
 */
export class ProgressLine {
  private text = "";

  constructor(
    private readonly out: NodeJS.WriteStream,
    readonly enabled: boolean,
  ) {}

  /** Replaces the progress text. */
  update(text: string): void {
    if (!this.enabled) return;
    this.text = text;
    const width = Math.max(20, (this.out.columns || 80) - 1);
    this.out.write(`\r\u001b[K${text.length > width ? `${text.slice(0, width - 1)}…` : text}`);
  }

  /** Prints a whole line above the progress line (the line itself ends with "\n"). */
  println(line: string): void {
    if (!this.enabled) {
      this.out.write(line);
      return;
    }
    this.out.write(`\r\u001b[K${line}`);
    if (this.text) this.update(this.text);
  }

  /** Erases the progress line for good. */
  clear(): void {
    if (!this.enabled) return;
    this.out.write("\r\u001b[K");
    this.text = "";
  }
}
