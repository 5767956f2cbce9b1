/**
 * Parsing of user-supplied values (flags and NDJSON specs): integers, numbers,
 * durations, timestamps, lane names and K=V pairs. Every rejection names the
 * flag, the value and what is accepted (SPEC §6).
 */
import { invalidValue } from "../contract/errors.ts";
import { LIMITS } from "./limits.ts";

/** An integer within [min, max]. */
export function parseInteger(flag: string, raw: string, min: number, max: number): number {
  const text = raw.trim();
  if (!/^[+-]?\d+$/.test(text)) throw invalidValue(flag, raw, `an integer from ${min} to ${max}`);
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw invalidValue(flag, raw, `an integer from ${min} to ${max}`);
  return n;
}

/** A finite decimal number within [min, max]. */
export function parseNumber(flag: string, raw: string, min: number, max: number): number {
  const text = raw.trim();
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw invalidValue(flag, raw, `a number from ${min} to ${max}`);
  const n = Number(text);
  if (!Number.isFinite(n) || n < min || n > max) throw invalidValue(flag, raw, `a number from ${min} to ${max}`);
  return n;
}

const UNIT_SECONDS: Record<string, number> = { "": 1, s: 1, m: 60, h: 3600, d: 86400 };

/** A duration `<number>[s|m|h|d]` or bare seconds, in seconds, within [min, max]. */
export function parseDuration(flag: string, raw: string, min: number, max: number): number {
  const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*([smhd]?)\s*$/.exec(raw);
  const accepted = `a duration such as 30, 90s, 5m, 2h or 1d, from ${min}s to ${max}s`;
  if (!m) throw invalidValue(flag, raw, accepted);
  const seconds = Number(m[1]) * UNIT_SECONDS[m[2]!]!;
  if (!Number.isFinite(seconds) || seconds < min || seconds > max) throw invalidValue(flag, raw, accepted);
  return seconds;
}

/**
 * A point in time, epoch seconds (float). Accepts epoch seconds or ISO-8601.
 * A local time (no zone) that does not exist or is ambiguous in the local zone
 * (a DST gap or overlap) is rejected (SPEC §4).
 */
export function parseTimestamp(flag: string, raw: string): number {
  const accepted = "epoch seconds or ISO-8601 such as 2026-12-01T09:00:00Z";
  const text = raw.trim();
  if (/^\d+(\.\d+)?$/.test(text)) {
    const n = Number(text);
    if (!Number.isFinite(n)) throw invalidValue(flag, raw, accepted);
    return n;
  }
  const iso = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/.exec(text);
  if (!iso) throw invalidValue(flag, raw, accepted);
  const [, y, mo, d, h = "00", mi = "00", s = "00", frac = "", zone] = iso;
  const parts = [Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)] as const;
  if (parts[1] > 11 || parts[2] < 1 || parts[2] > 31 || parts[3] > 23 || parts[4] > 59 || parts[5] > 59) {
    throw invalidValue(flag, raw, accepted);
  }
  const ms = frac ? Math.round(Number(frac) * 1000) : 0;
  if (zone) {
    const utc = Date.UTC(...parts, ms);
    const check = new Date(utc);
    if (check.getUTCDate() !== parts[2]) throw invalidValue(flag, raw, accepted);
    const offset = zone === "Z" ? 0 : (zone[0] === "-" ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(-2)));
    return (utc - offset * 60000) / 1000;
  }
  // Local wall time: find every instant that shows this wall time locally.
  const wallUtc = Date.UTC(...parts, ms);
  const matches = new Set<number>();
  for (const guessOffsetMin of [-14 * 60, -12 * 60, -6 * 60, 0, 6 * 60, 12 * 60, 14 * 60]) {
    for (let delta = -120; delta <= 120; delta += 30) {
      const candidate = wallUtc - (guessOffsetMin + delta) * 60000;
      const local = new Date(candidate);
      if (
        local.getFullYear() === parts[0] && local.getMonth() === parts[1] && local.getDate() === parts[2] &&
        local.getHours() === parts[3] && local.getMinutes() === parts[4] && local.getSeconds() === parts[5]
      ) matches.add(candidate);
    }
  }
  if (matches.size === 0) {
    throw invalidValue(flag, raw, "a local time that exists (this one falls in a daylight-saving gap); add a zone such as Z or +01:00");
  }
  if (matches.size > 1) {
    throw invalidValue(flag, raw, "an unambiguous local time (this one occurs twice at a daylight-saving change); add a zone such as Z or +01:00");
  }
  return [...matches][0]! / 1000;
}

/** A lane name (SPEC §4): `^[A-Za-z0-9][A-Za-z0-9._-]*$`, 1–64 characters. */
export function parseLane(flag: string, raw: string): string {
  const { pattern, maxLength } = LIMITS.queue;
  if (raw.length > maxLength || !pattern.test(raw)) {
    throw invalidValue(flag, raw, `a lane name of 1-${maxLength} characters: letters, digits, '.', '_' or '-', starting with a letter or digit`);
  }
  return raw;
}

/** `K=V` pairs into an object; a later key wins. Keys must be non-empty. */
export function parsePairs(flag: string, raws: string[], keyPattern: RegExp, keyRule: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of raws) {
    const eq = raw.indexOf("=");
    const key = eq === -1 ? "" : raw.slice(0, eq);
    if (eq <= 0 || !keyPattern.test(key)) throw invalidValue(flag, raw, `KEY=VALUE where KEY is ${keyRule}`);
    // An own property even for "__proto__" (plain assignment would set the prototype and drop the pair).
    Object.defineProperty(out, key, { value: raw.slice(eq + 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
