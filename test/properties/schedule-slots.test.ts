/**
 * Properties of a schedule's slots (`nextSlotAfter`, src/ops/schedule-time.ts) for random cron
 * rules in zones with daylight saving time, from moments near their changes, and random
 * `--every` intervals. The rules are README "Recurring jobs" and docs/architecture.md
 * "Recurring jobs":
 *
 * - the next slot is strictly after the moment asked about, and no slot lies between the two:
 *   slots strictly increase, so none fires twice ("exactly once per slot");
 * - across DST, a wall time that does not exist fires when the clocks resume, one that happens
 *   twice fires once: a daily rule (one or more times a day at fixed hours) fires on every local
 *   day, at its own wall times or at a change's resumption, never at one wall time twice;
 * - an hourly or finer rule fires in both repeated hours: in a zone whose changes are whole hours
 *   its slots stay evenly spaced in real time across a change;
 * - `--every N` slots are whole multiples of N seconds since the epoch.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import fc from "fast-check";
import { nextSlotAfter, type SlotRule } from "../../src/ops/schedule-time.ts";
import { runs } from "../support/properties.ts";

// croner takes milliseconds a slot: on a loaded machine a property may outlast bun's 5 s default.
setDefaultTimeout(60_000);

/** Zones with DST changes of an hour, at 02:00, 01:00, 03:00 or midnight, both hemispheres. */
const WHOLE_HOUR_ZONES = [
  "Europe/Berlin",
  "Europe/London",
  "America/New_York",
  "America/Santiago",
  "America/Havana",
  "Australia/Sydney",
];
/** Lord Howe changes by 30 minutes; UTC and Tokyo never change. */
const ZONES = [...WHOLE_HOUR_ZONES, "Australia/Lord_Howe", "UTC", "Asia/Tokyo"];

/** The DST changes of `tz` from 2025 to 2028, epoch seconds (none for a zone without). */
const changesOf = (() => {
  const cache = new Map<string, number[]>();
  return (tz: string): number[] => {
    if (!cache.has(tz)) {
      const out: number[] = [];
      let z = Temporal.Instant.from("2025-01-01T00:00:00Z").toZonedDateTimeISO(tz);
      for (;;) {
        const next = z.getTimeZoneTransition("next");
        if (!next || next.year >= 2028) break;
        out.push(next.epochMilliseconds / 1000);
        z = next;
      }
      cache.set(tz, out);
    }
    return cache.get(tz)!;
  };
})();

/**
 * A zone, one of its changes and a moment up to a day before it (for a zone without, a moment
 * anywhere in 2025-2027, standing for the change too).
 */
const zoneAndMoment = fc.constantFrom(...ZONES).chain((tz) => {
  const changes = changesOf(tz);
  const near = changes.length
    ? fc.tuple(fc.constantFrom(...changes), fc.integer({ min: -86400, max: 0 })).map(([c, d]) => [c, c + d] as const)
    : fc.integer({ min: 1_735_689_600, max: 1_830_297_600 }).map((t) => [t, t] as const);
  return fc.tuple(
    fc.constant(tz),
    fc.oneof(
      near,
      near.map(([c, t]) => [c, t + 0.25] as const),
    ),
  );
});

/** A daily rule: wall times at fixed hours (one, or several), every day or on one weekday. */
interface Daily {
  hours: number[];
  minutes: number[];
  weekday: number | null;
  cron: string;
}

const hour = fc.integer({ min: 0, max: 23 });
const minute = fc.integer({ min: 0, max: 59 });
const sorted = (xs: number[]) => [...new Set(xs)].sort((a, b) => a - b);

const daily: fc.Arbitrary<Daily> = fc
  .record({
    // Few times a day (each slot costs croner a few milliseconds): one or two hours, a range of two.
    hours: fc.oneof(
      hour.map((h) => [h]),
      fc.uniqueArray(hour, { minLength: 2, maxLength: 2 }),
      hour.map((h) => [h, Math.min(23, h + 1)]),
    ),
    minutes: fc.oneof(
      minute.map((m) => [m]),
      fc.uniqueArray(minute, { minLength: 2, maxLength: 3 }),
      fc.constantFrom(20, 30).map((k) => Array.from({ length: 60 / k }, (_, i) => i * k)),
    ),
    weekday: fc.oneof(
      { arbitrary: fc.constant(null), weight: 4 },
      { arbitrary: fc.integer({ min: 0, max: 6 }), weight: 1 },
    ),
  })
  .map(({ hours, minutes, weekday }) => ({
    hours: sorted(hours),
    minutes: sorted(minutes),
    weekday,
    cron: `${sorted(minutes).join(",")} ${sorted(hours).join(",")} * * ${weekday ?? "*"}`,
  }));

/** An hourly or finer rule: minute M of every hour, or every k minutes (k dividing 60). */
const hourly = fc.oneof(
  minute.map((m) => ({ cron: `${m} * * * *`, period: 3600 })),
  fc.constantFrom(5, 10, 15, 20, 30).map((k) => ({ cron: `*/${k} * * * *`, period: k * 60 })),
);

/** The first `n` slots after `t`. */
function slotsAfter(rule: SlotRule, t: number, n: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(nextSlotAfter(rule, out.at(-1) ?? t));
  return out;
}

/** The wall clock of `slot` in `tz`. */
const wall = (slot: number, tz: string) => Temporal.Instant.fromEpochMilliseconds(slot * 1000).toZonedDateTimeISO(tz);

/** Whether `slot` is the moment clocks resume after a DST gap in `tz` (the offset grows there). */
function resumesAGap(slot: number, tz: string): boolean {
  return wall(slot, tz).offsetNanoseconds > wall(slot - 1, tz).offsetNanoseconds;
}

test("the next slot is strictly after t, slots strictly increase, and none lies between t and the next", () => {
  const rule = fc.oneof(
    daily.map((d) => d.cron),
    hourly.map((h) => h.cron),
  );
  fc.assert(
    fc.property(rule, zoneAndMoment, fc.double({ min: 0, max: 1, noNaN: true }), (cron, [tz, [, t]], f) => {
      const r = { cron, tz };
      const slots = slotsAfter(r, t, 3);
      expect(slots[0]!).toBeGreaterThan(t);
      for (let i = 1; i < slots.length; i++) expect(slots[i]!).toBeGreaterThan(slots[i - 1]!);
      // Any moment between t and the next slot has that same next slot: none was skipped.
      const between = t + f * (slots[0]! - t);
      if (between < slots[0]!) expect(nextSlotAfter(r, between)).toBe(slots[0]!);
    }),
    runs(25),
  );
});

/** A zone, a change, a moment before it, and a daily rule whose hours half the time hold the change's wall hour. */
const dailyNearAChange = zoneAndMoment.chain(([tz, [change, t]]) => {
  // The wall hours about the change: the skipped one (a gap) or the repeated one (an overlap) is among them.
  const around = [
    wall(change, tz).hour,
    wall(change - 1, tz)
      .toPlainDateTime()
      .add({ seconds: 1 }).hour,
  ];
  return fc.tuple(
    fc.constant(tz),
    fc.constant([change, t] as const),
    fc.oneof(
      daily,
      daily.map((d) => {
        const hours = sorted(around);
        return { ...d, hours, cron: `${d.minutes.join(",")} ${hours.join(",")} * * ${d.weekday ?? "*"}` };
      }),
    ),
  );
});

test("a daily rule across DST: every local day fires, at its own wall times or when the clocks resume, none twice", () => {
  fc.assert(
    fc.property(dailyNearAChange, ([tz, [change, t], d]) => {
      const r = { cron: d.cron, tz };
      // The slots up to a day past the change (a weekly rule: its next two).
      const slots = [nextSlotAfter(r, t)];
      const until = d.weekday === null ? change + 86400 : -Infinity;
      while (slots.length < 2 || slots.at(-1)! < until) slots.push(nextSlotAfter(r, slots.at(-1)!));
      const walls = slots.map((s) => wall(s, tz));
      // None twice: a wall time that happens twice fires once.
      const seen = walls.map((w) => w.toPlainDateTime().toString());
      expect(new Set(seen).size).toBe(seen.length);
      for (const [i, w] of walls.entries()) {
        const own = d.hours.includes(w.hour) && d.minutes.includes(w.minute) && w.second === 0;
        // Not its own wall time: one of its times did not exist, and this is when the clocks resumed.
        if (!own)
          expect({ slot: w.toString(), resumes: resumesAGap(slots[i]!, tz) }).toEqual({
            slot: w.toString(),
            resumes: true,
          });
        if (d.weekday !== null) expect(w.dayOfWeek % 7).toBe(d.weekday);
      }
      if (d.weekday !== null) return;
      // Every local day between the first and the last slot's fires at least once.
      const days = new Set(walls.map((w) => w.toPlainDate().toString()));
      for (
        let day = walls[0]!.toPlainDate();
        Temporal.PlainDate.compare(day, walls.at(-1)!.toPlainDate()) < 0;
        day = day.add({ days: 1 })
      )
        expect({ day: day.toString(), fires: days.has(day.toString()) }).toEqual({ day: day.toString(), fires: true });
    }),
    runs(30),
  );
});

test("an hourly or finer rule fires in both repeated hours: evenly spaced in real time across a whole-hour change", () => {
  fc.assert(
    fc.property(hourly, fc.constantFrom(...WHOLE_HOUR_ZONES), fc.nat(), (h, tz, pick) => {
      const changes = changesOf(tz);
      const change = changes[pick % changes.length]!;
      const slots = slotsAfter({ cron: h.cron, tz }, change - 5400, Math.ceil(10_800 / h.period));
      for (let i = 1; i < slots.length; i++) expect(slots[i]! - slots[i - 1]!).toBe(h.period);
    }),
    runs(25),
  );
});

test("--every N: slots are whole multiples of N since the epoch, the next within N of t", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 365 * 86400 }),
      fc.double({ min: 0, max: 2_000_000_000, noNaN: true }),
      (every, t) => {
        const next = nextSlotAfter({ every }, t);
        expect(next % every).toBe(0);
        expect(next).toBeGreaterThan(t);
        expect(next - t).toBeLessThanOrEqual(every);
      },
    ),
    runs(300),
  );
});
