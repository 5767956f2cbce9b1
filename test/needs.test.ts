/**
 * Jobs that wait for jobs, end to end through the CLI with real workers
 * (docs/architecture.md "Dependencies"; README "Jobs that wait for jobs").
 * Runs on PostgreSQL with SPOOLCTL_TEST_DB=postgres://….
 *
 * - a chain A → B → C served by 4 workers runs strictly in order;
 * - a need that dies closes its dependents at once (canceled, need_failed,
 *   nothing left queued) and `retry` of it revives them; `--no-cascade` does not;
 * - cycles, a job needing itself and unknown ids are INVALID_INPUT and add nothing;
 * - a `--from` graph of 500 jobs with fan-out and fan-in completes, each job
 *   claimed after all its needs succeeded (ledger order); the hand-off time
 *   from a need's success to its dependent's claim is printed.
 */
import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { graphLines, handoffSeconds, ledgerViolations, randomGraph, rng, summary } from "./support/needs.ts";
import { startWorker, stopProcessesOf } from "./support/processes.ts";
import { parseRunLog, RUN_LOGGER } from "./support/run-log.ts";
import { useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue({ teardown: stopProcessesOf });

const KNOBS = { SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "0.2" };

async function addJson(args: string[], stdin?: string) {
  return q.run(["add", "--json", ...args], stdin === undefined ? {} : { stdin });
}

test("a chain A -> B -> C with 4 workers runs strictly in order; list and show say what waits on what", async () => {
  const script = `${q.dir}/job.sh`;
  const log = `${q.dir}/runs.log`;
  writeFileSync(script, RUN_LOGGER);
  writeFileSync(log, "");
  const run = (n: number) => ["bash", script, String(n), "0.3", log, `${q.dir}/runs.lock`];
  const a = await q.addJob("--", ...run(1));
  const b = await q.addJob("--needs", String(a), "--", ...run(2));
  const c = await q.addJob("--needs", String(b), "--priority", "9", "--", ...run(3));
  const listed = (await q.json(["list"])).env.data.jobs as { id: number; waiting_on: number[] }[];
  expect(listed.map((j) => [j.id, j.waiting_on])).toEqual([
    [c, [b]],
    [b, [a]],
    [a, []],
  ]);
  expect((await q.json(["show", String(c)])).env.data.job.waiting_on).toEqual([b]);
  expect((await q.run(["show", String(c)])).stdout).toContain(`waits on      job ${b}`);
  const status = (await q.json(["status"])).env.data.waiting_on_needs;
  expect(status).toEqual({
    count: 2,
    jobs: [
      { job_id: b, waiting_on: [a] },
      { job_id: c, waiting_on: [b] },
    ],
  });
  for (let i = 0; i < 4; i++) startWorker(q, ["--worker-id", `w${i}`], { env: KNOBS });
  await waitFor("the chain to be done", async () => (await q.jobs()).every((j) => j.state === "done"), 60_000, 50);
  const { runs, problems } = parseRunLog(readFileSync(log, "utf8"));
  expect(problems).toEqual([]);
  // Each run starts after the previous one's end line: strictly in order.
  expect(runs.map((r) => r.job)).toEqual([1, 2, 3]);
  expect(runs[1]!.startLine).toBeGreaterThan(runs[0]!.endLine!);
  expect(runs[2]!.startLine).toBeGreaterThan(runs[1]!.endLine!);
  const snap = await q.snapshot();
  expect(ledgerViolations(snap, [[], [0], [1]], [a, b, c])).toEqual([]);
  console.log(
    `chain hand-off (${q.driver}): ${JSON.stringify(summary(handoffSeconds(snap, [[], [0], [1]], [a, b, c])))}`,
  );
}, 90_000);

test("a need that dies closes its dependents at once, down the chain; retry revives them; --no-cascade does not", async () => {
  const flag = `${q.dir}/ok`;
  const a = await q.addJob("--max-retries", "0", "--", "sh", "-c", `test -f ${flag}`);
  const b = await q.addJob("--needs", String(a), "--", "true");
  const c = await q.addJob("--needs", String(b), "--", "true");
  const d = await q.addJob("--needs", String(a), "--needs-policy", "done", "--", "true");
  const drain = await q.run(["work", "--drain"], { env: KNOBS });
  expect(drain.code).toBe(0);
  const jobs = new Map((await q.jobs()).map((j) => [j.id, j]));
  expect(jobs.get(a)!.state).toBe("dead");
  expect(jobs.get(b)).toMatchObject({ state: "canceled", last_error: `need_failed: job ${a} ended dead` });
  expect(jobs.get(c)).toMatchObject({ state: "canceled", last_error: `need_failed: job ${b} ended canceled` });
  expect(jobs.get(d)!.state).toBe("done"); // policy done: it ran once a ended, however
  expect([...jobs.values()].filter((j) => j.state === "queued")).toEqual([]);
  const closed = (await q.events(b)).at(-1)!;
  expect(closed.event).toBe("canceled");
  expect(JSON.parse(closed.detail!)).toMatchObject({ reason: "need_failed", need: a });
  // A CI report says why a closed dependent was skipped, not only that it was.
  const md = await q.run(["report", String(b), "--markdown"]);
  expect(md.stdout).toContain(`canceled before it ran: need\\_failed: job ${a} ended dead`);
  // Retrying b alone would leave it waiting on a dead job: refused, naming what to do.
  const refused = await q.run(["retry", String(b), "--json"]);
  expect(refused.code).toBe(5);
  expect(refused.json.errors[0].remediation).toContain(`retry job ${a}`);

  writeFileSync(flag, "");
  const retried = await q.run(["retry", String(a)]);
  // Said once: the job's own line names what it revived.
  expect(retried.stdout).toBe(`Retried job ${a}; now queued\nRevived 2 jobs that waited for it: ${b}, ${c}\n`);
  expect((await q.job(b))!.state).toBe("queued");
  expect((await q.json(["show", String(c)])).env.data.job.waiting_on).toEqual([b]);
  expect((await q.run(["work", "--drain"], { env: KNOBS })).code).toBe(0);
  for (const id of [a, b, c]) expect((await q.job(id))!.state).toBe("done");

  // --no-cascade: the need alone comes back; its closed dependent stays canceled.
  const e = await q.addJob("--max-retries", "0", "--", "false");
  const f = await q.addJob("--needs", String(e), "--", "true");
  await q.run(["work", "--drain"], { env: KNOBS });
  expect((await q.job(f))!.state).toBe("canceled");
  const alone = (await q.json(["retry", String(e), "--no-cascade"])).env;
  expect(alone.data.revived).toBeUndefined();
  expect((await q.job(f))!.state).toBe("canceled");
}, 90_000);

test("a canceled or deleted need closes its dependents in the same transaction, and says which", async () => {
  const a = await q.addJob("--", "true");
  const b = await q.addJob("--needs", String(a), "--", "true");
  const c = await q.addJob("--needs", String(b), "--", "true");
  const cancel = await q.run(["cancel", String(a)]);
  expect(cancel.code).toBe(0);
  expect(cancel.stdout).toContain(`Canceled job ${a}\nClosed 2 jobs that needed it: ${b}, ${c}`);
  expect(await q.job(b)).toMatchObject({ state: "canceled", last_error: `need_failed: job ${a} ended canceled` });
  expect(await q.job(c)).toMatchObject({ state: "canceled", last_error: `need_failed: job ${b} ended canceled` });

  // Several named at once: each lists the chain it started; a job with none has no `closed`.
  const d = await q.addJob("--", "true");
  const e = await q.addJob("--needs", String(d), "--", "true");
  const f = await q.addJob("--", "true");
  const many = await q.json(["cancel", String(f), String(d)]);
  expect(many.env.data.jobs).toEqual([
    { job_id: f, state: "canceled", was_running: false },
    { job_id: d, state: "canceled", was_running: false, closed: [e] },
  ]);

  // delete of a queued need closes its dependents first, and lists them.
  const g = await q.addJob("--", "true");
  const h = await q.addJob("--needs", String(g), "--", "true");
  const del = await q.json(["delete", String(g), "--yes"]);
  expect(del.env.data).toMatchObject({ count: 1, job_ids: [g], closed: [h] });
  expect(await q.job(h)).toMatchObject({
    state: "canceled",
    last_error: `need_failed: need deleted: job ${g} was deleted before it ran`,
  });
  const i = await q.addJob("--", "true");
  expect((await q.run(["delete", String(i), "--yes"])).stdout).not.toContain("Closed");
});

test("a job whose need was deleted before it was met is never requeued to wait for ever", async () => {
  await q.setConfig("max_retries", "0");
  // a: deleted while queued (its dependent b closed by the delete); c: dead, its dependent d closed, then deleted.
  const a = await q.addJob("--queue", "held", "--", "true");
  const b = await q.addJob("--queue", "held", "--needs", String(a), "--", "true");
  const c = await q.addJob("--", "false");
  const d = await q.addJob("--needs", String(c), "--", "true");
  expect((await q.run(["work", "--drain"])).code).toBe(0); // the default lane: c dies; a waits in its own lane
  expect(await q.job(d)).toMatchObject({ state: "canceled", last_error: `need_failed: job ${c} ended dead` });
  expect((await q.json(["delete", String(a), String(c), "--yes"])).env.data.closed).toEqual([b]);
  for (const [job, need] of [
    [b, a],
    [d, c],
  ] as const) {
    for (const verb of ["retry", "rerun"]) {
      const r = await q.json([verb, String(job)]);
      expect(r.code).toBe(5);
      expect(r.env.errors[0]).toMatchObject({
        code: "CONFLICT",
        detail: { job_id: job, need_id: need, need_state: "deleted" },
      });
      expect(r.env.errors[0].message).toContain(`needs job ${need}, which was deleted`);
    }
  }
  // --all leaves both out with a warning each, and the queue drains: nothing waits for a need that is gone.
  const all = await q.json(["retry", "--all"]);
  expect(all.env.data.count).toBe(0);
  expect(all.env.warnings.filter((w: { code: string }) => w.code === "NEED_NOT_RETRIED")).toHaveLength(2);
  expect((await q.run(["work", "--drain", "--all-lanes"])).code).toBe(0);
  expect((await q.job(b))!.state).toBe("canceled");
  expect((await q.job(d))!.state).toBe("canceled");
}, 90_000);

test("retry --all leaves a whole closed chain closed while its root need stays dead", async () => {
  const a = await q.addJob("--max-retries", "0", "--", "false");
  const b = await q.addJob("--needs", String(a), "--", "true");
  const c = await q.addJob("--needs", String(b), "--", "true");
  expect((await q.run(["work", "--drain"])).code).toBe(0);
  // b and c are canceled (need_failed); a, dead, is not selected: b is blocked, so c must be too.
  const r = await q.json(["retry", "--all", "--state", "canceled"]);
  expect(r.env.data.count).toBe(0);
  const skipped = r.env.warnings.filter((w: { code: string }) => w.code === "NEED_NOT_RETRIED");
  expect(skipped.map((w: { message: string }) => w.message.split(":")[0])).toEqual([
    `job ${b} was not retried`,
    `job ${c} was not retried`,
  ]);
  for (const id of [b, c]) expect((await q.job(id))!.state).toBe("canceled");
}, 90_000);

test("a revived need holds back its queued done-policy dependents until it ends again", async () => {
  const build = await q.addJob("--", "true");
  const deploy = await q.addJob("--needs", String(build), "--", "true");
  const cleanup = await q.addJob("--needs", String(deploy), "--needs-policy", "done", "--", "true");
  expect((await q.run(["cancel", String(build)])).code).toBe(0);
  // deploy closed: cleanup's need ended, so it may run...
  expect((await q.job(cleanup))!.needs_left).toBe(0);
  // ...until retry revives deploy: then cleanup waits for deploy's new outcome.
  const r = await q.json(["retry", String(build)]);
  expect(r.env.data.revived).toEqual([deploy]);
  const listed = (await q.json(["list"])).env.data.jobs as { id: number; waiting_on: number[] }[];
  expect(listed.find((j) => j.id === cleanup)!.waiting_on).toEqual([deploy]);
  expect((await q.run(["work", "--drain"])).code).toBe(0);
  const order = (await q.json(["events"])).env.data.events
    .filter((e: { event: string }) => e.event === "claimed")
    .map((e: { job_id: number }) => e.job_id);
  expect(order).toEqual([build, deploy, cleanup]);
}, 90_000);

test("rerun of a dead need revives the dependents its failure closed, as retry does", async () => {
  const a = await q.addJob("--max-retries", "0", "--", "sh", "-c", `test -e ${q.dir}/ok`);
  const b = await q.addJob("--needs", String(a), "--", "true");
  const c = await q.addJob("--needs", String(b), "--", "true");
  expect((await q.run(["work", "--drain"])).code).toBe(0);
  expect((await q.job(c))!.state).toBe("canceled");
  writeFileSync(`${q.dir}/ok`, "");
  const r = await q.run(["rerun", String(a)]);
  expect(r.stdout).toContain(`Revived 2 jobs that waited for it: ${b}, ${c}`);
  expect((await q.run(["work", "--drain"])).code).toBe(0);
  for (const id of [a, b, c]) expect((await q.job(id))!.state).toBe("done");
  // A done job's rerun revives nothing and says nothing of it.
  const again = await q.json(["rerun", String(c)]);
  expect(again.env.data.revived).toBeUndefined();
}, 90_000);

test("cycles, a job needing itself, unknown ids and keys are INVALID_INPUT and add nothing", async () => {
  await q.addJob("--", "true");
  const cases: [string[], string | undefined, RegExp][] = [
    [["--needs", "999", "--", "true"], undefined, /no job with id 999/],
    [["--needs", "no-such-key", "--", "true"], undefined, /no job with id, key or name "no-such-key"/],
    [
      ["--from", "-"],
      '{"ref":"a","needs":["c"],"argv":["true"]}\n{"ref":"b","needs":["a"],"argv":["true"]}\n{"ref":"c","needs":["b"],"argv":["true"]}\n',
      /cycle: "a" needs "c" needs "b" needs "a"/,
    ],
    [["--from", "-"], '{"ref":"a","argv":["true"]}\n{"ref":"s","needs":["a","s"],"argv":["true"]}\n', /needs itself/],
    [["--from", "-"], '{"ref":"a","argv":["true"]}\n{"needs":["a", 999],"argv":["true"]}\n', /no job with id 999/],
    [
      ["--from", "-"],
      '{"ref":"a","argv":["true"]}\n{"needs":["a"],"argv":["true"]}\n{"needs":["bulid"],"argv":["true"]}\n',
      /^line 3: --needs: no job with id, key or name "bulid"/,
    ],
    [["--needs-policy", "done", "--", "true"], undefined, /no needs were given/],
  ];
  for (const [args, stdin, message] of cases) {
    const r = await addJson(args, stdin);
    expect({ args, code: r.code, code_name: r.json.errors[0]?.code }).toEqual({
      args,
      code: 1,
      code_name: "INVALID_INPUT",
    });
    expect(r.json.errors[0].message).toMatch(message);
  }
  expect((await q.jobs()).length).toBe(1);
});

test("--needs last on an empty queue says the queue has no job yet, and adds nothing", async () => {
  const r = await addJson(["--needs", "last", "--", "true"]);
  expect([r.code, r.json.errors[0].code]).toEqual([1, "INVALID_INPUT"]);
  expect(r.json.errors[0].message).toBe("--needs last: the queue has no job yet; nothing was added");
  expect(r.json.errors[0].remediation).toContain("drop --needs last");
  expect((await q.jobs()).length).toBe(0);
});

test("add --after N with N an existing job's id keeps the delay and warns NEEDS_MEANT", async () => {
  const a = await q.addJob("--", "true");
  const r = await addJson(["--after", String(a), "--", "true"]);
  expect(r.code).toBe(0);
  expect(r.json.warnings.map((w: { code: string }) => w.code)).toEqual(["NEEDS_MEANT"]);
  expect(r.json.warnings[0].message).toContain(`--needs ${a}`);
  expect((await addJson(["--after", "99", "--", "true"])).json.warnings).toEqual([]);
});

test("--needs on an add its --key deduplicates warns that the active job keeps its own needs", async () => {
  const first = await q.addJob("--key", "b", "--", "true");
  const other = await q.addJob("--", "true");
  const again = (await q.run(["add", "--json", "--key", "b", "--needs", String(other), "--", "true"])).json;
  expect(again.data).toMatchObject({ job_id: first, deduplicated: true });
  expect(again.warnings).toEqual([
    expect.objectContaining({
      code: "IDEMPOTENCY_METADATA_DIFFERS",
      message: expect.stringContaining("--needs were not added"),
    }),
  ]);
  expect((await q.json(["show", String(first)])).env.data.job.waiting_on).toEqual([]);
});

test("a --from graph of 500 jobs with fan-out and fan-in completes, each job after all its needs", async () => {
  const needs = randomGraph(500, rng(20));
  const r = await addJson(
    ["--from", "-"],
    graphLines(needs, () => ["true"]),
  );
  expect(r.code).toBe(0);
  const ids = (r.json.data.jobs as { job_id: number }[]).map((j) => j.job_id);
  expect(ids.length).toBe(500);
  for (let i = 0; i < 4; i++) startWorker(q, ["--worker-id", `g${i}`, "--concurrency", "4"], { env: KNOBS });
  await waitFor(
    "the graph to be done",
    async () => (await q.json(["status"])).env.data.counts.done === 500,
    240_000,
    250,
  );
  const snap = await q.snapshot();
  expect(snap.jobs.filter((j) => j.state !== "done")).toEqual([]);
  expect(ledgerViolations(snap, needs, ids)).toEqual([]);
  console.log(`graph hand-off (${q.driver}, 16 slots): ${JSON.stringify(summary(handoffSeconds(snap, needs, ids)))}`);
}, 300_000);

test("hand-off: a chain of 40 jobs on 2 idle workers; each dependent claimed right after its need's success", async () => {
  const ids: number[] = [];
  const lines = Array.from({ length: 40 }, (_, i) =>
    JSON.stringify({ ref: `c${i}`, ...(i > 0 ? { needs: [`c${i - 1}`] } : {}), argv: ["true"] }),
  );
  const r = await addJson(["--from", "-"], `${lines.join("\n")}\n`);
  ids.push(...(r.json.data.jobs as { job_id: number }[]).map((j) => j.job_id));
  for (let i = 0; i < 2; i++) startWorker(q, ["--worker-id", `h${i}`], { env: KNOBS });
  await waitFor("the chain to be done", async () => (await q.jobs()).every((j) => j.state === "done"), 120_000, 100);
  const snap = await q.snapshot();
  const needs = ids.map((_, i) => (i > 0 ? [i - 1] : []));
  expect(ledgerViolations(snap, needs, ids)).toEqual([]);
  // Claimed in the need's own result commit by the worker that ran it (docs/architecture.md "The claim").
  const claimer = (id: number) => snap.events.find((e) => e.job_id === id && e.event === "claimed")!.worker_id;
  const same = ids.slice(1).filter((id, i) => claimer(id) === claimer(ids[i]!)).length;
  console.log(
    `chain-40 hand-off (${q.driver}), need's succeeded -> dependent's claimed: ${JSON.stringify(summary(handoffSeconds(snap, needs, ids)))}; ${same}/39 claimed by the need's own worker`,
  );
}, 150_000);

test("triage groups the jobs a failure closed under that failure, not with jobs canceled by hand", async () => {
  const a = await q.addJob("--max-retries", "0", "--", "sh", "-c", "echo broke >&2; exit 3");
  const b = await q.addJob("--needs", String(a), "--", "true");
  const c = await q.addJob("--needs", String(b), "--", "true");
  const byHand = await q.addJob("--after", "1h", "--", "true");
  expect((await q.run(["cancel", String(byHand)])).code).toBe(0);
  expect((await q.run(["work", "--drain"], { env: KNOBS })).code).toBe(0);
  const groups = (await q.json(["list", "--state", "dead,canceled", "--group"])).env.data.groups as {
    signature: { state: string };
    job_ids: number[];
    closed_dependents?: number[];
  }[];
  const dead = groups.find((g) => g.signature.state === "dead")!;
  expect(dead.job_ids).toEqual([a]);
  expect(dead.closed_dependents).toEqual([b, c]);
  const canceled = groups.find((g) => g.signature.state === "canceled")!;
  expect(canceled.job_ids).toEqual([byHand]);
  expect(canceled.closed_dependents).toBeUndefined();
  expect((await q.run(["list", "--state", "dead,canceled", "--group"])).stdout).toContain("1 (+2 closed)");
});
