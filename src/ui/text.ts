/** Small text helpers shared by the human renderers. */
import { DISK_LOSS_LIMIT } from "../ops/outcome.ts";
import { guardStdio, isTerminal } from "./stdio.ts";

/** Escapes control characters (as `\n`, `\t`, `\xNN`) so that one job stays on one line of human output. */
export function escapeControl(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => {
    if (c === "\n") return "\\n";
    if (c === "\t") return "\\t";
    if (c === "\r") return "\\r";
    return `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`;
  });
}

/**
 * A shell-like rendering of argv for display, one line, as bash reads it back:
 * bare words, single quotes where needed, and an argument holding control
 * characters in ANSI-C quotes (`$'a\nb'`: a real newline), so it never reads
 * like one holding a literal backslash and n (`'a\nb'`) (docs/architecture.md
 * "Adding a job").
 */
export function formatArgv(argv: string[]): string {
  return argv.map(shellWord).join(" ");
}

/** One argument as {@link formatArgv} shows it. */
function shellWord(a: string): string {
  if (a === "") return "''";
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a)) return a;
  if (!CONTROL.test(a)) return `'${a.replaceAll("'", `'\\''`)}'`;
  // $'…': backslash and quote escaped first, so that only control characters become escapes.
  return `$'${escapeControl(a.replaceAll("\\", "\\\\").replaceAll("'", "\\'"))}'`;
}

/** A C0 or C1 control character (what {@link escapeControl} escapes). */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * The tail of a stream as shown: the views already start it at a line's
 * start (src/ops/output.ts `tailView`); a tail that is all one partial line
 * (`partialFirstLine`) is led by "…". Returns the text and how many lines it has.
 */
export function tailAtLineStart(tail: string, partialFirstLine: boolean): { text: string; lines: number } {
  const text = partialFirstLine ? `…${tail}` : tail;
  const body = text.endsWith("\n") ? text.slice(0, -1) : text;
  return { text, lines: body === "" ? 0 : body.split("\n").length };
}

/** Longest command or error a table cell shows, characters; `show` and `--json` have the whole text. */
const CELL_MAX = 200;

/**
 * `text` cut to `max` characters with what was left out counted
 * (`… (+239800 chars)`), so that one huge command stays one readable row.
 */
export function clip(text: string, max = CELL_MAX): string {
  if (text.length <= max) return text;
  const keep = Math.max(1, max - 20);
  return `${text.slice(0, keep)}… (+${text.length - keep} chars)`;
}

/**
 * How much of a job's retry budget is spent, in words that add up
 * (docs/architecture.md "Retries and backoff": `failures` is the JSON
 * `attempts`, the failures charged to `--max-retries`): "1 of 3 retries
 * used", "retry budget 3 used up" once the job died of its fourth failure,
 * "no retries allowed" for a budget of 0.
 */
export function retryBudget(failures: number, maxRetries: number): string {
  if (failures > maxRetries) return maxRetries === 0 ? "no retries allowed" : `retry budget ${maxRetries} used up`;
  return `${failures} of ${maxRetries} retr${maxRetries === 1 ? "y" : "ies"} used`;
}

/** The same for worker crashes (`crashes`, charged to `--max-crashes`, null: unbounded). */
export function crashBudget(crashes: number, maxCrashes: number | null): string {
  if (maxCrashes === null) return `${crashes} crash requeue${crashes === 1 ? "" : "s"} (unlimited)`;
  if (crashes > maxCrashes)
    return maxCrashes === 0 ? "no crash requeues allowed" : `crash budget ${maxCrashes} used up`;
  return `${crashes} of ${maxCrashes} crash requeues used`;
}

/** The fields of a job that its attempt phrases read. */
type AttemptCounts = {
  state: string;
  attempts: number;
  crashes: number;
  max_retries: number;
  max_crashes: number | null;
};

/**
 * How much of a job's budgets is spent: "retry budget 3 used up", then worker
 * crashes only when there were some (or a budget for them), attempts lost to
 * a full disk (counted by the caller) only when there were some.
 */
function budgetsText(job: AttemptCounts, lostToDisk: number): string {
  const crashes =
    job.crashes > 0 || job.max_crashes !== null
      ? `; ${job.crashes} lost to a worker crash, ${crashBudget(job.crashes, job.max_crashes)}`
      : "";
  // Attempts lost to a full disk have their own budget (DISK_LOSS_LIMIT): said only when there were some.
  const diskSpent = lostToDisk >= DISK_LOSS_LIMIT;
  const disk =
    lostToDisk > 0
      ? `; ${lostToDisk} lost to a full disk${diskSpent ? `, the limit of ${DISK_LOSS_LIMIT}` : ` (at most ${DISK_LOSS_LIMIT})`}`
      : "";
  const budgetLeft =
    !diskSpent && job.attempts <= job.max_retries && (job.max_crashes === null || job.crashes <= job.max_crashes);
  // Dead with budget left: a command that can never start is not retried (docs/architecture.md "Execution").
  const retries =
    job.state === "dead" && budgetLeft
      ? "dead without a retry (the command cannot start)"
      : retryBudget(job.attempts, job.max_retries);
  return `${retries}${crashes}${disk}`;
}

/**
 * A job's attempts in one phrase: "4 attempts: 4 failed, retry budget 3 used up";
 * `job.attempts` is the failures charged to the retry budget (see {@link budgetsText}).
 */
export function attemptsText(job: AttemptCounts, started: number, lostToDisk = 0): string {
  return `${started} attempt${started === 1 ? "" : "s"}: ${job.attempts} failed, ${budgetsText(job, lostToDisk)}`;
}

/** Attempt states in the order `show` counts them, with their words. */
const ROW_WORDS: [string, string][] = [
  ["failed", "failed"],
  ["timed_out", "timed out"],
  ["abandoned", "abandoned"],
  ["canceled", "canceled"],
  ["succeeded", "succeeded"],
  ["running", "running"],
];

/**
 * A job's attempts counted as `show`'s attempts table lists them: "8 attempts:
 * 8 failed, retry budget 3 used up since the last retry". The counts are the
 * rows' states; the budget counts only the failures since the budget was last
 * renewed (`retry`, `rerun`), and says so when that is fewer than the rows
 * show. `lostToDisk`: rows lost to a full disk (not charged to the budget).
 */
export function attemptRowsText(job: AttemptCounts, rows: { state: string }[], lostToDisk = 0): string {
  const count = (st: string) => rows.filter((r) => r.state === st).length;
  const byState = ROW_WORDS.filter(([st]) => count(st) > 0).map(([st, word]) => `${count(st)} ${word}`);
  const charged = count("failed") + count("timed_out") - lostToDisk;
  const [retries, ...rest] = budgetsText(job, lostToDisk).split("; ");
  // Fewer failures charged than failed rows: a retry renewed the budget since (not "dead without a retry").
  const since = charged !== job.attempts && !retries!.startsWith("dead") ? " since the last retry" : "";
  const head = `${rows.length} attempt${rows.length === 1 ? "" : "s"}${byState.length ? `: ${byState.join(", ")}` : ""}`;
  return [`${head}, ${retries}${since}`, ...rest].join("; ");
}

/**
 * Epoch seconds → ISO-8601 in the user's time zone (`TZ`, else the system's),
 * with its offset: `2026-12-02T06:55:40.556+01:00`, `…Z` where the offset is
 * zero; "-" for null. `ms: false` drops the milliseconds. Human views only:
 * JSON keeps epoch seconds and UTC (docs/architecture.md "Clocks").
 */
export function iso(epochSeconds: number | null, ms = true): string {
  if (epochSeconds === null) return "-";
  const at = new Date(epochSeconds * 1000);
  const offset = -at.getTimezoneOffset(); // minutes east of UTC, daylight saving included
  const wall = new Date(at.getTime() + offset * 60_000).toISOString().slice(0, ms ? 23 : 19);
  if (offset === 0) return `${wall}Z`;
  const abs = Math.abs(offset);
  return `${wall}${offset > 0 ? "+" : "-"}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}

/**
 * Seconds → a short human duration: 0.4s, 12s, 3m05s, 2h10m, 3d4h. Rounded
 * once, to the shown unit, before it is split, so a carry moves into the next
 * unit (479.6 s is 8m00s, never 7m60s; 59.7 s is 1m00s).
 */
export function humanDuration(seconds: number): string {
  if (seconds < 9.95) return `${seconds.toFixed(1)}s`;
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  const m = Math.floor(s / 60); // whole minutes past the hour (and hours past the day) are shown, not rounded up
  if (m < 1440) return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(m / 1440)}d${Math.floor((m % 1440) / 60)}h`;
}

/** Terminal columns `text` takes as shown: SGR color codes take none, wide CJK and emoji 2 (Bun.stringWidth). */
function visibleLength(text: string): number {
  return Bun.stringWidth(text);
}

/**
 * The room of a one-line view on stdout: the terminal's columns less one (a
 * line that fills the last column wraps on some terminals), or Infinity off
 * a terminal, where nothing is cut (a pipe gets the whole text).
 */
export function lineRoom(stream?: { isTTY?: boolean; columns?: number }): number {
  // Off a terminal Node's stdout stream is never built (docs/architecture.md "The house"): a pipe gets everything.
  if (stream === undefined) {
    if (!isTerminal(1)) return Infinity;
    guardStdio();
    stream = process.stdout;
  }
  return stream.isTTY ? Math.max(20, (stream.columns || 80) - 1) : Infinity;
}

/**
 * `line` cut to at most `width` terminal columns with "…" (never inside a
 * grapheme), keeping its SGR color codes whole and resetting the color after
 * a cut: so a long command stays on one line of a table.
 */
export function clipLine(line: string, width: number): string {
  if (Bun.stringWidth(line) <= width) return line;
  let out = "";
  let used = 0;
  for (const part of line.split(/(\u001b\[[0-9;]*m)/)) {
    if (part.startsWith("\u001b[")) {
      out += part;
      continue;
    }
    for (const { segment } of new Intl.Segmenter().segment(part)) {
      const w = Bun.stringWidth(segment);
      if (used + w > width - 1) return `${out}…${line.includes("\u001b[") ? "\u001b[0m" : ""}`;
      out += segment;
      used += w;
    }
  }
  return out;
}

/** Terminal columns `text` takes (wide CJK and emoji count 2, combining marks 0). */
export function columns(text: string): number {
  return Bun.stringWidth(text);
}

/** `text` cut to at most `width` terminal columns, with "…" when cut, never inside a grapheme. */
export function clipColumns(text: string, width: number): string {
  if (Bun.stringWidth(text) <= width) return text;
  let out = "";
  let used = 0;
  for (const { segment } of new Intl.Segmenter().segment(text)) {
    const w = Bun.stringWidth(segment);
    if (used + w > width - 1) break;
    out += segment;
    used += w;
  }
  return `${out}…`;
}

/**
 * `text` broken at spaces into lines of at most `width` terminal columns (a
 * word longer than a line is cut), at most `maxLines` of them: the last one
 * ends with "…" when text was left out.
 */
export function wrapColumns(text: string, width: number, maxLines = Infinity): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    const joined = line === "" ? word : `${line} ${word}`;
    if (Bun.stringWidth(joined) <= width || line === "") {
      line = joined;
      continue;
    }
    lines.push(line);
    line = word;
  }
  lines.push(line);
  const kept = lines.slice(0, maxLines).map((l) => clipColumns(l, width));
  // The last line did not take the next word, so with the rest it overflows and gets its "…".
  if (lines.length > maxLines)
    kept[maxLines - 1] = clipColumns([lines[maxLines - 1], ...lines.slice(maxLines)].join(" "), width);
  return kept;
}

/** `text` clipped to exactly `width` columns: cut with "…", or padded with spaces (stable-width boxes). */
export function fitColumns(text: string, width: number): string {
  const clipped = clipColumns(text, width);
  return clipped + " ".repeat(Math.max(0, width - Bun.stringWidth(clipped)));
}

/** Aligns rows of cells into columns separated by two spaces (cells may carry SGR color codes). */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(visibleLength(h), ...rows.map((r) => visibleLength(r[i] ?? ""))));
  const pad = (c: string, width: number) => c + " ".repeat(Math.max(0, width - visibleLength(c)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : pad(c, widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

/**
 * The same command again with some flags replaced, for "more" hints: keeps the
 * user's filters (`--state dead …`) so the next page means the same query.
 * `--json` and `--db` are dropped: the caller puts the queue selection back
 * with the verb's `suggest` (src/commands/selection.ts), as in every hint.
 */
export function rerunCommand(
  verb: string,
  values: Record<string, string | boolean | string[]>,
  overrides: Record<string, string>,
): string {
  const parts = ["spoolctl", verb];
  for (const [name, value] of Object.entries({ ...values, ...overrides })) {
    if (name === "json" || name === "db" || value === false) continue;
    if (value === true) parts.push(`--${name}`);
    else for (const v of Array.isArray(value) ? value : [value]) parts.push(`--${name}`, formatArgv([v]));
  }
  return parts.join(" ");
}

/**
 * The line a `cancel` or `delete` adds for the dependents it closed because
 * they needed the job's success (docs/architecture.md "Dependencies"):
 * "\nClosed 2 jobs that needed it: 13, 14", or "" when `ids` is empty or absent.
 */
export function closedLine(ids: readonly number[] | undefined, it: "it" | "them"): string {
  return dependentsLine("Closed", ids, `that needed ${it}`);
}

/**
 * The line a `retry` or `rerun` adds for the dependents it revived
 * (docs/architecture.md "Dependencies"): "\nRevived 2 jobs that waited for it: 13, 14",
 * or "" when `ids` is empty or absent.
 */
export function revivedLine(ids: readonly number[] | undefined): string {
  return dependentsLine("Revived", ids, "that waited for it");
}

function dependentsLine(verb: string, ids: readonly number[] | undefined, which: string): string {
  if (!ids?.length) return "";
  // A count and the first ids: a chain of 99,999 closed by one delete is one line, not every id (--json has them all).
  return `\n${verb} ${ids.length === 1 ? "1 job" : `${ids.length} jobs`} ${which}: ${idList([...ids])}`;
}

/** Ids as a short list: `12, 11, 10 … (+27 more)`. */
export function idList(ids: number[], max = 8): string {
  return ids.slice(0, max).join(", ") + (ids.length > max ? ` … (+${ids.length - max} more)` : "");
}

/**
 * ", and closes 2 jobs that wait on it (5, 6): canceled, need deleted" for the
 * dependents a deletion of `deleting` jobs would close (docs/architecture.md
 * "Dependencies"), "" for none; at most 8 ids are listed.
 */
export function closesText(closes: readonly number[] | undefined, deleting: number): string {
  if (!closes?.length) return "";
  return `, and closes ${closes.length === 1 ? "1 job" : `${closes.length} jobs`} that wait${closes.length === 1 ? "s" : ""} on ${deleting === 1 ? "it" : "them"} (${idList([...closes])}): canceled, need deleted`;
}
