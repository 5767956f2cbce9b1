/**
 * The pure rules of trace context (src/ops/trace-context.ts; docs/architecture.md
 * "Traces"): which `traceparent` values are valid W3C ones, what `add` keeps of
 * its environment, and the span each attempt runs as.
 */
import { expect, test } from "bun:test";
import { attemptSpan, captureTrace, formatTraceparent, parseTraceparent } from "../src/ops/trace-context.ts";

const VALID = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/** Bytes from a counter: different ids on each call, predictable in a test. */
function counter(): (n: number) => Uint8Array {
  let i = 0;
  return (n) => Uint8Array.from({ length: n }, () => ++i % 256);
}

test("a W3C traceparent parses; its fields round-trip", () => {
  const ctx = parseTraceparent(VALID);
  expect(ctx).toEqual({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", flags: "01" });
  expect(formatTraceparent(ctx!)).toBe(VALID);
  // A later version may carry more fields after a dash (W3C: parse what you know).
  expect(parseTraceparent(`01${VALID.slice(2)}-what-comes-next`)?.spanId).toBe("00f067aa0ba902b7");
});

test.each([
  ["empty", ""],
  ["garbage", "not-a-traceparent"],
  ["version ff", `ff${VALID.slice(2)}`],
  ["upper-case hex", VALID.toUpperCase()],
  ["all-zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"],
  ["all-zero span id", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"],
  ["short trace id", "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01"],
  ["version 00 with more", `${VALID}-extra`],
  ["a space inside", "00-4bf92f3577b34da6a3ce929d0e0e4736 -00f067aa0ba902b7-01"],
])("%s is not a traceparent", (_name, value) => {
  expect(parseTraceparent(value)).toBeNull();
});

test("add keeps a valid context, drops a malformed one with a warning and its tracestate with it", () => {
  expect(captureTrace({})).toEqual({ trace: null, warnings: [] });
  expect(captureTrace({ TRACEPARENT: VALID, TRACESTATE: "congo=t61", BAGGAGE: "user=alice" })).toEqual({
    trace: { traceparent: VALID, tracestate: "congo=t61", baggage: "user=alice" },
    warnings: [],
  });
  const bad = captureTrace({ TRACEPARENT: "00-xyz", TRACESTATE: "congo=t61" });
  expect(bad.trace).toBeNull();
  expect(bad.warnings.map((w) => w.code)).toEqual(["TRACE_CONTEXT_INVALID"]);
  // Baggage stands alone: it is kept without a parent.
  expect(captureTrace({ TRACEPARENT: "bad", BAGGAGE: "k=v" }).trace).toEqual({
    traceparent: null,
    tracestate: null,
    baggage: "k=v",
  });
  const big = captureTrace({ TRACEPARENT: VALID, TRACESTATE: "a=".padEnd(600, "b"), BAGGAGE: "k=\u0001" });
  expect(big.trace).toEqual({ traceparent: VALID, tracestate: null, baggage: null });
  expect(big.warnings).toHaveLength(2);
});

test("the first attempt is the adder's child; a retry starts its own trace linked to the adder", () => {
  const trace = { traceparent: VALID, tracestate: "congo=t61", baggage: "user=alice" };
  const random = counter();
  const first = attemptSpan(trace, 1, random);
  expect(first.traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
  expect(first.parentSpanId).toBe("00f067aa0ba902b7");
  expect(first.spanId).not.toBe("00f067aa0ba902b7");
  expect(first.links).toEqual([]);
  expect(first.env).toEqual({
    TRACEPARENT: `00-4bf92f3577b34da6a3ce929d0e0e4736-${first.spanId}-01`,
    TRACESTATE: "congo=t61",
    BAGGAGE: "user=alice",
  });
  const second = attemptSpan(trace, 2, random);
  expect(second.traceId).not.toBe(first.traceId);
  expect(second.spanId).not.toBe(first.spanId);
  expect(second.parentSpanId).toBeNull();
  expect(second.links).toEqual([parseTraceparent(VALID)!]);
  // The vendor state belongs to the adder's trace; baggage travels on.
  expect(second.env).toEqual({ TRACEPARENT: `00-${second.traceId}-${second.spanId}-01`, BAGGAGE: "user=alice" });
  expect(parseTraceparent(second.env.TRACEPARENT!)).not.toBeNull();
});

test("an unsampled adder's flags are kept by its child; without an adder every attempt is a root", () => {
  const unsampled = attemptSpan(
    { traceparent: VALID.replace(/01$/, "00"), tracestate: null, baggage: null },
    1,
    counter(),
  );
  expect(unsampled.flags).toBe("00");
  const root = attemptSpan(null, 1, counter());
  expect(root.parentSpanId).toBeNull();
  expect(root.links).toEqual([]);
  expect(Object.keys(root.env)).toEqual(["TRACEPARENT"]);
});

test("an all-zero draw is drawn again: ids are never all zero", () => {
  let calls = 0;
  const span = attemptSpan(null, 1, (n) => (calls++ < 2 ? new Uint8Array(n) : Uint8Array.from({ length: n }, () => 7)));
  expect(span.spanId).toBe("0707070707070707");
  expect(span.traceId).toBe("07".repeat(16));
});
