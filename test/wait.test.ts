/** `wait` and `feedback` (SPEC §5, issue 4) through the real CLI. */
import { expect, setDefaultTimeout, test } from "bun:test";
import { keysOf, reference, withoutSelection } from "./support/envelopes.ts";
import { addJob, drain } from "./support/jobs.ts";
import { useTempQueue } from "./support/temp-queue.ts";

setDefaultTimeout(60_000);

const q = useTempQueue();

test("wait: all done → exit 0, all_succeeded", async () => {
  const a = await addJob(q, "--", "true");
  const b = await addJob(q, "--", "echo", "hi");
  await drain(q);
  const r = await q.json(["wait", String(a), String(b)]);
  expect(r.code).toBe(0);
  expect(r.env.ok).toBe(true);
  expect(r.env.data.all_succeeded).toBe(true);
  expect(r.env.data.jobs[String(a)]).toEqual({ attempts: 0, last_error: null, last_exit_code: 0, state: "done" });
});

test("wait: a dead job → exit 6 with ok:true, the shape of envelope-wait-mixed.json", async () => {
  const a = await addJob(q, "--", "true");
  const b = await addJob(q, "--max-retries", "0", "--", "sh", "-c", "exit 1");
  await drain(q);
  const r = await q.json(["wait", String(a), String(b)]);
  expect(r.code).toBe(6);
  expect(r.env.ok).toBe(true);
  expect(r.env.errors).toEqual([]);
  const ref = reference("envelope-wait-mixed.json");
  if (ref) {
    expect(keysOf(r.env)).toEqual(keysOf(ref));
    expect(r.env.data).toEqual(ref.data);
  }
  // human text too
  const text = await q.run(["wait", String(b)]);
  expect(text.code).toBe(6);
  expect(text.stdout).toBe("job 2 dead (exit 1)\n");
});

test("wait: a canceled job → exit 6", async () => {
  const a = await addJob(q, "--", "true");
  expect((await q.run(["cancel", String(a)])).code).toBe(0);
  const r = await q.json(["wait", String(a)]);
  expect(r.code).toBe(6);
  expect(r.env.data.jobs[String(a)].state).toBe("canceled");
});

test("wait blocks until a worker started later finishes the jobs", async () => {
  const a = await addJob(q, "--", "true");
  const waiter = q.spawn(["wait", String(a), "--json", "--poll-interval", "0.05"]);
  // The waiter is polling; now run the job.
  await drain(q);
  const [stdout, code] = await Promise.all([new Response(waiter.stdout).text(), waiter.exited]);
  expect(code).toBe(0);
  expect(JSON.parse(stdout).data.jobs[String(a)].state).toBe("done");
});

test("wait --timeout → TIMEOUT exit 4 naming the pending jobs", async () => {
  const a = await addJob(q, "--", "true");
  const r = await q.json(["wait", String(a), "--timeout", "0.2"]);
  expect(r.code).toBe(4);
  expect(r.env.ok).toBe(false);
  expect(r.env.data).toBeNull();
  expect(r.env.errors[0].code).toBe("TIMEOUT");
  expect(r.env.errors[0].detail.pending).toEqual([a]);
});

test("wait: no ids → MISSING_REQUIRED; unknown id → NOT_FOUND; bad --timeout → INVALID_INPUT", async () => {
  let r = await q.json(["wait"]);
  expect([r.code, r.env.errors[0].code]).toEqual([1, "MISSING_REQUIRED"]);
  r = await q.json(["wait", "42"]);
  expect([r.code, r.env.errors[0].code]).toEqual([1, "NOT_FOUND"]);
  r = await q.json(["wait", "1", "--timeout", "soon"]);
  expect([r.code, r.env.errors[0].code]).toEqual([1, "INVALID_INPUT"]);
  expect(r.env.errors[0].message).toContain("--timeout");
});

test("wait accepts idempotency keys", async () => {
  await addJob(q, "--key", "nightly-1", "--", "true");
  await drain(q);
  const r = await q.json(["wait", "nightly-1"]);
  expect(r.code).toBe(0);
  expect(Object.keys(r.env.data.jobs)).toEqual(["1"]);
});

test("feedback of a job not run yet matches envelope-feedback-no-attempts.json", async () => {
  await addJob(q, "--", "true");
  const r = await q.json(["feedback", "1"]);
  expect(r.code).toBe(0);
  const ref = reference("envelope-feedback-no-attempts.json");
  if (ref) {
    // How a tail was cut and whether it is text are additions to the reference (test/reference-envelopes.test.ts).
    const data = withoutSelection(q, r.env.data);
    for (const s of ["stdout", "stderr"])
      for (const k of ["omitted_bytes", "partial_first_line", "binary"]) delete data.streams[s][k];
    expect(data).toEqual(ref.data);
    expect(r.env.warnings).toEqual(ref.warnings);
  }
});

test("feedback of a dead job: verdict, reason, tails, next command", async () => {
  await addJob(q, "--max-retries", "0", "--", "sh", "-c", "echo out; echo 0123456789 >&2; exit 3");
  await drain(q);
  const r = await q.json(["feedback", "1", "--tail-bytes", "4"]);
  expect(r.code).toBe(0);
  const d = r.env.data;
  expect([d.state, d.terminal, d.succeeded, d.exit_code, d.failure_reason, d.last_error]).toEqual([
    "dead",
    true,
    false,
    3,
    "process_exit",
    "exit 3",
  ]);
  expect([d.attempts, d.attempts_total, d.latest_attempt_no]).toEqual([1, 1, 1]);
  expect(withoutSelection(q, d.remediation)).toBe("spoolctl retry 1");
  expect(d.streams.stderr).toMatchObject({ missing: false, size_bytes: 11, tail: "789\n", truncated: true });
  expect(d.streams.stdout).toMatchObject({ missing: false, size_bytes: 4, tail: "out\n", truncated: false });
  expect(typeof d.duration_seconds).toBe("number");
  const text = await q.run(["feedback", "1"]);
  expect(text.stdout).toContain("job 1 dead — process_exit: exit 3");
  expect(withoutSelection(q, text.stdout)).toContain("next: spoolctl retry 1");
});

test("feedback of a done job says succeeded and points at its output", async () => {
  await addJob(q, "--queue", "builds", "--", "echo", "ok");
  let r = await q.json(["feedback", "1"]);
  expect(withoutSelection(q, r.env.data.remediation)).toBe("spoolctl work --drain --queue builds");
  await drain(q, "--queue", "builds");
  r = await q.json(["feedback", "1"]);
  expect([r.env.data.succeeded, r.env.data.exit_code, withoutSelection(q, r.env.data.remediation)]).toEqual([
    true,
    0,
    "spoolctl output 1",
  ]);
  expect(r.env.warnings).toEqual([]);
});

test("feedback: bad --tail-bytes names the flag and the range", async () => {
  await addJob(q, "--", "true");
  const r = await q.json(["feedback", "1", "--tail-bytes", "-5"]);
  expect(r.code).toBe(1);
  expect(r.env.errors[0].message).toContain("--tail-bytes");
  expect(r.env.errors[0].message).toContain("1048576");
});
