/**
 * The errors both drivers raise when an add names needs it cannot have
 * (docs/architecture.md "Dependencies"), so that SQLite and PostgreSQL say the same.
 */
import { SpoolError } from "../contract/errors.ts";

/** `INVALID_INPUT` for a need that names no job. */
export function unknownNeed(needId: number): SpoolError {
  return new SpoolError("INVALID_INPUT", `--needs: no job with id ${needId}; nothing was added`, {
    remediation: "name jobs that exist (spoolctl list shows their ids), by id, idempotency key or last",
    detail: { need: needId },
  });
}

/** `INVALID_INPUT` for a need that already failed (dead or canceled), under policy `success`. */
export function failedNeed(needId: number, state: string): SpoolError {
  return new SpoolError(
    "INVALID_INPUT",
    `--needs: job ${needId} is ${state}, so a job that needs its success would never run; nothing was added`,
    {
      remediation: `retry job ${needId} first (spoolctl retry ${needId}), or add with --needs-policy done to run once it ended however it ended`,
      detail: { need: needId, state },
    },
  );
}
