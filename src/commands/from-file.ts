/** The text of `add --from FILE|-`: bounded, UTF-8, every failure a clear `INVALID_INPUT`. */
import { SpoolError } from "../contract/errors.ts";
import { LIMITS } from "../model/limits.ts";
import { formatBytes, readBounded } from "../store/read-bounded.ts";

/**
 * Reads `source` (a path, or `-` for stdin) as UTF-8, at most
 * `LIMITS.from_file.maxBytes` (README "Adding a job"). Raises `INVALID_INPUT`
 * for an unreadable file, one too large, or bytes that are not UTF-8.
 */
export function readFrom(source: string): string {
  const max = LIMITS.from_file.maxBytes;
  let read: ReturnType<typeof readBounded>;
  try {
    read = readBounded(source === "-" ? 0 : source, max);
  } catch (error) {
    throw new SpoolError("INVALID_INPUT", `cannot read --from ${source}: ${(error as Error).message}`, {
      remediation: "give a readable file of JSON lines, or - for stdin",
    });
  }
  if (read.tooLarge) {
    throw new SpoolError(
      "INVALID_INPUT",
      `--from ${source} holds more than ${formatBytes(max)}, the limit for one batch`,
      {
        remediation: `split the jobs into batches of at most ${formatBytes(max)} and add each with --from`,
        detail: { flag: "--from", value: source, max_bytes: max },
      },
    );
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(read.bytes);
  } catch {
    throw new SpoolError(
      "INVALID_INPUT",
      `--from ${source} is not valid UTF-8: commands are stored as UTF-8 text; nothing was added`,
      {
        remediation:
          'write the file as UTF-8; bytes that are not text can be made by the job itself: {"command": "printf \'\\377\'"}',
      },
    );
  }
}
