/**
 * `retry --timeout/--max-retries/--env` (docs/contract.md "Retry's data"): the same
 * operation as triage's "retry with new settings", from a script. Checked
 * through `--json` envelopes validated against the exported schemas, and the
 * queue read through the driver: settings, `retried` events, idempotency-key
 * rules, `--dry-run`, and `feedback`'s next command for a timed-out job.
 */
import { beforeEach, expect, setDefaultTimeout, test } from "bun:test";
import { type Contract, loadContract } from "./support/contract.ts";
import { addJob, drain } from "./support/jobs.ts";
import { useTempQueue } from "./support/temp-queue.ts";

setDefaultTimeout(120_000);

const q = useTempQueue();
let contract: Contract;
beforeEach(async () => {
  contract = await loadContract(q);
});

/** `--json` run whose envelope (and data, when ok) the exported contract accepts. */
async function valid(args: string[]): Promise<{ code: number; env: any }> {
  const r = await q.json(args);
  expect(contract.envelope(r.env)).toEqual([]);
  if (r.env.ok) expect(contract.data(args[0]!, r.env.data)).toEqual([]);
  return r;
}

test("a job dead by timeout: feedback suggests a longer --timeout with the queue selection; retry --timeout --max-retries --env changes them and requeues in one go", async () => {
  const id = await addJob(q, "--max-retries", "0", "--timeout", "1s", "--env", "KEEP=1", "--", "sleep", "30");
  await drain(q);
  expect((await q.job(id))!.state).toBe("dead");

  const fb = await valid(["feedback", String(id), "--db", q.db]);
  expect(fb.env.data.failure_reason).toBe("timeout");
  expect(fb.env.data.remediation).toBe(`spoolctl retry --db ${q.dbWord} ${id} --timeout 2s`);
  const text = await q.run(["feedback", String(id)]);
  expect(text.stdout).toContain(`next: spoolctl retry --db ${q.dbWord} ${id} --timeout 2s`);

  const r = await valid([
    "retry",
    String(id),
    "--timeout",
    "10m",
    "--max-retries",
    "2",
    "--env",
    "A=x y",
    "--env",
    "KEEP=2",
  ]);
  expect(r.code).toBe(0);
  expect(r.env.data).toEqual({
    job_id: id,
    state: "queued",
    changed: { timeout_seconds: { from: 1, to: 600 }, max_retries: { from: 0, to: 2 }, env_set: ["A", "KEEP"] },
  });
  expect(await q.job(id)).toMatchObject({
    state: "queued",
    timeout_seconds: 600,
    max_retries: 2,
    env: { KEEP: "2", A: "x y" },
  });
  const retried = (await q.events(id)).filter((e) => e.event === "retried");
  expect(retried).toHaveLength(1);
  // The ledger names the variables, never their values.
  expect(JSON.parse(retried[0]!.detail!)).toEqual({ from: "dead", changed: r.env.data.changed });
  expect(retried[0]!.detail!).not.toContain("x y");

  // Not timed out: the plain retry is suggested.
  const failing = await addJob(q, "--max-retries", "0", "--queue", "other", "--", "sh", "-c", "exit 3");
  await drain(q, "--queue", "other");
  const plain = await valid(["feedback", String(failing)]);
  expect(plain.env.data.remediation).toBe(`spoolctl retry --db ${q.dbWord} ${failing}`);
});

test("retry --all --failure-reason timeout --timeout: --dry-run changes nothing and says what would change; then exactly the timed-out jobs get the new timeout", async () => {
  const slow = [
    await addJob(q, "--max-retries", "0", "--timeout", "1s", "--", "sleep", "30"),
    await addJob(q, "--max-retries", "0", "--timeout", "1s", "--", "sleep", "31"),
  ];
  const failed = await addJob(q, "--max-retries", "0", "--", "sh", "-c", "exit 4");
  await drain(q);
  const before = JSON.stringify(await q.snapshot());

  const dry = await valid(["retry", "--all", "--failure-reason", "timeout", "--timeout", "90s", "--dry-run"]);
  expect(dry.code).toBe(0);
  expect(dry.env.data).toEqual({
    count: 2,
    dry_run: true,
    jobs: slow.map((job_id) => ({ job_id, state: "queued", changed: { timeout_seconds: { from: 1, to: 90 } } })),
  });
  expect(JSON.stringify(await q.snapshot())).toBe(before);
  const dryText = await q.run(["retry", "--all", "--failure-reason", "timeout", "--timeout", "90s", "--dry-run"]);
  expect(dryText.stdout).toContain(
    `Would retry 2 jobs: ${slow[0]} (timeout 1s → 90s), ${slow[1]} (timeout 1s → 90s) (dry run: nothing changed)`,
  );

  const done = await valid(["retry", "--all", "--failure-reason", "timeout", "--timeout", "90s"]);
  expect(done.env.data.count).toBe(2);
  for (const id of slow) expect(await q.job(id)).toMatchObject({ state: "queued", timeout_seconds: 90 });
  expect(await q.job(failed)).toMatchObject({ state: "dead", timeout_seconds: 300 });
});

test("idempotency keys keep their rules with new settings: two named jobs sharing a key are refused whole; --all requeues the newest and warns", async () => {
  const first = await addJob(q, "--max-retries", "0", "--key", "nightly", "--", "sh", "-c", "exit 1");
  await drain(q);
  const second = await addJob(q, "--max-retries", "0", "--key", "nightly", "--", "sh", "-c", "exit 1");
  await drain(q);
  const before = JSON.stringify(await q.snapshot());

  const both = await valid(["retry", String(first), String(second), "--timeout", "5s"]);
  expect(both.code).toBe(5);
  expect(both.env.errors[0].code).toBe("IDEMPOTENCY_CONFLICT");
  expect(JSON.stringify(await q.snapshot())).toBe(before);

  const all = await valid(["retry", "--all", "--max-retries", "4"]);
  expect(all.code).toBe(0);
  expect(all.env.data.jobs).toEqual([
    { job_id: second, state: "queued", changed: { max_retries: { from: 0, to: 4 } } },
  ]);
  expect(all.env.warnings.map((w: { code: string }) => w.code)).toEqual(["IDEMPOTENCY_KEY_HELD"]);
  expect(await q.job(first)).toMatchObject({ state: "dead", max_retries: 0 });
  expect(await q.job(second)).toMatchObject({ state: "queued", max_retries: 4 });
});

test("bad settings are INVALID_INPUT envelopes and change nothing; --force with new settings is refused", async () => {
  const id = await addJob(q, "--max-retries", "0", "--", "sh", "-c", "exit 1");
  await drain(q);
  const before = JSON.stringify(await q.snapshot());
  for (const bad of [
    ["--timeout", "0"],
    ["--timeout", "soon"],
    ["--max-retries", "-1"],
    ["--env", "1X=2"],
    ["--env", "novalue"],
    ["--force", "--timeout", "5s"],
  ]) {
    const r = await valid(["retry", String(id), ...bad]);
    expect(r.code).toBe(1);
    expect(r.env.errors[0].code).toBe("INVALID_INPUT");
  }
  expect(JSON.stringify(await q.snapshot())).toBe(before);
});

test("capabilities and --help publish the new flags from their definitions", async () => {
  const caps = await valid(["capabilities"]);
  const flags = caps.env.data.verbs.retry.flags as { name: string; type: string; repeatable: boolean }[];
  expect(flags.find((f) => f.name === "timeout")).toMatchObject({ type: "duration", repeatable: false });
  expect(flags.find((f) => f.name === "max-retries")).toMatchObject({ type: "integer", repeatable: false });
  expect(flags.find((f) => f.name === "env")).toMatchObject({ type: "pair", repeatable: true });
  const help = await q.run(["retry", "--help"]);
  expect(help.stdout).toMatch(/--timeout=<DURATION>/);
  expect(help.stdout).toMatch(/^Repeatable.*--env\b/m);
});
