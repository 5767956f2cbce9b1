/**
 * The contract test of issue 4: every verb, run with --json on a populated
 * queue (jobs done, dead, canceled, queued, scheduled and running, with
 * attempts, events and a live worker), prints an envelope that validates
 * against the schemas `spoolctl schema --json` itself exports — the envelope
 * schema, and the verb's data schema when it succeeded. Error envelopes and
 * the NDJSON frames of `events --follow` are validated too.
 */
import { beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { VERBS } from "../src/commands/registry.ts";
import { type Contract, compileContract, loadContract, verbOf } from "./support/contract.ts";
import { gatedJob } from "./support/jobs.ts";
import { type BgProc, startWorker, stopProcessesOf } from "./support/processes.ts";
import { FAST_KNOBS, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";
import { startUi } from "./support/web.ts";

// The preload's default timeout does not reach every file when the whole suite runs (Bun 1.4.5): real processes on a loaded machine need more than 5 s.
setDefaultTimeout(120_000);

let contract: Contract;
let worker: BgProc;
let gate: ReturnType<typeof gatedJob>;
const q = useTempQueue({
  scope: "file",
  teardown: async () => {
    gate?.release();
    await stopProcessesOf(q);
  },
});
const ids: Record<string, number> = {};
/** Verbs whose success envelope was validated against their data schema. */
const covered = new Set<string>();

/** Inserts `--json` before a bare `--` (after it, it would be part of the job's command). */
function withJson(args: string[]): string[] {
  const i = args.indexOf("--");
  return i === -1 ? [...args, "--json"] : [...args.slice(0, i), "--json", ...args.slice(i)];
}

/** Runs `args --json`, validates the envelope (and the data on success), returns it. */
async function check(args: string[], opts: { code?: number; stdin?: string; error?: string } = {}): Promise<any> {
  const run = await q.run(withJson(args), { stdin: opts.stdin, env: FAST_KNOBS });
  let parsed: any = null;
  try {
    parsed = JSON.parse(run.stdout);
  } catch {
    // reported below
  }
  const r = { code: run.code, env: parsed, stderr: run.stderr };
  const where = `spoolctl ${withJson(args).join(" ")} → exit ${r.code}\n${run.stdout.slice(0, 2000)}\nstderr: ${r.stderr}`;
  expect([where, typeof parsed]).toEqual([where, "object"]);
  expect([where, r.code]).toEqual([where, opts.code ?? (opts.error ? r.env?.errors?.[0]?.exit_code : 0)]);
  expect([where, r.env.ok]).toEqual([where, !opts.error]);
  expect([where, contract.envelope(r.env)]).toEqual([where, []]);
  expect([where, r.stderr.includes("    at ")]).toEqual([where, false]);
  if (opts.error) {
    expect([where, r.env.errors[0].code, r.env.data]).toEqual([where, opts.error, null]);
    expect(r.env.errors[0].exit_code).toBe(r.code);
    return r.env;
  }
  expect([where, r.env.errors]).toEqual([where, []]);
  const verb = args.includes("--help") ? null : verbOf(args);
  if (verb) {
    expect([where, contract.data(verb, r.env.data)]).toEqual([where, []]);
    covered.add(verb);
  }
  return r.env;
}

beforeAll(async () => {
  contract = await loadContract(q);
  // Retries without backoff, so the populated queue is built quickly.
  await check(["config", "set", "backoff-cap", "0"]);
  const add = async (...args: string[]) => (await check(["add", ...args])).data.job_id as number;
  ids.done = await add(
    "--tag",
    "team=a",
    "--note",
    "first job",
    "--key",
    "k-done",
    "--env",
    "FOO=bar",
    "--",
    "sh",
    "-c",
    "echo out; echo err >&2",
  );
  ids.dead = await add("--max-retries", "1", "--tag", "team=b", "--", "sh", "-c", "echo boom >&2; exit 3");
  ids.canceled = await add("--", "true");
  ids.spawnFailed = await add("--max-retries", "0", "--", "/nonexistent/spoolctl-test-binary");
  await check(["cancel", String(ids.canceled)]);
  await check(["work", "--drain"]);
  gate = gatedJob(q, "long");
  ids.running = await add("--queue", "slow", "--key", "k-running", "--", ...gate.argv);
  worker = startWorker(q, ["--queue", "slow", "--worker-id", "w-slow"], { env: FAST_KNOBS });
  await waitFor("the long job to run", () => gate.pid() !== null, 30000);
  ids.queued = await add("--priority", "5", "--key", "k-queued", "--tag", "team=a", "--", "echo", "later");
  ids.scheduled = await add("--after", "1h", "--", "echo", "scheduled");
}, 120_000);

test("the exported schemas compile under Ajv's strict 2020-12 mode", () => {
  expect(contract.exported.dialect).toBe("https://json-schema.org/draft/2020-12/schema");
  expect(Object.keys(contract.exported.verbs).sort()).toEqual(Object.keys(VERBS).sort());
  // The same export built in-process compiles too (no drift between CLI and module).
  expect(() => compileContract(contract.exported)).not.toThrow();
});

test("read verbs on a populated queue validate against their exported schemas", async () => {
  const status = await check(["status"]);
  expect(status.data.counts).toMatchObject({ done: 1, dead: 2, canceled: 1, running: 1, queued: 2 });
  expect(status.data.scheduled).toBe(1);
  expect(status.data.live_workers).toBe(1);
  await Promise.all([
    check(["list"]),
    check(["list", "--state", "dead"]),
    check(["list", "--state", "pending", "--tag", "team=a", "--priority-min", "1"]),
    check(["list", "--limit", "2"]).then((env) =>
      expect(env.meta.pagination).toMatchObject({ limit: 2, truncated: true }),
    ),
    check(["dlq", "list"]),
    check(["workers"]).then((env) =>
      // FAST_KNOBS' 1 s threshold: a loaded machine may show the live worker as stale for a moment.
      expect(env.data.workers[0]).toMatchObject({
        worker_id: "w-slow",
        status: expect.stringMatching(/^(live|stale)$/),
        running_jobs: [ids.running],
      }),
    ),
    check(["workers", "--all"]),
  ]);
  for (const id of Object.values(ids)) {
    await Promise.all([check(["show", String(id)]), check(["feedback", String(id)]), check(["output", String(id)])]);
  }
  await Promise.all([
    check(["show", "k-done"]),
    check(["output", String(ids.done), "--attempt", "1", "--stream", "stdout"]),
    check(["output", String(ids.dead), "--stream", "stderr"]),
    check(["feedback", String(ids.dead), "--tail-bytes", "2"]),
  ]);
  const fb = await check(["feedback", String(ids.queued)]);
  expect(fb.warnings.map((w: any) => w.code)).toEqual(["NO_ATTEMPTS_YET"]);
});

test("events: a page, a long-poll with meta.wait both ways, and --follow NDJSON frames", async () => {
  const page = await check(["events", "--limit", "3"]);
  expect(page.meta.pagination.cursor).toBeGreaterThan(0);
  await check(["events", "--job", String(ids.done)]);
  const hit = await check(["events", "--wait", "--wait-timeout", "5s"]);
  expect(hit.meta.wait.reason).toBe("records_available");
  const miss = await check(["events", "--wait", "--wait-timeout", "0.1", "--since-id", "999999"]);
  expect(miss.meta.wait.reason).toBe("timeout");
  const follow = await q.run(["events", "--follow", "--json", "--max-events", "2"]);
  expect(follow.code).toBe(0);
  const frames = follow.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  expect(frames).toHaveLength(3);
  for (const f of frames) expect(contract.stream("events_follow", f)).toEqual([]);
  for (const f of frames.slice(0, 2)) expect(contract.stream("events_follow_data", f)).toEqual([]);
  expect(frames[2].control).toMatchObject({ type: "end", reason: "max_events", events: 2 });
  const idle = await q.run(["events", "--follow", "--json", "--since-id", "999999", "--idle-timeout", "0.1"]);
  const last = JSON.parse(idle.stdout.trim());
  expect(contract.stream("events_follow", last)).toEqual([]);
  expect(last.control.reason).toBe("idle_timeout");
});

test("ui's first envelope (its URL, printed once it listens) validates against its exported schema", async () => {
  const ui = await startUi(q);
  try {
    const env = JSON.parse(ui.firstLine);
    expect([contract.envelope(env), contract.data("ui", env.data)]).toEqual([[], []]);
    covered.add("ui");
  } finally {
    expect(await ui.stop()).toBe(0);
  }
}, 60_000);

test("contract and config verbs validate against their exported schemas", async () => {
  const cfg = join(q.dir, "spoolctl.json");
  writeFileSync(cfg, JSON.stringify({ db_path: "x.db", colour: "red" }));
  await Promise.all([
    check(["doctor"]),
    check(["capabilities"]),
    check(["schema"]),
    check(["schema", "--verb", "wait"]),
    check(["brief"]),
    check(["completion", "bash"]),
    check(["metrics"]),
    check(["metrics", "--openmetrics"]),
    check(["config", "show"]),
    check(["config-show"]),
    check(["config", "validate"]),
    check(["config", "validate", cfg]),
    check(["config", "get", "max-retries"]),
    check(["report"]),
    check([
      "report",
      String(ids.done),
      String(ids.dead),
      "--junit",
      join(q.dir, "r", "junit.xml"),
      "--markdown",
      join(q.dir, "r", "sum.md"),
    ]),
    check(["report", "--limit", "1"]).then((env) =>
      expect(env.warnings.map((w: any) => w.code)).toEqual(["REPORT_TRUNCATED"]),
    ),
    // Root help, verb help and version: envelopes whose data is the text.
    check(["--help"]),
    check(["add", "--help"]),
    check(["config", "--help"]),
    check(["--version"]),
  ]);
  await check(["config", "set", "timeout", "10m"]);
  await check(["config", "unset", "timeout"]);
});

test("mutating verbs validate against their exported schemas, single and batch forms", async () => {
  // add --from: the {count, jobs} form.
  const many = await check(["add", "--from", "-"], {
    stdin: '{"argv":["true"],"queue":"once"}\n{"command":"exit 0","queue":"once"}\n',
  });
  expect(many.data.count).toBe(2);
  const dedup = await check(["add", "--key", "k-done2", "--tag", "x=1", "--", "true"]);
  const again = await check(["add", "--key", "k-done2", "--tag", "x=2", "--", "true"]);
  expect(again.data).toMatchObject({ job_id: dedup.data.job_id, deduplicated: true });
  expect(again.warnings.map((w: any) => w.code)).toEqual(["IDEMPOTENCY_METADATA_DIFFERS"]);
  await check(["enqueue", '{"id":"qc-1","command":"true","queue":"once"}']);
  // work --once with a claim, --drain of the lane, and an empty --once.
  const once = await check(["work", "--once", "--queue", "once"]);
  expect(once.data.claimed).toBe(true);
  await check(["work", "--drain", "--queue", "once"]);
  await check(["work", "--once", "--queue", "empty-lane"]);
  // wait: all succeeded (0), one canceled (6), and --timeout is an error (validated below).
  await check(["wait", String(ids.done)]);
  const mixed = await check(["wait", String(ids.done), String(ids.canceled), String(ids.dead)], { code: 6 });
  expect(mixed.data.all_succeeded).toBe(false);
  // retry: one, several, --all; dlq retry.
  await check(["retry", String(ids.spawnFailed)]);
  await check(["cancel", String(ids.spawnFailed)]);
  await check(["retry", String(ids.canceled), String(ids.spawnFailed)]);
  await check(["cancel", String(ids.canceled), String(ids.spawnFailed)]);
  const all = await check(["retry", "--all", "--state", "canceled"]);
  expect(all.data.count).toBe(2);
  await check(["cancel", String(ids.canceled)]);
  await check(["dlq", "retry", String(ids.canceled)]);
  await check(["cancel", String(ids.canceled)]);
  // cancel the running job (the worker kills it), with the KILL_ASYNC warning.
  const kill = await check(["cancel", String(ids.running), "--running", "--yes"]);
  expect(kill.data).toMatchObject({ job_id: ids.running, was_running: true });
  // retry --force of a running job needs one running: run another long job.
  await waitFor(
    "the canceled job to end",
    async () => (await q.json(["show", String(ids.running)])).env.data.job.state === "canceled",
    30000,
  );
  const gate2 = gatedJob(q, "long2");
  const running2 = (await check(["add", "--queue", "slow", "--", ...gate2.argv])).data.job_id;
  await waitFor("the second long job to run", () => gate2.pid() !== null, 30000);
  await check(["output", String(running2)]);
  await check(["feedback", String(running2)]);
  await check(["retry", String(running2), "--force"]);
  gate2.release();
  // rerun a finished job (no worker serves its lane: it stays queued), then cancel it again.
  const rerun = await check(["rerun", String(ids.dead)]);
  expect(rerun.data).toMatchObject({ job_id: ids.dead, from: "dead", state: "queued" });
  await check(["cancel", String(ids.dead)]);
  // delete it for good (--yes: off a terminal).
  const deleted = await check(["delete", String(ids.dead), "--yes"]);
  expect(deleted.data).toMatchObject({ count: 1, job_ids: [ids.dead], irreversible: true });
  // lanes: pause (with an end and a reason), list, a ceiling set and cleared, resume.
  const paused = await check(["pause", "slow", "--for", "10m", "--reason", "contract"]);
  expect(paused.data).toMatchObject({ queue: "slow", reason: "contract" });
  const lanes = await check(["lane-list"]);
  expect(lanes.data.lanes.find((l: { queue: string }) => l.queue === "slow")).toMatchObject({ paused: true });
  expect((await check(["lane-set", "slow", "--slots", "2"])).data).toMatchObject({ queue: "slow", slots: 2 });
  expect((await check(["lane-set", "slow", "--slots", "none"])).data).toMatchObject({ slots: null });
  expect((await check(["resume", "slow"])).data).toMatchObject({ queue: "slow", was_paused: true });
  // prune: dry run and real.
  const dry = await check(["prune", "--older-than", "0", "--dry-run"]);
  expect(dry.data.matched).toBeGreaterThan(0);
  const real = await check(["prune", "--older-than", "0", "--state", "done", "--yes"]);
  expect(real.data.deleted_jobs).toBeGreaterThan(0);
  // stop the worker and wait for it.
  gate.release();
  const stop = await check(["stop", "--wait", "--timeout", "30s"]);
  expect(stop.data.stopped).toEqual(["w-slow"]);
  expect(await worker.exited).toBe(0);
  await check(["stop"]);
});

test("schedule and hook verbs validate against their exported schemas", async () => {
  const added = await check([
    "schedule",
    "add",
    "nightly",
    "--cron",
    "0 3 * * *",
    "--tz",
    "Europe/Berlin",
    "--",
    "true",
  ]);
  expect(added.data).toMatchObject({ name: "nightly", tz: "Europe/Berlin", paused: false });
  await check(["schedule", "add", "often", "--every", "1h", "--queue", "sched-none", "--", "true"]);
  const now = await check(["schedule", "run-now", "often"]);
  expect(now.data.key).toStartWith("sched:often:manual:");
  await check(["schedule", "list"]);
  const one = await check(["schedule", "list", "often"]);
  expect(one.data.slots[0]).toMatchObject({ outcome: "manual", job_id: now.data.job_id });
  await check(["schedule", "pause", "often"]);
  await check(["schedule", "resume", "often"]);
  await check(["schedule", "tick"]);
  await check(["schedule", "rm", "often"]);
  await check(["schedule", "rm", "often"], { error: "NOT_FOUND" });
  await check(["schedule", "add", "bad", "--cron", "61 * * * *", "--", "true"], { error: "INVALID_INPUT" });
  await check(["hook", "add", "page", "--on", "dead", "--queue", "sched-none", "--", "true"]);
  await check(["hook", "list"]);
  await check(["hook", "rm", "page"]);
  await check(["schedule", "rm", "nightly"]);
});

test("error envelopes validate against the envelope schema", async () => {
  await Promise.all([
    check(["frobnicate"], { error: "UNKNOWN_COMMAND" }),
    check(["config", "nope"], { error: "UNKNOWN_COMMAND" }),
    check(["list", "--limt", "3"], { error: "UNKNOWN_FLAG" }),
    check(["list", "--limit", "0"], { error: "INVALID_INPUT" }),
    check(["show"], { error: "MISSING_REQUIRED" }),
    check(["show", "424242"], { error: "NOT_FOUND" }),
    check(["prune", "--older-than", "1d"], { error: "SAFETY_BLOCK" }),
    check(["delete", String(ids.queued)], { error: "SAFETY_BLOCK" }),
    check(["retry", String(ids.queued)], { error: "CONFLICT" }),
    check(["add", "--key", "k-queued", "--", "echo", "different"], { error: "IDEMPOTENCY_CONFLICT" }),
    check(["wait", String(ids.scheduled), "--timeout", "0.1"], { error: "TIMEOUT" }),
  ]);
});

test("batch verbs and batch selections validate against their exported schemas", async () => {
  await check(["add", "--batch", "schema-b", "--fail-fast", "--", "true"]);
  await check(["batch", "seal", "schema-b"]);
  await check(["batch", "seal", "schema-empty"]).then((env) =>
    expect(env.warnings.map((w: any) => w.code)).toEqual(["EMPTY_BATCH"]),
  );
  await Promise.all([
    check(["batch", "show", "schema-b"]),
    check(["batch", "list"]),
    check(["status", "--batch", "schema-b"]),
    check(["wait", "--batch", "schema-empty"]),
    check(["list", "--batch", "schema-b"]),
    check(["events", "--batch", "schema-b"]),
    check(["report", "--batch", "schema-b"]),
    check(["batch", "show", "nope"], { error: "NOT_FOUND" }),
    check(["add", "--batch", "schema-b", "--", "true"], { error: "CONFLICT" }),
  ]);
});

test("hold, release, edit and priority validate against their exported schemas", async () => {
  const id = String(await q.addJob("--tag", "schema=hold", "--", "true"));
  await check(["hold", id]);
  await check(["release", "--all", "--tag", "schema=hold", "--dry-run"]);
  await check(["release", id]);
  await check(["edit", id, "--priority", "3", "--env", "A=1", "--", "echo", "edited"]);
  await check(["priority", id, "4"]);
  await check(["edit", id], { error: "MISSING_REQUIRED" });
});

test("every registered verb was validated against its data schema", () => {
  // `triage` is interactive only: under --json it is refused by design (INVALID_INPUT, see test/triage.test.ts).
  const interactiveOnly = ["triage"];
  expect([...covered].sort()).toEqual(
    Object.keys(VERBS)
      .filter((v) => !interactiveOnly.includes(v))
      .sort(),
  );
});
