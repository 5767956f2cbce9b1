/**
 * Trace context through the environment, end to end (README "Metrics and
 * traces", docs/architecture.md "Traces"): `add` keeps its TRACEPARENT,
 * TRACESTATE and BAGGAGE with the job, drops a malformed one with a warning,
 * and each attempt's command runs with a TRACEPARENT of its own.
 */
import { expect, test } from "bun:test";
import { parseTraceparent } from "../src/ops/trace-context.ts";
import { addJob, drain } from "./support/jobs.ts";
import { useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue();

const ADDER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
/** A job that prints its trace variables, failing until its second attempt. */
const PRINT_ENV = [
  "-c",
  'env | grep -E "^(TRACEPARENT|TRACESTATE|BAGGAGE)=" | sort; [ -e tried ] || { touch tried; exit 1; }',
];

async function varsOf(id: number, attempt: number): Promise<Record<string, string>> {
  const r = await q.run(["output", String(id), "--attempt", String(attempt), "--stream", "stdout", "--raw"]);
  expect(r.code).toBe(0);
  return Object.fromEntries(
    r.stdout
      .split("\n")
      .filter((l) => l.includes("="))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
}

test("add keeps the adder's trace context; show --json has it", async () => {
  const r = await q.json(["add", "-c", "true"], {
    env: { TRACEPARENT: ADDER, TRACESTATE: "congo=t61rcWkgMzE", BAGGAGE: "user=alice" },
  });
  expect(r.code).toBe(0);
  expect(r.env.warnings).toEqual([]);
  const show = await q.json(["show", String(r.env.data.job_id)]);
  expect(show.env.data.job.trace).toEqual({
    traceparent: ADDER,
    tracestate: "congo=t61rcWkgMzE",
    baggage: "user=alice",
  });
  const plain = await q.json(["add", "-c", "true"]);
  expect((await q.json(["show", String(plain.env.data.job_id)])).env.data.job.trace).toBeNull();
});

test("a malformed TRACEPARENT is dropped with a warning in a valid envelope, and never reaches the command", async () => {
  await q.run(["config", "set", "backoff-cap", "0"]);
  const r = await q.json(["add", "--max-retries", "1", "--cwd", q.dir, ...PRINT_ENV], {
    env: { TRACEPARENT: "00-not-a-trace-01", TRACESTATE: "congo=t61" },
  });
  expect(r.code).toBe(0);
  expect(r.env.ok).toBe(true);
  expect(r.env.warnings.map((w: { code: string }) => w.code)).toEqual(["TRACE_CONTEXT_INVALID"]);
  expect(r.env.warnings[0].message).toContain("00-not-a-trace-01");
  const id = r.env.data.job_id as number;
  expect((await q.json(["show", String(id)])).env.data.job.trace).toBeNull();
  await drain(q);
  const vars = await varsOf(id, 1);
  expect(vars.TRACEPARENT).not.toContain("not-a-trace");
  expect(parseTraceparent(vars.TRACEPARENT!)).not.toBeNull();
  expect(vars.TRACESTATE).toBeUndefined();
  // --from takes the same context, with the same warning.
  const from = await q.json(["add", "--from", "-"], { stdin: '{"argv": ["true"]}\n', env: { TRACEPARENT: "x" } });
  expect(from.env.warnings.map((w: { code: string }) => w.code)).toContain("TRACE_CONTEXT_INVALID");
});

test("each attempt runs with a span of its own: the first in the adder's trace, a retry in a new one", async () => {
  await q.run(["config", "set", "backoff-cap", "0"]);
  const id = await q.json(["add", "--max-retries", "1", "--cwd", q.dir, ...PRINT_ENV], {
    env: { TRACEPARENT: ADDER, TRACESTATE: "congo=t61", BAGGAGE: "user=alice" },
  });
  const jobId = id.env.data.job_id as number;
  // The worker's own trace is not the job's: it never reaches the command.
  const r = await q.run(["work", "--drain"], {
    env: { TRACEPARENT: "00-11111111111111111111111111111111-2222222222222222-01", TRACESTATE: "worker=1" },
  });
  expect(r.code).toBe(0);
  expect((await q.json(["show", String(jobId)])).env.data.job.state).toBe("done");
  const first = await varsOf(jobId, 1);
  const second = await varsOf(jobId, 2);
  const a = parseTraceparent(first.TRACEPARENT!)!;
  const b = parseTraceparent(second.TRACEPARENT!)!;
  expect(a.traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
  expect(a.spanId).not.toBe("00f067aa0ba902b7");
  expect(first.TRACESTATE).toBe("congo=t61");
  expect(first.BAGGAGE).toBe("user=alice");
  expect(b.traceId).not.toBe(a.traceId);
  expect(b.traceId).not.toBe("11111111111111111111111111111111");
  expect(b.spanId).not.toBe(a.spanId);
  expect(second.TRACESTATE).toBeUndefined();
  expect(second.BAGGAGE).toBe("user=alice");
});

test("a job added without a trace still runs with a TRACEPARENT of its own, not the worker's", async () => {
  const id = await addJob(q, "--", "sh", "-c", "echo TRACEPARENT=$TRACEPARENT");
  const r = await q.run(["work", "--drain"], {
    env: { TRACEPARENT: "00-11111111111111111111111111111111-2222222222222222-01" },
  });
  expect(r.code).toBe(0);
  const vars = await varsOf(id, 1);
  const ctx = parseTraceparent(vars.TRACEPARENT!);
  expect(ctx).not.toBeNull();
  expect(ctx!.traceId).not.toBe("11111111111111111111111111111111");
});

test("enqueue (the QueueCTL form) keeps the adder's trace too", async () => {
  const r = await q.json(["enqueue", '{"id":"t1","command":"true"}'], { env: { TRACEPARENT: ADDER } });
  expect(r.code).toBe(0);
  expect((await q.json(["show", "t1"])).env.data.job.trace.traceparent).toBe(ADDER);
});
