/**
 * When a schedule's slots come and what a pass does with the due ones (docs/architecture.md
 * "Recurring jobs"): pure functions, no I/O. Cron expressions are read by croner (a kept
 * library: 5 or 6 fields, ranges, steps, names, `L`, `#`), zones checked and rendered with
 * `Temporal`; neither is written here. Times are epoch seconds.
 */
import type { Cron } from "croner";
import { invalidValue, SpoolError } from "../contract/errors.ts";
import type { Overlap, Schedule, SlotDecision } from "../model/recurring.ts";
import { parseDuration } from "./values.ts";

/** When a schedule fires: a cron expression in a zone, or a plain interval. */
export type SlotRule = { cron: string; tz: string | null } | { every: number };

/** A catch-up policy: what a pass does with slots that came while no pass ran. */
export type CatchUp = { kind: "none" } | { kind: "last" } | { kind: "all"; max: number };

/** Longest `--every`: a year, seconds. */
const MAX_EVERY = 365 * 86400;
/** Most slots `all:N` may fire at once. */
const MAX_CATCH_UP = 1000;
/** Most due slots a pass walks one by one; beyond, the rest are counted as missed without being listed. */
const MAX_WALK = 10_000;

/**
 * The zone `tz` as its canonical IANA id (`europe/berlin` → `Europe/Berlin`), checked with
 * Temporal. Raises `INVALID_INPUT` naming the zone and why.
 */
export function parseZone(tz: string): string {
  // Temporal takes a bare offset (+02:00) as a zone; it never follows daylight saving time, so
  // a schedule meant for a place would drift an hour twice a year.
  if (/^[+-−]\d/.test(tz.trim()))
    throw new SpoolError("INVALID_INPUT", `--tz ${JSON.stringify(tz)} is a fixed UTC offset, not a time zone`, {
      remediation:
        "give an IANA zone name such as Europe/Berlin (it follows daylight saving time), " +
        "or Etc/GMT-2 for a fixed +02:00 all year (the Etc/ sign is inverted)",
      detail: { flag: "--tz", value: tz },
    });
  try {
    return Temporal.Now.zonedDateTimeISO(tz).timeZoneId;
  } catch (error) {
    throw new SpoolError(
      "INVALID_INPUT",
      `--tz ${JSON.stringify(tz)} is not a time zone: ${(error as Error).message}`,
      {
        remediation: "give an IANA zone name such as Europe/Berlin, America/New_York or UTC",
        detail: { flag: "--tz", value: tz },
      },
    );
  }
}

/**
 * A croner job for `cron` in `tz` that only computes (never runs anything). `strict`: 5 or 6
 * fields only, as `schedule add` accepts; a stored rule is read as it was stored.
 */
function cronOf(cron: string, tz: string | null, strict = false): Cron {
  // Loaded on first use: every worker loads this module, and most queues have no cron schedule (~1 MiB RSS).
  const { Cron: CronJob } = require("croner") as typeof import("croner");
  return new CronJob(cron, { timezone: tz ?? "UTC", paused: true, mode: strict ? "5-or-6-parts" : "auto" });
}

/**
 * Checks a cron expression in zone `tz` (already canonical): it must parse and have a next
 * slot. Raises `INVALID_INPUT` with croner's reason.
 */
export function parseCron(cron: string, tz: string | null): string {
  let next: Date | null;
  try {
    next = cronOf(cron, tz, true).nextRun(new Date());
  } catch (error) {
    throw invalidValue(
      "--cron",
      cron,
      `a cron expression (minute hour day month weekday): ${(error as Error).message}`,
    );
  }
  if (next === null) throw invalidValue("--cron", cron, "a cron expression that ever fires again");
  return cron.trim();
}

/** `--every DURATION` in seconds (1s to a year). Raises `INVALID_INPUT`. */
export function parseEvery(raw: string): number {
  return parseDuration("--every", raw, 1, MAX_EVERY);
}

/** `--catch-up none|last|all:N`. Raises `INVALID_INPUT`. */
export function parseCatchUp(raw: string): CatchUp {
  if (raw === "none" || raw === "last") return { kind: raw };
  const m = /^all:(\d+)$/.exec(raw);
  const n = m ? Number(m[1]) : Number.NaN;
  if (!(n >= 1 && n <= MAX_CATCH_UP))
    throw invalidValue("--catch-up", raw, `none, last, or all:N with N from 1 to ${MAX_CATCH_UP}`);
  return { kind: "all", max: n };
}

/** A catch-up policy as stored and shown. */
export function catchUpText(c: CatchUp): string {
  return c.kind === "all" ? `all:${c.max}` : c.kind;
}

/** `--overlap skip|queue|allow`. Raises `INVALID_INPUT`. */
export function parseOverlap(raw: string): Overlap {
  if (raw === "skip" || raw === "queue" || raw === "allow") return raw;
  throw invalidValue("--overlap", raw, "skip, queue or allow");
}

/** A stored schedule's rule. */
export function ruleOf(s: Pick<Schedule, "cron" | "every_seconds" | "tz">): SlotRule {
  return s.cron !== null ? { cron: s.cron, tz: s.tz } : { every: s.every_seconds! };
}

/**
 * The first slot strictly after `after` (epoch seconds). An `--every` slot is a whole multiple
 * of the interval since the epoch, so every host computes the same slots; a cron slot is
 * croner's next run in the rule's zone (a wall time skipped by a DST change fires when the
 * clocks resume, a repeated one fires once; an hourly or finer rule fires in both hours).
 */
export function nextSlotAfter(rule: SlotRule, after: number): number {
  if ("every" in rule) return (Math.floor(after / rule.every + 1e-9) + 1) * rule.every;
  const job = cronOf(rule.cron, rule.tz);
  const from = Math.floor(after);
  const next = croned(job, from);
  if (rule.tz === null || next === Number.POSITIVE_INFINITY || !keepsItsTimesOnce(rule.cron)) return next;
  return acrossChanges({ cron: rule.cron, tz: rule.tz }, job, from, next);
}

/** croner's next run of `job` strictly after `after` (whole epoch seconds); a rule that stops (a past year) never comes due. */
function croned(job: Cron, after: number): number {
  const next = job.nextRun(new Date(after * 1000));
  return next === null ? Number.POSITIVE_INFINITY : next.getTime() / 1000;
}

/**
 * Whether `cron` names wall times croner does not keep to the DST rule of README "Recurring
 * jobs" by itself:
 * croner fires a fixed time (one second, minute and hour) once and when the clocks resume, and
 * every time of a rule of every hour in both repeated hours (as the rule says); but a rule of
 * several times at fixed hours (`0,30 2 * * *`, `0,20,40 2 * * *`, `30 1-3 * * *`) it fires twice in
 * a repeated hour and not at all in a skipped one.
 */
function keepsItsTimesOnce(cron: string): boolean {
  const { CronPattern } = require("croner") as typeof import("croner");
  const pattern = new CronPattern(cron, undefined, { mode: "auto" });
  return !pattern.isFixedTime && !pattern.hour.every(Boolean);
}

/**
 * The next slot of a rule that keeps its times once ({@link keepsItsTimesOnce}) after `after`,
 * croner's being `next`: a DST gap between them whose skipped wall times hold one of the rule's
 * fires when the clocks resume; a wall time repeated by a DST overlap fires only the first time.
 */
function acrossChanges(rule: { cron: string; tz: string }, job: Cron, after: number, next: number): number {
  let from = after;
  let n = next;
  for (let guard = 0; guard < 100 && n !== Number.POSITIVE_INFINITY; guard++) {
    const resumed = gapResumption(rule, from, n);
    if (resumed !== null) return resumed;
    const zoned = Temporal.Instant.fromEpochMilliseconds(n * 1000).toZonedDateTimeISO(rule.tz);
    const first = zoned.toPlainDateTime().toZonedDateTime(rule.tz, { disambiguation: "earlier" });
    if (first.epochMilliseconds === zoned.epochMilliseconds) return n;
    from = n; // the second time of a repeated wall time: it fired the first time
    n = croned(job, n);
  }
  return n;
}

/**
 * The first DST gap of `rule.tz` strictly after `after` and before `before` (epoch seconds)
 * whose skipped wall times hold a time of the rule: the instant the clocks resumed; else null.
 * The skipped wall times are read on the offset before the gap, where they exist.
 */
function gapResumption(rule: { cron: string; tz: string }, after: number, before: number): number | null {
  const { Cron: CronJob } = require("croner") as typeof import("croner");
  let at = Temporal.Instant.fromEpochMilliseconds(after * 1000).toZonedDateTimeISO(rule.tz);
  for (let guard = 0; guard < 100; guard++) {
    const change = at.getTimeZoneTransition("next");
    if (change === null || change.epochMilliseconds >= before * 1000) return null;
    const was = change.subtract({ nanoseconds: 1 }).offsetNanoseconds;
    const shift = (change.offsetNanoseconds - was) / 1e9;
    if (shift > 0) {
      const resumed = change.epochMilliseconds / 1000;
      const onOldClock = new CronJob(rule.cron, { utcOffset: was / 60e9, paused: true, mode: "auto" });
      const skipped = onOldClock.nextRun(new Date((resumed - 1) * 1000));
      if (skipped !== null && skipped.getTime() / 1000 < resumed + shift) return resumed;
    }
    at = change;
  }
  return null;
}

/** The newest slot at or before `t` (epoch seconds). */
function latestSlotBy(rule: SlotRule, t: number): number {
  if ("every" in rule) return Math.floor(t / rule.every + 1e-9) * rule.every;
  const [prev] = cronOf(rule.cron, rule.tz).previousRuns(1, new Date(Math.floor(t) * 1000 + 1000));
  return prev === undefined ? t : prev.getTime() / 1000;
}

/**
 * How late a slot may be fired and still count as on time under `--catch-up none`: half the
 * time to the following slot, at least 2 s and at most 60 s.
 */
function onTimeSeconds(rule: SlotRule, slot: number): number {
  return Math.min(60, Math.max(2, (nextSlotAfter(rule, slot) - slot) / 2));
}

/**
 * The due-slot decision for one schedule at `now` (docs/architecture.md "Recurring jobs"):
 * its due slots are `next_slot` and every later one up to `now`. The catch-up policy picks
 * which fire (`last`: the newest; `all:N`: the newest N; `none`: the newest only if on time,
 * {@link onTimeSeconds}); the rest are missed. When the previous job is still queued or
 * running, `--overlap skip` records the picked slots as skipped, `queue` returns null (the
 * slot waits for that job to end), `allow` fires them anyway.
 */
export function planSlots(s: Schedule, now: number, lastJobActive: boolean): SlotDecision | null {
  const rule = ruleOf(s);
  const due: number[] = [];
  let next = s.next_slot;
  while (next <= now && due.length < MAX_WALK) {
    due.push(next);
    next = nextSlotAfter(rule, next);
  }
  let uncounted = 0;
  if (next <= now) {
    // A long outage of a fine-grained schedule: jump to the newest due slot; the ones between are
    // counted (an interval rule) or left uncounted (a cron rule), never walked one by one.
    const latest = latestSlotBy(rule, now);
    if ("every" in rule) uncounted = Math.max(0, Math.round((latest - next) / rule.every));
    if (latest > due[due.length - 1]!) due.push(latest);
    next = nextSlotAfter(rule, now);
  }
  if (due.length === 0) return { fire: [], skipped: [], missed: null, next };
  if (lastJobActive && s.overlap === "queue") return null;
  const latest = due[due.length - 1]!;
  const policy = parseCatchUp(s.catch_up);
  let pick: number[];
  if (policy.kind === "all") pick = due.slice(-policy.max);
  else if (policy.kind === "last" || now - latest <= onTimeSeconds(rule, latest)) pick = [latest];
  else pick = [];
  const left = due.slice(0, due.length - pick.length);
  const missed =
    left.length + uncounted === 0
      ? null
      : { first: left[0] ?? latest, last: left[left.length - 1] ?? latest, count: left.length + uncounted };
  if (lastJobActive && s.overlap === "skip") return { fire: [], skipped: pick, missed, next };
  return { fire: pick, skipped: [], missed, next };
}

/** A slot as ISO-8601 in `tz` (with its offset) or UTC: what `schedule list` shows. */
export function slotText(slot: number, tz: string | null): string {
  if (!Number.isFinite(slot)) return "never";
  const instant = Temporal.Instant.fromEpochMilliseconds(Math.round(slot * 1000));
  if (tz === null) return instant.toString();
  return instant.toZonedDateTimeISO(tz).toString({ timeZoneName: "never" });
}
