/**
 * The pure side of recurring jobs (src/ops/schedule-time.ts; docs/architecture.md "Recurring
 * jobs"): when slots come, across DST changes in a fixed zone and date, and what a pass does
 * with due slots under each catch-up and overlap policy.
 */
import { describe, expect, test } from "bun:test";
import type { Schedule } from "../src/model/recurring.ts";
import {
  nextSlotAfter,
  parseCatchUp,
  parseCron,
  parseEvery,
  parseOverlap,
  parseZone,
  planSlots,
  slotText,
} from "../src/ops/schedule-time.ts";

const at = (iso: string) => Date.parse(iso) / 1000;
const iso = (t: number) => new Date(t * 1000).toISOString();

/** The first `n` slots after `from` (ISO UTC). */
function slots(rule: Parameters<typeof nextSlotAfter>[0], from: string, n: number): string[] {
  const out: string[] = [];
  let t = at(from);
  for (let i = 0; i < n; i++) {
    t = nextSlotAfter(rule, t);
    out.push(iso(t));
  }
  return out;
}

function schedule(over: Partial<Schedule>): Schedule {
  return {
    name: "s",
    cron: null,
    every_seconds: 10,
    tz: null,
    job: {
      argv: ["true"],
      priority: 0,
      queue: "default",
      timeout_seconds: 60,
      max_retries: 0,
      max_crashes: null,
      tags: {},
      note: null,
      cwd: null,
      env: {},
    },
    queue: "default",
    catch_up: "last",
    overlap: "skip",
    paused: false,
    next_slot: 1000,
    last_slot: null,
    last_job_id: null,
    created_at: 0,
    ...over,
  };
}

describe("next slot", () => {
  test("--every slots are whole multiples of the interval since the epoch, strictly after", () => {
    expect(nextSlotAfter({ every: 10 }, 1000)).toBe(1010);
    expect(nextSlotAfter({ every: 10 }, 1003.7)).toBe(1010);
    expect(nextSlotAfter({ every: 1 }, 5)).toBe(6);
  });

  test("a daily 02:30 in Europe/Berlin across spring forward: the skipped hour fires when clocks resume", () => {
    // 2026-03-29 02:00 CET → 03:00 CEST: 02:30 does not exist that night.
    expect(slots({ cron: "30 2 * * *", tz: "Europe/Berlin" }, "2026-03-27T12:00:00Z", 4)).toEqual([
      "2026-03-28T01:30:00.000Z", // 02:30 CET
      "2026-03-29T01:00:00.000Z", // 03:00 CEST, the first wall time after the gap
      "2026-03-30T00:30:00.000Z", // 02:30 CEST
      "2026-03-31T00:30:00.000Z",
    ]);
  });

  test("a daily 02:30 in Europe/Berlin across fall back: the repeated hour fires once", () => {
    // 2026-10-25 03:00 CEST → 02:00 CET: 02:30 comes twice that night.
    expect(slots({ cron: "30 2 * * *", tz: "Europe/Berlin" }, "2026-10-23T12:00:00Z", 3)).toEqual([
      "2026-10-24T00:30:00.000Z", // 02:30 CEST
      "2026-10-25T00:30:00.000Z", // 02:30 CEST, the first of the two
      "2026-10-26T01:30:00.000Z", // 02:30 CET
    ]);
  });

  test("a half-hourly rule in Europe/Berlin fires in both repeated hours of fall back, 30 minutes apart", () => {
    expect(slots({ cron: "*/30 * * * *", tz: "Europe/Berlin" }, "2026-10-24T23:45:00Z", 5)).toEqual([
      "2026-10-25T00:00:00.000Z",
      "2026-10-25T00:30:00.000Z",
      "2026-10-25T01:00:00.000Z",
      "2026-10-25T01:30:00.000Z",
      "2026-10-25T02:00:00.000Z",
    ]);
  });

  // Regressions found by test/properties/schedule-slots.test.ts: croner keeps these rules only
  // for a single fixed time; a rule of several times at fixed hours fired twice in a repeated
  // hour and not at all in a skipped one.
  test("several times at a fixed hour across spring forward: the skipped ones fire once when clocks resume", () => {
    expect(slots({ cron: "0,30 2 * * *", tz: "Europe/Berlin" }, "2026-03-28T12:00:00Z", 3)).toEqual([
      "2026-03-29T01:00:00.000Z", // 03:00 CEST: 02:00 and 02:30 did not exist
      "2026-03-30T00:00:00.000Z", // 02:00 CEST
      "2026-03-30T00:30:00.000Z", // 02:30 CEST
    ]);
    // A skipped time beside an existing one of the same rule: the resumption, then its own times.
    expect(slots({ cron: "30 1-3 * * *", tz: "Europe/Berlin" }, "2026-03-28T23:00:00Z", 3)).toEqual([
      "2026-03-29T00:30:00.000Z", // 01:30 CET
      "2026-03-29T01:00:00.000Z", // 03:00 CEST, for 02:30
      "2026-03-29T01:30:00.000Z", // 03:30 CEST
    ]);
  });

  test("several times at a fixed hour across fall back: each repeated wall time fires once", () => {
    expect(slots({ cron: "0,30 2 * * *", tz: "Europe/Berlin" }, "2026-10-24T12:00:00Z", 3)).toEqual([
      "2026-10-25T00:00:00.000Z", // 02:00 CEST
      "2026-10-25T00:30:00.000Z", // 02:30 CEST; not again at 02:00 and 02:30 CET
      "2026-10-26T01:00:00.000Z", // 02:00 CET, the next day
    ]);
    // Santiago goes back from 00:00 to 23:00: the evening's times come twice.
    expect(slots({ cron: "0,29 0,23 * * *", tz: "America/Santiago" }, "2025-04-05T12:00:00Z", 4)).toEqual([
      "2025-04-06T02:00:00.000Z", // 23:00 -03
      "2025-04-06T02:29:00.000Z", // 23:29 -03; not again at 23:00 and 23:29 -04
      "2025-04-06T04:00:00.000Z", // 00:00 -04
      "2025-04-06T04:29:00.000Z",
    ]);
  });

  test("the same rule in UTC ignores Berlin's change; slots render in the schedule's zone", () => {
    expect(slots({ cron: "30 2 * * *", tz: null }, "2026-03-28T12:00:00Z", 1)).toEqual(["2026-03-29T02:30:00.000Z"]);
    expect(slotText(at("2026-03-29T01:00:00Z"), "Europe/Berlin")).toBe("2026-03-29T03:00:00+02:00");
    expect(slotText(at("2026-03-28T01:30:00Z"), "Europe/Berlin")).toBe("2026-03-28T02:30:00+01:00");
  });
});

describe("validation: refused with the reason", () => {
  test("cron expressions, zones and policies", () => {
    expect(() => parseCron("61 * * * *", null)).toThrow(/minute: 61/);
    expect(() => parseCron("not cron", null)).toThrow(/--cron/);
    expect(parseCron(" 0 3 * * * ", null)).toBe("0 3 * * *");
    expect(() => parseZone("Mars/Base")).toThrow(/Mars\/Base/);
    expect(parseZone("europe/berlin")).toBe("Europe/Berlin");
    // A fixed offset never follows daylight saving time: refused, with the zone to give instead.
    expect(() => parseZone("+02:00")).toThrow(/fixed UTC offset/);
    expect(() => parseZone("-05:00")).toThrow(/fixed UTC offset/);
    expect(parseZone("Etc/GMT-2")).toBe("Etc/GMT-2");
    // Six fields (seconds first) are taken; a seventh (the year) is refused, not read as something else.
    expect(parseCron("0 0 3 * * *", null)).toBe("0 0 3 * * *");
    expect(() => parseCron("0 0 3 * * * 2030", null)).toThrow(/--cron/);
    expect(() => parseEvery("0s")).toThrow(/--every/);
    expect(parseEvery("10m")).toBe(600);
    expect(parseCatchUp("all:3")).toEqual({ kind: "all", max: 3 });
    expect(() => parseCatchUp("all:0")).toThrow(/--catch-up/);
    expect(() => parseCatchUp("some")).toThrow(/none, last, or all:N/);
    expect(() => parseOverlap("wait")).toThrow(/skip, queue or allow/);
  });
});

describe("planSlots: catch-up and overlap", () => {
  // Slots every 10 s from 1000; the pass runs at 1051: slots 1000..1050 are due (6 slots).
  const now = 1051;

  test("nothing due: no change but the next slot", () => {
    expect(planSlots(schedule({ next_slot: 1060 }), now, false)).toEqual({
      fire: [],
      skipped: [],
      missed: null,
      next: 1060,
    });
  });

  test("last (default): the newest due slot fires, the 5 before are missed", () => {
    expect(planSlots(schedule({}), now, false)).toEqual({
      fire: [1050],
      skipped: [],
      missed: { first: 1000, last: 1040, count: 5 },
      next: 1060,
    });
  });

  test("all:N fires the newest N; all:10 fires all 6", () => {
    expect(planSlots(schedule({ catch_up: "all:3" }), now, false)).toMatchObject({
      fire: [1030, 1040, 1050],
      missed: { count: 3 },
    });
    expect(planSlots(schedule({ catch_up: "all:10" }), now, false)).toMatchObject({
      fire: [1000, 1010, 1020, 1030, 1040, 1050],
      missed: null,
    });
  });

  test("none: the newest fires only while on time (half an interval, at least 2 s)", () => {
    expect(planSlots(schedule({ catch_up: "none" }), now, false)).toMatchObject({ fire: [1050], missed: { count: 5 } });
    expect(planSlots(schedule({ catch_up: "none" }), 1056, false)).toMatchObject({ fire: [], missed: { count: 6 } });
    // A daily job found 6 hours late does not run under none.
    const daily = schedule({
      cron: "0 3 * * *",
      every_seconds: null,
      catch_up: "none",
      next_slot: at("2026-12-02T03:00:00Z"),
    });
    expect(planSlots(daily, at("2026-12-02T09:00:00Z"), false)).toMatchObject({ fire: [], missed: { count: 1 } });
    expect(planSlots({ ...daily, catch_up: "last" }, at("2026-12-02T09:00:00Z"), false)?.fire).toEqual([
      at("2026-12-02T03:00:00Z"),
    ]);
  });

  test("overlap: skip records the slot as skipped, queue waits (null), allow fires", () => {
    const due = schedule({ next_slot: 1050 });
    expect(planSlots({ ...due, overlap: "skip" }, now, true)).toEqual({
      fire: [],
      skipped: [1050],
      missed: null,
      next: 1060,
    });
    expect(planSlots({ ...due, overlap: "queue" }, now, true)).toBeNull();
    expect(planSlots({ ...due, overlap: "queue" }, now, false)?.fire).toEqual([1050]);
    expect(planSlots({ ...due, overlap: "allow" }, now, true)?.fire).toEqual([1050]);
  });

  test("a long outage of a fine schedule is counted, not walked slot by slot", () => {
    const plan = planSlots(schedule({ every_seconds: 1, next_slot: 1000 }), 1000 + 86_400, false)!;
    expect(plan.fire).toEqual([1000 + 86_400]);
    expect(plan.missed!.count).toBe(86_400);
    expect(plan.next).toBe(1000 + 86_401);
  });
});
