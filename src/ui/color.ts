/**
 * Colors for human output: on only when the stream is a terminal,
 * `NO_COLOR` is unset or empty and `TERM` is not `dumb`; `FORCE_COLOR` (non-empty,
 * not `0`) turns them on off a terminal, but `NO_COLOR` still wins. No library:
 * a handful of SGR codes, so that simple verbs import nothing heavy.
 */
import type { CaseResult } from "../ops/report.ts";
import { isTerminal } from "./stdio.ts";

/** Whether `stream` (default: stdout, asked without building Node's stream) may be colored. */
export function colorEnabled(stream?: { isTTY?: boolean }): boolean {
  if (process.env.NO_COLOR) return false;
  const force = process.env.FORCE_COLOR;
  if (force && force !== "0" && force !== "false") return true;
  return (stream ? Boolean(stream.isTTY) : isTerminal(1)) && process.env.TERM !== "dumb";
}

/** SGR codes by state (and the derived `scheduled`, and report results). */
const STATE_SGR: Record<string, string> = {
  queued: "33", // yellow
  scheduled: "35", // magenta
  held: "34", // blue
  running: "36", // cyan
  done: "32", // green
  dead: "31", // red
  failed: "31",
  canceled: "90", // gray
  timed_out: "31",
  abandoned: "33",
  succeeded: "32",
  passed: "32",
  flaky: "33",
  skipped: "90",
  pending: "33",
  live: "32",
  stale: "33",
  stopped: "90",
};

/** Colorizers; each returns its text unchanged when color is off. */
export interface Paint {
  readonly on: boolean;
  /** `text` (default: the state's name) in the state's color. */
  state(state: string, text?: string): string;
  /** A report result in its color. */
  result(result: CaseResult): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  bold(text: string): string;
  dim(text: string): string;
}

function sgr(on: boolean, code: string, text: string, reset = "39"): string {
  return on && text !== "" ? `\u001b[${code}m${text}\u001b[${reset}m` : text;
}

/** Colorizers that color when `on`. */
export function paint(on: boolean): Paint {
  return {
    on,
    state: (state, text = state) => (STATE_SGR[state] ? sgr(on, STATE_SGR[state]!, text) : text),
    result: (result) => sgr(on, STATE_SGR[result] ?? "39", result),
    red: (t) => sgr(on, "31", t),
    green: (t) => sgr(on, "32", t),
    yellow: (t) => sgr(on, "33", t),
    bold: (t) => sgr(on, "1", t, "22"),
    dim: (t) => sgr(on, "2", t, "22"),
  };
}

/** Colorizers for stdout, decided once per process. */
export function stdoutPaint(): Paint {
  return paint(colorEnabled());
}
