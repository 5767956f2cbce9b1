/**
 * Exports each attempt's span over OTLP/HTTP (JSON) when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is
 * set (README "Metrics and traces", docs/architecture.md "Traces"). The
 * OpenTelemetry packages load only then; spans go out in batches from the
 * SDK's BatchSpanProcessor, off the job's path: a collector that is down
 * costs a bounded wait at the worker's exit and nothing else.
 */
import type { ProcessEnd } from "../ops/outcome.ts";
import type { AttemptSpan } from "../ops/trace-context.ts";
import type { ClaimedAttempt } from "../store/verbs/claim.ts";

/** One ended attempt, as its span says it. Times epoch milliseconds. */
export interface TracedAttempt {
  span: AttemptSpan;
  jobId: number;
  attemptNo: number;
  lane: string;
  startedMs: number;
  endedMs: number;
  /** How it ended (`exited`, `signaled`, `timed_out`, …: ProcessEnd's kind) and its exit code or signal. */
  end: { kind: string; code: number | null; signal: number | null; error: string | null };
}

/** Where finished spans go. */
export interface AttemptTracer {
  /** Queues the span of an ended attempt for export; never throws, never waits. */
  ended(attempt: TracedAttempt): void;
  /** Sends what is queued, waiting at most `ms` milliseconds; never throws. */
  close(ms?: number): Promise<void>;
}

/** How long a worker's exit waits for its last spans to go out, milliseconds. */
const CLOSE_WAIT_MS = 2000;

/**
 * The exporter's timeout per batch, retries included, milliseconds, unless
 * `OTEL_EXPORTER_OTLP_TIMEOUT` says otherwise: a down or hanging collector
 * is given up on after it, so a worker's exit waits at most this long.
 */
const EXPORT_TIMEOUT_MS = 2000;

interface Loaded {
  record(a: TracedAttempt): void;
  shutdown(): Promise<void>;
}

/** Loads the SDK and makes a tracer whose ids are those decided by src/ops/trace-context.ts. */
async function load(env: Record<string, string | undefined>, version: string): Promise<Loaded> {
  const [api, sdk, otlp, resources] = await Promise.all([
    import("@opentelemetry/api"),
    import("@opentelemetry/sdk-trace"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
  ]);
  // The SDK asks its id generator for the ids of each span it starts: it gets the ones decided for the attempt.
  let next = { traceId: "", spanId: "" };
  const timeoutMillis =
    env.OTEL_EXPORTER_OTLP_TIMEOUT || env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ? {} : { timeoutMillis: EXPORT_TIMEOUT_MS };
  const provider = new sdk.TracerProvider({
    resource: resources.resourceFromAttributes({
      "service.name": env.OTEL_SERVICE_NAME || "spoolctl",
      "service.version": version,
    }),
    idGenerator: { generateTraceId: () => next.traceId, generateSpanId: () => next.spanId },
    spanProcessors: [
      new sdk.BatchSpanProcessor({
        exporter: new otlp.OTLPTraceExporter(timeoutMillis),
        scheduledDelayMillis: 1000,
      }),
    ],
  });
  const tracer = provider.getTracer("spoolctl", version);
  return {
    record(a) {
      const { span } = a;
      next = { traceId: span.traceId, spanId: span.spanId };
      const parent =
        span.parentSpanId === null
          ? api.ROOT_CONTEXT
          : api.trace.setSpanContext(api.ROOT_CONTEXT, {
              traceId: span.traceId,
              spanId: span.parentSpanId,
              traceFlags: Number.parseInt(span.flags, 16),
              isRemote: true,
            });
      const s = tracer.startSpan(
        `spoolctl run ${a.lane}`,
        {
          kind: api.SpanKind.CONSUMER,
          root: span.parentSpanId === null,
          startTime: a.startedMs,
          links: span.links.map((l) => ({
            context: { traceId: l.traceId, spanId: l.spanId, traceFlags: Number.parseInt(l.flags, 16), isRemote: true },
          })),
          attributes: {
            "spoolctl.job.id": a.jobId,
            "spoolctl.attempt": a.attemptNo,
            "spoolctl.lane": a.lane,
            "spoolctl.attempt.end": a.end.kind,
            ...(a.end.code !== null ? { "process.exit.code": a.end.code } : {}),
            ...(a.end.signal !== null ? { "spoolctl.attempt.signal": a.end.signal } : {}),
          },
        },
        parent,
      );
      const ok = a.end.kind === "exited" && a.end.code === 0;
      s.setStatus(
        ok
          ? { code: api.SpanStatusCode.OK }
          : { code: api.SpanStatusCode.ERROR, message: a.end.error ?? `${a.end.kind}` },
      );
      s.end(a.endedMs);
    },
    shutdown: () => provider.shutdown(),
  };
}

/**
 * The tracer of a worker started with `env`, or null when no OTLP endpoint
 * is set (then nothing of OpenTelemetry is loaded). `warn` hears, once, why
 * spans cannot be exported (a package that fails to load).
 */
export function attemptTracer(
  env: Record<string, string | undefined>,
  version: string,
  warn: (message: string) => void,
): AttemptTracer | null {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return null;
  const loaded = load(env, version).catch((error: Error) => {
    warn(`cannot export spans over OTLP: ${error.message}`);
    return null;
  });
  return {
    ended(a) {
      void loaded.then((l) => {
        try {
          l?.record(a);
        } catch (error) {
          warn(`span of job ${a.jobId} attempt ${a.attemptNo} not exported: ${(error as Error).message}`);
        }
      });
    },
    async close(ms = CLOSE_WAIT_MS) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const l = await loaded;
      if (!l) return;
      await Promise.race([
        l.shutdown().catch(() => {}),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, ms);
        }),
      ]);
      clearTimeout(timer);
    },
  };
}

/** `n` random bytes (span and trace ids). */
export function randomBytes(n: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(n));
}

/** What the span of an ended attempt says (src/worker/tracing.ts). */
export function tracedAttempt(
  claimed: ClaimedAttempt,
  span: AttemptSpan,
  startedMs: number,
  end: ProcessEnd,
): TracedAttempt {
  const e = end as { kind: string; code?: number | null; signal?: number | null; error?: string };
  return {
    span,
    jobId: claimed.job.id,
    attemptNo: claimed.attemptNo,
    lane: claimed.job.queue,
    startedMs,
    endedMs: Date.now(),
    end: { kind: e.kind, code: e.code ?? null, signal: e.signal ?? null, error: e.error ?? null },
  };
}
