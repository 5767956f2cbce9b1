/** `retry`, `cancel` and QueueCTL's `dlq` (SPEC §4–§5, issue 4) through the real CLI. */
import { beforeEach, expect, setDefaultTimeout, test } from "bun:test";
import { selectionFlags } from "../src/commands/selection.ts";
import { keysOf, reference, withoutSelection } from "./support/envelopes.ts";
import { addJob, drain, gatedJob } from "./support/jobs.ts";
import { processLives } from "./support/processes.ts";
import { FAST_KNOBS, type TempQueue, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

setDefaultTimeout(60_000);

let workers: ReturnType<TempQueue["spawn"]>[] = [];
const q = useTempQueue({
  teardown: async () => {
    for (const w of workers) {
      w.kill("SIGKILL");
      await w.exited;
    }
  },
});
beforeEach(() => {
  workers = [];
});

/** A background `work --once` with fast heartbeats. */
function worker(): ReturnType<TempQueue["spawn"]> {
  const w = q.spawn(["work", "--once"], { env: FAST_KNOBS });
  workers.push(w);
  return w;
}

async function deadJob(): Promise<number> {
  const id = await addJob(q, "--max-retries", "0", "--", "sh", "-c", "exit 2");
  await drain(q);
  expect((await q.job(id))?.state).toBe("dead");
  return id;
}

test("retry a dead job: queued with a fresh budget, history kept, event retried", async () => {
  const id = await deadJob();
  const r = await q.json(["retry", String(id)]);
  expect(r.code).toBe(0);
  expect(r.env.data).toEqual({ job_id: id, state: "queued" });
  const row = (await q.job(id))!;
  expect([row.state, row.attempts, row.crashes, row.finished_at, row.locked_by]).toEqual(["queued", 0, 0, null, null]);
  expect((await q.attempt(id, 1))?.state).toBe("failed");
  expect(await q.eventNames(id)).toEqual(["added", "claimed", "failed", "dead", "retried"]);
  await drain(q);
  expect((await q.job(id))?.last_attempt_no).toBe(2);
  expect((await q.run(["retry", String(id)])).stdout).toBe(`Retried job ${id}; now queued\n`);
});

test("retry: done → CONFLICT (5) with a remediation; queued → CONFLICT; unknown → NOT_FOUND like the reference", async () => {
  const done = await addJob(q, "--", "true");
  await drain(q);
  let r = await q.json(["retry", String(done)]);
  expect([r.code, r.env.errors[0].code]).toEqual([5, "CONFLICT"]);
  // The remediation names rerun, the verb that runs a done job again (test/rerun.test.ts).
  expect(r.env.errors[0].remediation).toMatch(new RegExp(`spoolctl rerun --db \\S+ ${done}$`));
  const queued = await addJob(q, "--", "true");
  r = await q.json(["retry", String(queued)]);
  expect([r.code, r.env.errors[0].code]).toEqual([5, "CONFLICT"]);
  r = await q.json(["retry", "42"]);
  // The hint names `list` (which shows ids) with the queue's selection; the reference's
  // `spoolctl status  (to list job ids)` led nowhere: status only counts jobs.
  const list = `run: spoolctl list ${selectionFlags({ dbPath: q.location().dbPath, source: "env" })}  (to see job ids)`;
  expect(r.env.errors[0].remediation).toBe(list);
  const ref = reference("envelope-retry-not-found.json");
  if (ref) {
    expect(withoutSelection(q, r.env.errors)).toEqual([
      { ...ref.errors[0], remediation: "run: spoolctl list  (to see job ids)" },
    ]);
    expect(r.code).toBe(ref.errors[0].exit_code);
  }
  for (const args of [
    ["cancel", "999"],
    ["wait", "999"],
    ["feedback", "999"],
  ]) {
    const nf = await q.json(args);
    expect([args[0], nf.env.errors[0].code, nf.env.errors[0].remediation]).toEqual([args[0], "NOT_FOUND", list]);
  }
});

test("retry without ids or --all fails fast with MISSING_REQUIRED; filters need --all", async () => {
  let r = await q.json(["retry"]);
  expect([r.code, r.env.errors[0].code]).toEqual([1, "MISSING_REQUIRED"]);
  r = await q.json(["retry", "--state", "dead"]);
  expect([r.code, r.env.errors[0].code]).toEqual([1, "INVALID_INPUT"]);
  r = await q.json(["retry", "--all", "--state", "done"]);
  expect([r.code, r.env.errors[0].code]).toEqual([1, "INVALID_INPUT"]);
  expect(await q.exists()).toBe(false);
});

test("retry several ids is all or nothing", async () => {
  const a = await deadJob();
  const b = await addJob(q, "--", "true");
  await drain(q);
  const r = await q.json(["retry", String(a), String(b)]);
  expect(r.code).toBe(5);
  expect((await q.job(a))?.state).toBe("dead");
  const c = await deadJob();
  const ok = await q.json(["retry", String(a), String(c)]);
  expect(ok.code).toBe(0);
  expect(ok.env.data).toEqual({
    count: 2,
    jobs: [
      { job_id: a, state: "queued" },
      { job_id: c, state: "queued" },
    ],
  });
});

test("retry --all --state dead --queue Q --tag K=V requeues exactly the matches in one go", async () => {
  const ids: number[] = [];
  for (const [queue, tag] of [
    ["a", "ci=1"],
    ["a", "ci=2"],
    ["b", "ci=1"],
    ["a", "ci=1"],
  ]) {
    ids.push(await addJob(q, "--queue", queue!, "--tag", tag!, "--max-retries", "0", "--", "false"));
  }
  await drain(q, "--queue", "a");
  await drain(q, "--queue", "b");
  const r = await q.json(["retry", "--all", "--state", "dead", "--queue", "a", "--tag", "ci=1"]);
  expect(r.code).toBe(0);
  expect(r.env.data.count).toBe(2);
  expect(r.env.data.jobs.map((j: any) => j.job_id)).toEqual([ids[0], ids[3]]);
  expect(await Promise.all(ids.map(async (id) => (await q.job(id))?.state))).toEqual([
    "queued",
    "dead",
    "dead",
    "queued",
  ]);
  const none = await q.json(["retry", "--all", "--queue", "nothing-here"]);
  expect([none.code, none.env.data.count]).toEqual([0, 0]);
});

test("retry refuses when the job's key now belongs to another active job", async () => {
  await addJob(q, "--key", "k1", "--max-retries", "0", "--", "false");
  await drain(q);
  const second = await addJob(q, "--key", "k1", "--", "true");
  expect(second).toBe(2);
  const r = await q.json(["retry", "1"]);
  expect([r.code, r.env.errors[0].code]).toEqual([5, "IDEMPOTENCY_CONFLICT"]);
  expect(r.env.errors[0].message).toContain("active job 2");
});

test("two dead jobs with one key: retry 1 2 and dlq retry are refused (IDEMPOTENCY_CONFLICT), retry --all requeues the newest and warns", async () => {
  for (let i = 0; i < 2; i++) {
    await addJob(q, "--key", "k", "--max-retries", "0", "--", "false");
    await drain(q);
  }
  await addJob(q, "--max-retries", "0", "--", "false"); // a third dead job, without a key
  await drain(q);
  const before = await q.snapshot();
  const both = await q.json(["retry", "1", "2"]);
  expect([both.code, both.env.errors[0].code]).toEqual([5, "IDEMPOTENCY_CONFLICT"]);
  expect(both.env.errors[0].message).toContain("jobs 1 and 2 share the key");
  expect(both.env.errors[0].message).not.toContain("unexpected");
  expect(await q.snapshot()).toEqual(before); // all or nothing
  const human = await q.run(["retry", "1", "2"]);
  expect([human.code, human.stderr]).toEqual([5, expect.stringContaining("IDEMPOTENCY_CONFLICT")]);

  const all = await q.json(["retry", "--all"]);
  expect(all.code).toBe(0);
  expect(all.env.data.jobs.map((j: { job_id: number }) => j.job_id)).toEqual([2, 3]);
  expect(all.env.warnings).toEqual([
    { code: "IDEMPOTENCY_KEY_HELD", message: expect.stringContaining("job 1 was not retried") },
  ]);
  expect([(await q.job(1))?.state, (await q.job(2))?.state, (await q.job(3))?.state]).toEqual([
    "dead",
    "queued",
    "queued",
  ]);

  const dlq = await q.json(["dlq", "retry", "1"]);
  expect([dlq.code, dlq.env.errors[0].code]).toEqual([5, "IDEMPOTENCY_CONFLICT"]);
  // Once the holder ends, the key is free again.
  await drain(q);
  expect((await q.json(["retry", "1"])).code).toBe(0);
});

test("retry a running job needs --force; forced, the old worker's late result changes nothing", async () => {
  const gate = gatedJob(q, "force");
  const id = await addJob(q, "--", ...gate.argv);
  const w = worker();
  await waitFor("the job to run", async () => gate.pid() !== null && (await q.job(id))?.state === "running");
  let r = await q.json(["retry", String(id)]);
  expect([r.code, r.env.errors[0].code]).toEqual([2, "SAFETY_BLOCK"]);
  expect(r.env.errors[0].remediation).toContain("--force");
  r = await q.json(["retry", String(id), "--force"], { env: FAST_KNOBS }); // hold-off: 0.2 s heartbeat + 5 s grace + 1 s
  expect(r.code).toBe(0);
  expect(await q.job(id)).toMatchObject({ state: "queued", locked_by: null, attempts: 0 });
  expect(await q.attempt(id, 1)).toMatchObject({
    state: "canceled",
    failure_reason: "canceled",
    error: "abandoned by retry --force",
  });
  gate.release();
  expect(await w.exited).toBe(0);
  const stderr = await new Response(w.stderr).text();
  expect(stderr).toContain("result not recorded");
  // The late "succeeded" of attempt 1 was refused: still queued, attempt 1 still canceled.
  expect((await q.job(id))?.state).toBe("queued");
  expect((await q.attempt(id, 1))?.state).toBe("canceled");
  await drain(q);
  expect((await q.job(id))?.state).toBe("done");
  expect((await q.attempt(id, 2))?.state).toBe("succeeded");
});

test("retry --force: the old worker kills the abandoned attempt's process within a heartbeat (as --help and the README say)", async () => {
  const gate = gatedJob(q, "forcekill");
  const id = await addJob(q, "--", ...gate.argv);
  worker();
  await waitFor("the job to run", async () => gate.pid() !== null && (await q.job(id))?.state === "running");
  const pid = gate.pid()!;
  expect((await q.json(["retry", String(id), "--force"], { env: FAST_KNOBS })).code).toBe(0);
  // A second, idle worker is ready to claim it at once; the forced job is due only after
  // a heartbeat plus the kill grace, so attempt 2 never runs beside attempt 1.
  const second = q.spawn(["work"], { env: FAST_KNOBS });
  workers.push(second);
  // Never released: only the worker's kill ends it.
  await waitFor("the abandoned attempt's process to be killed", async () => !processLives(pid), 30_000);
  await waitFor("attempt 2 to start", async () => (await q.attempt(id, 2)) !== null, 30_000);
  expect(processLives(pid)).toBe(false);
  const attempt1 = await q.attempt(id, 1);
  const attempt2 = await q.attempt(id, 2);
  expect(attempt2!.started_at).toBeGreaterThanOrEqual(attempt1!.finished_at! + 5);
  const help = await q.run(["retry", "--help"]);
  expect(help.stdout).toContain("its worker kills its process within a heartbeat");
});

test("cancel a queued job: canceled at once, event canceled, shape of envelope-cancel-queued.json", async () => {
  const id = await addJob(q, "--", "true");
  const r = await q.json(["cancel", String(id)]);
  expect(r.code).toBe(0);
  const ref = reference("envelope-cancel-queued.json");
  expect(r.env.data).toEqual(ref ? ref.data : { job_id: 1, state: "canceled", was_running: false });
  if (ref) expect(keysOf(r.env.meta)).toEqual(keysOf(ref.meta));
  expect((await q.job(id))?.state).toBe("canceled");
  expect(await q.eventNames(id)).toEqual(["added", "canceled"]);
  // A worker never runs it.
  await drain(q);
  expect((await q.job(id))?.last_attempt_no).toBe(0);
  // Canceling it again: it is terminal → CONFLICT; retry brings it back.
  const again = await q.json(["cancel", String(id)]);
  expect([again.code, again.env.errors[0].code]).toEqual([5, "CONFLICT"]);
  expect((await q.json(["retry", String(id)])).code).toBe(0);
});

test("cancel several ids is all or nothing; no id → MISSING_REQUIRED", async () => {
  const a = await addJob(q, "--", "true");
  const b = await addJob(q, "--", "true");
  await q.run(["cancel", String(b)]);
  const r = await q.json(["cancel", String(a), String(b)]);
  expect(r.code).toBe(5);
  expect((await q.job(a))?.state).toBe("queued");
  const c = await addJob(q, "--", "true");
  const ok = await q.run(["cancel", String(a), String(c)]);
  expect(ok.code).toBe(0);
  expect(ok.stdout).toBe(`Canceled job ${a}\nCanceled job ${c}\n`);
  const none = await q.json(["cancel"]);
  expect([none.code, none.env.errors[0].code]).toEqual([1, "MISSING_REQUIRED"]);
});

test("cancel a running job needs --running --yes; its worker kills the group and records canceled", async () => {
  const gate = gatedJob(q, "cancel");
  const id = await addJob(q, "--", ...gate.argv);
  const w = worker();
  await waitFor("the job to run", async () => gate.pid() !== null && (await q.job(id))?.state === "running");
  for (const flags of [[], ["--running"], ["--yes"]]) {
    const r = await q.json(["cancel", String(id), ...flags]);
    expect([r.code, r.env.errors[0].code]).toEqual([2, "SAFETY_BLOCK"]);
  }
  const r = await q.json(["cancel", String(id), "--running", "--yes"]);
  expect(r.code).toBe(0);
  expect(r.env.data).toEqual({ job_id: id, state: "running", was_running: true });
  expect(r.env.warnings.map((x: any) => x.code)).toEqual(["KILL_ASYNC"]);
  expect(await w.exited).toBe(0);
  expect((await q.job(id))?.state).toBe("canceled");
  expect(await q.attempt(id, 1)).toMatchObject({ state: "canceled", failure_reason: "canceled" });
  expect(processLives(gate.pid()!)).toBe(false);
  expect(await q.eventNames(id)).toEqual(["added", "claimed", "cancel_requested", "canceled"]);
});

test("dlq list = list --state dead; dlq retry ID = retry ID", async () => {
  const dead = await deadJob();
  await addJob(q, "--", "true");
  const list = await q.json(["dlq", "list"]);
  expect(list.code).toBe(0);
  expect(list.env.data.jobs.map((j: any) => j.id)).toEqual([dead]);
  const r = await q.json(["dlq", "retry", String(dead)]);
  expect([r.code, r.env.data.state]).toEqual([0, "queued"]);
});

test("a cancel of a job whose worker is dead is done by cancel itself: the orphan killed, the job canceled at once", async () => {
  const gate = gatedJob(q, "orphan");
  const id = await addJob(q, "--", ...gate.argv);
  const w = worker();
  await waitFor("the job to run", async () => gate.pid() !== null && (await q.job(id))?.state === "running");
  w.kill("SIGKILL");
  await w.exited;
  const r = await q.json(["cancel", String(id), "--running", "--yes"]);
  expect([r.code, r.env.data.state, r.env.warnings]).toEqual([0, "canceled", []]);
  expect((await q.job(id))?.state).toBe("canceled");
  expect(await q.attempt(id, 1)).toMatchObject({ state: "canceled", failure_reason: "canceled" });
  expect(await q.eventNames(id)).toEqual(["added", "claimed", "cancel_requested", "canceled"]);
  expect(processLives(gate.pid()!)).toBe(false);
});
