/**
 * Parsing of user-supplied values (flags and NDJSON specs): integers, numbers,
 * durations, timestamps, lane names and K=V pairs. Every rejection names the
 * flag, the value and what is accepted (docs/contract.md "Error objects and warnings").
 */
import { invalidValue, SpoolError } from "../contract/errors.ts";
import { LIMITS, NO_TIMEOUT } from "../model/limits.ts";

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
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text))
    throw invalidValue(flag, raw, `a number from ${min} to ${max}`);
  const n = Number(text);
  if (!Number.isFinite(n) || n < min || n > max) throw invalidValue(flag, raw, `a number from ${min} to ${max}`);
  return n;
}

const UNIT_SECONDS: Record<string, number> = { "": 1, s: 1, m: 60, h: 3600, d: 86400 };

/**
 * A number of seconds in the largest unit that writes it exactly, in the
 * grammar {@link parseDuration} reads: `30d`, `1h`, `90s`, `0.001s`. Limits in
 * messages read this way, never as `315360000s`.
 */
export function durationText(seconds: number): string {
  for (const [unit, size] of [
    ["d", 86400],
    ["h", 3600],
    ["m", 60],
  ] as const) {
    if (seconds >= size && Number.isInteger(seconds / size)) return `${seconds / size}${unit}`;
  }
  return `${seconds}s`;
}

/**
 * A count with its noun, singular for one: `1 attempt`, `3 attempts`, `0 jobs`
 * (`many` when the plural is not the noun plus "s": `2 processes`).
 */
export function counted(n: number, noun: string, many = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : many}`;
}

/** A duration `<number>[s|m|h|d]` or bare seconds, in seconds, within [min, max]. */
export function parseDuration(flag: string, raw: string, min: number, max: number, orNone = false): number {
  if (orNone && /^\s*none\s*$/i.test(raw)) return NO_TIMEOUT;
  const m = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*([smhd]?)\s*$/.exec(raw);
  const accepted = `a duration such as 30, 90s, 5m, 2h or 1d, from ${durationText(min)} to ${durationText(max)}${orNone ? ", or none (no time limit)" : ""}`;
  if (!m) throw invalidValue(flag, raw, accepted);
  const seconds = Number(m[1]) * UNIT_SECONDS[m[2]!]!;
  if (!Number.isFinite(seconds) || seconds < min || seconds > max) throw invalidValue(flag, raw, accepted);
  return seconds;
}

/**
 * Parses a job timeout as typed (`add --timeout`, `retry --timeout`, `config
 * set timeout`, the `timeout` of `add --from` and `enqueue`): `none` (any
 * case) is no time limit, {@link NO_TIMEOUT} (0); anything else a duration
 * within `LIMITS.timeout_seconds`, in seconds. Raises `INVALID_INPUT` naming
 * `flag` and both spellings.
 */
export function parseTimeout(flag: string, raw: string): number {
  return parseDuration(flag, raw, LIMITS.timeout_seconds.min, LIMITS.timeout_seconds.max, true);
}

/** A job timeout as the views print it: `300s`, or `none` for {@link NO_TIMEOUT}. */
export function timeoutText(seconds: number): string {
  return seconds === NO_TIMEOUT ? "none" : `${seconds}s`;
}

/** Epoch milliseconds of a UTC calendar time; years 0-99 are taken literally (Date.UTC maps them to 19xx). */
function utcMs(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number): number {
  const date = new Date(Date.UTC(2000, 0, 1, h, mi, s, ms));
  date.setUTCFullYear(y, mo, d);
  return date.getTime();
}

/** The local zone's offset from UTC at instant `t` (ms), exact to the millisecond (old zones have odd seconds). */
function localOffsetMs(t: number): number {
  const d = new Date(t);
  return (
    utcMs(
      d.getFullYear(),
      d.getMonth(),
      d.getDate(),
      d.getHours(),
      d.getMinutes(),
      d.getSeconds(),
      d.getMilliseconds(),
    ) - t
  );
}

/** Largest epoch second a `Date` can show (±8.64e15 ms); beyond it every renderer prints "Invalid Date". */
const MAX_EPOCH_SECONDS = 8.64e12;

/**
 * A point in time, epoch seconds (float). Accepts epoch seconds or ISO-8601.
 * A local time (no zone) that does not exist or is ambiguous in the local zone
 * (a DST gap or overlap) is rejected (docs/architecture.md "Adding a job"); so are calendar dates that do
 * not exist (February 30) and zone offsets beyond ±14:00 or with minutes ≥ 60.
 * `latest` bounds the result (epoch seconds, with the rule for the message);
 * without it, the latest time a `Date` can show.
 */
export function parseTimestamp(flag: string, raw: string, latest?: { at: number; rule: string }): number {
  const limit = latest ?? { at: MAX_EPOCH_SECONDS, rule: "a time before the year 275760" };
  const seconds = parseTimestampUnbounded(flag, raw);
  if (!(seconds <= limit.at)) throw invalidValue(flag, raw, limit.rule);
  return seconds;
}

function parseTimestampUnbounded(flag: string, raw: string): number {
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
  if (parts[1] > 11 || parts[2] < 1 || parts[3] > 23 || parts[4] > 59 || parts[5] > 59) {
    throw invalidValue(flag, raw, accepted);
  }
  const ms = frac ? Math.round(Number(frac) * 1000) : 0;
  // Checked before any zone logic, so that February 30 is called an invalid date, not a daylight-saving gap.
  const wallUtc = utcMs(...parts, ms);
  if (new Date(wallUtc).getUTCDate() !== parts[2]) {
    throw new SpoolError(
      "INVALID_INPUT",
      `invalid value for ${flag}: ${JSON.stringify(raw)} is not a valid date (${y}-${mo} has no day ${d})`,
      {
        remediation: `write a date that exists; ${accepted}`,
        detail: { flag, value: raw, accepted },
      },
    );
  }
  if (zone) {
    const hours = zone === "Z" ? 0 : Number(zone.slice(1, 3));
    const minutes = zone === "Z" ? 0 : Number(zone.slice(-2));
    if (hours > 14 || minutes > 59 || hours * 60 + minutes > 14 * 60)
      throw invalidValue(flag, raw, `a zone offset from -14:00 to +14:00 (minutes below 60); ${accepted}`);
    const offset = (zone[0] === "-" ? -1 : 1) * (hours * 60 + minutes);
    return (wallUtc - offset * 60000) / 1000;
  }
  // Local wall time: the instants t with t + offset(t) = wall. The offsets that can matter are those the zone
  // uses within ±15 h of the wall time (offsets never exceed 14 h); sampling every 15 minutes finds each of
  // them (no zone keeps an offset for less than that), and each candidate is then checked exactly.
  const offsets = new Set<number>();
  for (let probe = wallUtc - 15 * 3600_000; probe <= wallUtc + 15 * 3600_000; probe += 15 * 60_000)
    offsets.add(localOffsetMs(probe));
  const matches = new Set<number>();
  for (const offset of offsets) {
    const candidate = wallUtc - offset;
    if (localOffsetMs(candidate) === offset) matches.add(candidate);
  }
  if (matches.size === 0) {
    throw invalidValue(
      flag,
      raw,
      "a local time that exists (this one falls in a daylight-saving gap); add a zone such as Z or +01:00",
    );
  }
  if (matches.size > 1) {
    throw invalidValue(
      flag,
      raw,
      "an unambiguous local time (this one occurs twice at a daylight-saving change); add a zone such as Z or +01:00",
    );
  }
  return [...matches][0]! / 1000;
}

/** A lane name (docs/architecture.md "Lanes and slots"): `^[A-Za-z0-9][A-Za-z0-9._-]*$`, 1–64 characters. */
export function parseLane(flag: string, raw: string): string {
  const { pattern, maxLength } = LIMITS.queue;
  if (raw.length > maxLength || !pattern.test(raw)) {
    throw invalidValue(
      flag,
      raw,
      `a lane name of 1-${maxLength} characters: letters, digits, '.', '_' or '-', starting with a letter or digit`,
    );
  }
  return raw;
}

/**
 * `K=V` pairs into an object; a later key wins. Keys must match `keyPattern`.
 * A refusal names the flag and the key, never the value (an `--env` value is
 * often a secret, and errors end up in CI logs: docs/contract.md "Error
 * objects and warnings"): `detail` is `{flag, name, accepted}`, `name` null
 * for an entry without `=` (which may be all value).
 */
export function parsePairs(flag: string, raws: string[], keyPattern: RegExp, keyRule: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [index, raw] of raws.entries()) {
    const eq = raw.indexOf("=");
    const key = eq === -1 ? "" : raw.slice(0, eq);
    if (eq <= 0 || !keyPattern.test(key)) {
      const accepted = `KEY=VALUE where KEY is ${keyRule}`;
      const what =
        eq === -1
          ? `entry ${index + 1} has no "=" (not shown: it may hold a secret)`
          : eq === 0
            ? `entry ${index + 1} has an empty name`
            : `the name ${JSON.stringify(key)} is not accepted`;
      throw new SpoolError("INVALID_INPUT", `invalid value for ${flag}: ${what} (expected ${accepted})`, {
        detail: { flag, name: eq > 0 ? key : null, accepted },
      });
    }
    // An own property even for "__proto__" (plain assignment would set the prototype and drop the pair).
    Object.defineProperty(out, key, { value: raw.slice(eq + 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * A JSON parser's error message without the text it quotes (Bun names the
 * offending token, which may be part of a secret value): for `not valid JSON
 * (…)` refusals of `add --from` and `enqueue`.
 */
export function jsonErrorReason(error: unknown): string {
  return String((error as Error)?.message ?? error)
    .replace(/\s*"(?:[^"\\]|\\.)*"/g, "")
    .replace(/\s*'[^']*'/g, "");
}

/**
 * Where a parsed JSON value holds a string (or key) with a lone surrogate
 * (JSON allows the escape `\udcff`; it is no character, and stored as UTF-8
 * it would be replaced or refused later): `field "argv"`, `a key of "env"`;
 * null when there is none. The string itself is never named (a secret may
 * sit in env). Used by `add --from` and `enqueue` (docs/architecture.md "Adding a job").
 */
export function loneSurrogateAt(spec: object): string | null {
  const bad = (v: unknown): boolean =>
    typeof v === "string"
      ? !v.isWellFormed()
      : Array.isArray(v)
        ? v.some(bad)
        : v !== null && typeof v === "object"
          ? Object.entries(v).some(([k, x]) => !k.isWellFormed() || bad(x))
          : false;
  for (const [key, value] of Object.entries(spec)) {
    if (!key.isWellFormed()) return "a field name";
    if (bad(value)) return `field ${JSON.stringify(key)}`;
  }
  return null;
}

/**
 * `text` split at each `sep` outside square brackets, so a list of job names
 * keeps a matrix cell's name whole (`build,test[os=linux,node=20]` is two;
 * docs/architecture.md "Matrix").
 */
export function splitList(text: string, sep: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "[") depth++;
    else if (ch === "]" && depth > 0) depth--;
    else if (depth === 0 && text.startsWith(sep, i)) {
      out.push(text.slice(start, i));
      start = i + sep.length;
      i += sep.length - 1;
    }
  }
  out.push(text.slice(start));
  return out;
}
