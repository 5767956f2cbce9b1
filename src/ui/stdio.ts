/**
 * The CLI's standard streams without Node's stream classes on the path of a
 * simple verb: touching `process.stdout` (even `.isTTY` or `.on`) builds a
 * Node `WriteStream` and loads the stream stack, ~7-25 ms of a ~20 ms verb
 * (docs/benchmarks.md "CLI start-up"). Here output goes to the file descriptor
 * with `writeSync`, and a terminal is detected with `fstat` first.
 */
import { fstatSync, writeSync } from "node:fs";

let guarded = false;

/**
 * Installs the CLI's stream error handlers once: an `EPIPE` on stdout (the
 * reader went away, e.g. `| head -1`) ends the process with 0; errors on
 * stderr are dropped, so a worker outlives the reader of its log. Call it
 * before writing through `process.stdout`/`process.stderr`; it builds both
 * streams.
 */
export function guardStdio(): void {
  if (guarded) return;
  guarded = true;
  process.stdout.on("error", () => process.exit(0));
  process.stderr.on("error", () => {});
}

const ttyCache = new Map<number, boolean>();

/**
 * Whether file descriptor `fd` is a terminal (what `isatty(3)` says), cached
 * per process. Files, pipes and sockets are told apart by `fstat` alone, and
 * so are Linux memory devices such as `/dev/null` (major number 1); only
 * another character device asks `node:tty`, which loads the stream stack.
 */
export function isTerminal(fd: 0 | 1 | 2): boolean {
  const known = ttyCache.get(fd);
  if (known !== undefined) return known;
  let answer: boolean;
  try {
    const st = fstatSync(fd);
    if (!st.isCharacterDevice()) answer = false;
    else if (process.platform === "linux" && ((Number(st.rdev) >> 8) & 0xfff) === 1) answer = false;
    else answer = (require("node:tty") as typeof import("node:tty")).isatty(fd);
  } catch {
    answer = false; // closed descriptor
  }
  ttyCache.set(fd, answer);
  return answer;
}

let outSink: ((text: string) => void) | null = null;

/**
 * Sends what {@link writeOut} writes to `sink` instead of file descriptor 1,
 * or back to it with `null`. For callers that run `main()` inside their own
 * process and collect each run's output (the in-process fuzz driver): a
 * `writeSync(1)` cannot be intercepted by replacing `process.stdout.write`.
 */
export function redirectOut(sink: ((text: string) => void) | null): void {
  outSink = sink;
}

/**
 * Writes `text` to stdout synchronously with `writeSync(1)` (or to the sink
 * given to {@link redirectOut}). A full
 * non-blocking pipe (`EAGAIN`) hands the rest to `process.stdout`, which
 * queues it; `EPIPE` ends the process with 0, as {@link guardStdio} does.
 */
export function writeOut(text: string): void {
  if (outSink) {
    outSink(text);
    return;
  }
  let bytes = Buffer.from(text);
  while (bytes.length > 0) {
    try {
      const n = writeSync(1, bytes);
      bytes = bytes.subarray(n);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EPIPE") process.exit(0);
      if (code !== "EAGAIN") throw error;
      guardStdio();
      process.stdout.write(bytes);
      return;
    }
  }
}
