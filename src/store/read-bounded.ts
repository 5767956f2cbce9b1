/**
 * Reading a user-named file (or stdin) with a size cap. `config validate
 * /dev/zero` or `add --from -` fed by an endless pipe must fail with a clear
 * error instead of growing memory until the process dies (docs/contract.md
 * "The envelope": no input produces a stack trace or a hang).
 */
import { closeSync, openSync, readSync } from "node:fs";

/** What {@link readBounded} returns: the bytes, or `tooLarge` when the source holds more than the cap. */
export type BoundedRead = { tooLarge: false; bytes: Buffer } | { tooLarge: true };

/** `1 MiB`, `64 MiB`, `512 bytes`: a cap as messages name it. */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/**
 * Reads `source` (a path, or a file descriptor such as 0 for stdin) to its end,
 * but never more than `maxBytes + 1` bytes: one byte past the cap proves it is
 * too large, so memory stays bounded whatever the source is (a device, a FIFO).
 * Errors of opening or reading (ENOENT, EISDIR, EACCES) are thrown as they are.
 */
export function readBounded(source: string | number, maxBytes: number): BoundedRead {
  const fd = typeof source === "number" ? source : openSync(source, "r");
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, maxBytes + 1 - total));
      let n: number;
      try {
        n = readSync(fd, chunk, 0, chunk.length, null);
      } catch (error) {
        // A non-blocking stdin (a pipe another runtime left in O_NONBLOCK) has no data yet: wait for it.
        if ((error as { code?: unknown })?.code === "EAGAIN") {
          Bun.sleepSync(5);
          continue;
        }
        throw error;
      }
      if (n === 0) return { tooLarge: false, bytes: Buffer.concat(chunks, total) };
      chunks.push(chunk.subarray(0, n));
      total += n;
      if (total > maxBytes) return { tooLarge: true };
    }
  } finally {
    if (typeof source !== "number") closeSync(fd);
  }
}
