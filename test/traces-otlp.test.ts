/**
 * OTLP export of attempts' spans (README "Metrics and traces",
 * docs/architecture.md "Traces"): a real OTLP/HTTP receiver (Bun.serve,
 * reading the JSON the official exporter sends) gets each attempt's span
 * with the ids its command saw, its parent and its link; with the receiver
 * down, or answering never, jobs still succeed and the worker still exits.
 */
import { expect, test } from "bun:test";
import { parseTraceparent } from "../src/ops/trace-context.ts";
import { FAST_KNOBS, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue();

const ADDER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  links?: { traceId: string; spanId: string }[];
  attributes: { key: string; value: { intValue?: number | string; stringValue?: string } }[];
  status?: { code?: number };
}

/** An OTLP/HTTP receiver on a free loopback port: what it got, as spans. */
function receiver(): { url: string; spans: OtlpSpan[]; requests: string[]; stop(): void } {
  const spans: OtlpSpan[] = [];
  const requests: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      requests.push(`${req.method} ${new URL(req.url).pathname} ${req.headers.get("content-type")}`);
      const body = (await req.json()) as {
        resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
      };
      for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      return Response.json({});
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, spans, requests, stop: () => server.stop(true) };
}

function attr(span: OtlpSpan, key: string): unknown {
  const v = span.attributes.find((a) => a.key === key)?.value;
  return v?.intValue !== undefined ? Number(v.intValue) : v?.stringValue;
}

async function traceparentOf(id: number, attempt: number): Promise<string> {
  const r = await q.run(["output", String(id), "--attempt", String(attempt), "--stream", "stdout", "--raw"]);
  return r.stdout.trim();
}

test("each attempt's span reaches the collector: ids as the command saw them, parent, link", async () => {
  const otlp = receiver();
  try {
    await q.run(["config", "set", "backoff-cap", "0"]);
    const add = await q.json(
      [
        "add",
        "--max-retries",
        "1",
        "--cwd",
        q.dir,
        "-c",
        'echo "$TRACEPARENT"; [ -e tried ] || { touch tried; exit 3; }',
      ],
      { env: { TRACEPARENT: ADDER } },
    );
    const id = add.env.data.job_id as number;
    const r = await q.run(["work", "--drain"], { env: { ...FAST_KNOBS, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url } });
    expect(r.code).toBe(0);
    const spans = await waitFor("two spans at the receiver", () => (otlp.spans.length >= 2 ? otlp.spans : undefined));
    expect(otlp.requests[0]).toStartWith("POST /v1/traces application/json");
    const byAttempt = (n: number) => spans.find((s) => attr(s, "spoolctl.attempt") === n)!;
    const first = byAttempt(1);
    const second = byAttempt(2);
    const saw1 = parseTraceparent(await traceparentOf(id, 1))!;
    const saw2 = parseTraceparent(await traceparentOf(id, 2))!;
    // The first attempt: the adder's child, with the span id its command was given.
    expect(first.traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(first.spanId).toBe(saw1.spanId);
    expect(first.parentSpanId).toBe("00f067aa0ba902b7");
    expect(first.links ?? []).toEqual([]);
    expect(attr(first, "spoolctl.job.id")).toBe(id);
    expect(attr(first, "process.exit.code")).toBe(3);
    expect(first.status?.code).toBe(2); // ERROR
    // The retry: a trace of its own, a root, linked to the adder's span.
    expect(second.traceId).toBe(saw2.traceId);
    expect(second.traceId).not.toBe(first.traceId);
    expect(second.spanId).toBe(saw2.spanId);
    expect(second.parentSpanId ?? "").toBe("");
    expect(second.links?.map((l) => [l.traceId, l.spanId])).toEqual([
      ["4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"],
    ]);
    expect(second.status?.code).toBe(1); // OK
    expect(second.name).toBe("spoolctl run default");
  } finally {
    otlp.stop();
  }
});

test("with the collector down or hanging, jobs succeed and the worker exits", async () => {
  // A port nothing listens on: connections are refused.
  const closed = receiver();
  closed.stop();
  // A collector that takes the connection and never answers.
  const hanging = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Promise<Response>(() => {}) });
  try {
    for (const url of [closed.url, `http://127.0.0.1:${hanging.port}`]) {
      const id = (await q.json(["add", "-c", "echo hi"], { env: { TRACEPARENT: ADDER } })).env.data.job_id;
      const r = await q.run(["work", "--drain"], { env: { ...FAST_KNOBS, OTEL_EXPORTER_OTLP_ENDPOINT: url } });
      expect(r.code).toBe(0);
      expect((await q.json(["show", String(id)])).env.data.job.state).toBe("done");
    }
  } finally {
    hanging.stop(true);
  }
});

test("without an OTLP endpoint nothing of OpenTelemetry is loaded", async () => {
  const probe = `
    const { attemptTracer } = await import(${JSON.stringify(`${import.meta.dir}/../src/worker/tracing.ts`)});
    await import(${JSON.stringify(`${import.meta.dir}/../src/worker/loop.ts`)});
    const loaded = () => Object.keys(require.cache).filter((k) => k.includes("@opentelemetry")).length;
    const none = attemptTracer({}, "0", () => {});
    const before = loaded();
    const some = attemptTracer({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1" }, "0", () => {});
    await some.close(10);
    console.log(JSON.stringify({ none, before, after: loaded() }));`;
  const p = Bun.spawn(["bun", "-e", probe], { stdout: "pipe", stderr: "pipe" });
  const out = await new Response(p.stdout).text();
  expect(await p.exited).toBe(0);
  const seen = JSON.parse(out);
  expect(seen.none).toBeNull();
  expect(seen.before).toBe(0);
  // The same probe sees them once an endpoint is set: it can tell.
  expect(seen.after).toBeGreaterThan(0);
});
