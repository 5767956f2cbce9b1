/**
 * W3C trace context through the environment (README "Metrics and traces",
 * docs/architecture.md "Traces"): what `add` keeps of its own `TRACEPARENT`,
 * `TRACESTATE` and `BAGGAGE`, and the span each attempt runs as. Pure: the
 * random bytes are passed in.
 */
import type { Warning } from "../contract/errors.ts";
import type { JobTrace } from "../model/job.ts";

/** A span's identity as `traceparent` carries it: lowercase hex, 32 and 16 digits; `flags` 2 digits. */
export interface SpanContext {
  traceId: string;
  spanId: string;
  flags: string;
}

/** Longest `tracestate` kept (W3C trace-context: 512 characters is what a vendor must pass on). */
const TRACESTATE_MAX = 512;
/** Longest `BAGGAGE` kept, bytes (W3C baggage: 8192 is what a platform must pass on). */
const BAGGAGE_MAX = 8192;

const HEX = /^[0-9a-f]+$/;
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * Parses a `traceparent` value (W3C trace-context level 1, "traceparent
 * Header"): version `00` is exactly 55 characters; a later version may carry
 * more after a `-`; version `ff`, an all-zero trace or span id, upper case or
 * anything else is invalid. Returns null for an invalid value, never throws.
 */
export function parseTraceparent(value: string): SpanContext | null {
  const m = TRACEPARENT.exec(value);
  if (!m) return null;
  const [, version, traceId, spanId, flags, rest] = m as unknown as [string, string, string, string, string, string?];
  if (version === "ff") return null;
  if (version === "00" && rest !== undefined) return null;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return null;
  return { traceId, spanId, flags };
}

/** `00-TRACE-SPAN-FLAGS`, the `traceparent` of `ctx`. */
export function formatTraceparent(ctx: SpanContext): string {
  return `00-${ctx.traceId}-${ctx.spanId}-${ctx.flags}`;
}

/** Printable ASCII only (both headers' grammar is a subset of it). */
function printable(v: string): boolean {
  return /^[\x20-\x7e]*$/.test(v);
}

/**
 * What `add` keeps of `env` (its own environment): `TRACEPARENT` when valid,
 * with `TRACESTATE` (≤ 512 printable characters) and `BAGGAGE` (≤ 8192
 * printable bytes). A malformed `TRACEPARENT` is dropped with its
 * `TRACESTATE` (W3C: the state means nothing without its parent), with a
 * `TRACE_CONTEXT_INVALID` warning; a bad `TRACESTATE` or `BAGGAGE` alone is
 * dropped with the same warning. Nothing kept: null.
 */
export function captureTrace(env: Record<string, string | undefined>): { trace: JobTrace | null; warnings: Warning[] } {
  const warnings: Warning[] = [];
  const parent = env.TRACEPARENT?.trim();
  let traceparent: string | null = null;
  if (parent) {
    if (parseTraceparent(parent)) traceparent = parent;
    else
      warnings.push({
        code: "TRACE_CONTEXT_INVALID",
        message: `TRACEPARENT ${JSON.stringify(parent.slice(0, 80))} is not a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>); it was dropped and the job starts a trace of its own`,
      });
  }
  let tracestate: string | null = null;
  const state = env.TRACESTATE?.trim();
  if (state && traceparent) {
    if (state.length <= TRACESTATE_MAX && printable(state)) tracestate = state;
    else
      warnings.push({
        code: "TRACE_CONTEXT_INVALID",
        message: `TRACESTATE is not ${TRACESTATE_MAX} printable characters or fewer; it was dropped`,
      });
  }
  let baggage: string | null = null;
  const bag = env.BAGGAGE?.trim();
  if (bag) {
    if (bag.length <= BAGGAGE_MAX && printable(bag)) baggage = bag;
    else
      warnings.push({
        code: "TRACE_CONTEXT_INVALID",
        message: `BAGGAGE is not ${BAGGAGE_MAX} printable bytes or fewer; it was dropped`,
      });
  }
  if (traceparent === null && baggage === null) return { trace: null, warnings };
  return { trace: { traceparent, tracestate, baggage }, warnings };
}

/** The span one attempt runs as, and the variables its command gets. */
export interface AttemptSpan {
  traceId: string;
  spanId: string;
  flags: string;
  /** The adder's span when this attempt is its child (the first attempt); null: a trace's root. */
  parentSpanId: string | null;
  /** Spans this one is linked to: the adder's, for a retry that starts a trace of its own. */
  links: SpanContext[];
  /** `TRACEPARENT` naming this span, with `TRACESTATE` (in the adder's trace only) and `BAGGAGE` when kept. */
  env: Record<string, string>;
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** `n` random bytes as lowercase hex, never all zero (W3C: an all-zero id is invalid). */
function randomId(random: (n: number) => Uint8Array, n: number): string {
  for (;;) {
    const id = hex(random(n));
    if (HEX.test(id) && !/^0+$/.test(id)) return id;
  }
}

/**
 * The span of attempt `attemptNo` of a job added with `trace`
 * (docs/architecture.md "Traces"): a span id of its own always; the first
 * attempt is a child of the adder's span, in its trace and with its flags;
 * a later attempt (a retry, a reaped crash, a rerun) starts a trace of its
 * own, sampled, linked to the adder's span, so a trace never stretches over a
 * backoff of hours. Without an adder's span every attempt is a root.
 * `random(n)`: n random bytes.
 */
export function attemptSpan(trace: JobTrace | null, attemptNo: number, random: (n: number) => Uint8Array): AttemptSpan {
  const adder = trace?.traceparent ? parseTraceparent(trace.traceparent) : null;
  const spanId = randomId(random, 8);
  const child = adder !== null && attemptNo === 1;
  const traceId = child ? adder.traceId : randomId(random, 16);
  const flags = child ? adder.flags : "01";
  const env: Record<string, string> = { TRACEPARENT: formatTraceparent({ traceId, spanId, flags }) };
  if (child && trace?.tracestate) env.TRACESTATE = trace.tracestate;
  if (trace?.baggage) env.BAGGAGE = trace.baggage;
  return {
    traceId,
    spanId,
    flags,
    parentSpanId: child ? adder.spanId : null,
    links: adder !== null && !child ? [adder] : [],
    env,
  };
}

/** The trace variables a worker's own environment must not pass to a job (each attempt sets its own). */
export const TRACE_VARIABLES = ["TRACEPARENT", "TRACESTATE", "BAGGAGE"] as const;
