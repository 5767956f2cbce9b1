/**
 * This host's wall clock as the stores read it (docs/architecture.md "Clocks"):
 * `Date.now()`, shifted in tests by the seconds written in the file that
 * `SPOOLCTL_TEST_CLOCK_OFFSET_FILE` names (a stepped clock, as an NTP step
 * makes one, without touching the machine's). The file is read again at most
 * every 100 ms; a missing or unreadable file, or one that holds no number, is
 * no shift.
 */
import { readFileSync } from "node:fs";

/** How long a read of the offset file is used, milliseconds. */
const REREAD_MS = 100;

let cached = 0;
let readAt = -Infinity;

/** The test shift, seconds (0 without the knob). */
function testShiftSeconds(): number {
  const file = process.env.SPOOLCTL_TEST_CLOCK_OFFSET_FILE;
  if (!file) return 0;
  if (performance.now() - readAt < REREAD_MS) return cached;
  readAt = performance.now();
  try {
    const n = Number(readFileSync(file, "utf8").trim());
    cached = Number.isFinite(n) ? n : 0;
  } catch {
    cached = 0;
  }
  return cached;
}

/** This host's wall clock, epoch milliseconds (see the module comment). */
export function hostNowMs(): number {
  return Date.now() + testShiftSeconds() * 1000;
}
