/**
 * The self-describing verbs of issue 4 — `doctor`, `capabilities`, `schema`,
 * `brief` — and QueueCTL's `enqueue`, through the real CLI.
 */

import { expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { VERBS } from "../src/commands/registry.ts";
import { ERROR_CODES, WARNING_CODES } from "../src/contract/errors.ts";
import { EVENTS, FAILURE_REASONS, JOB_STATES } from "../src/model/job.ts";
import { SCHEMA_VERSION } from "../src/store/sqlite/migrations.ts";
import { keysOf, reference } from "./support/envelopes.ts";
import { addJob } from "./support/jobs.ts";
import { ON_POSTGRES, useTempQueue } from "./support/temp-queue.ts";

setDefaultTimeout(60_000);

const q = useTempQueue();

test("doctor on a fresh folder: ready, nothing created", async () => {
  const r = await q.json(["doctor"]);
  expect(r.code).toBe(0);
  expect(r.env.data.ready).toBe(true);
  const ids = r.env.data.checks.map((c: any) => c.id);
  // wal, integrity and db_dir_writable are the SQLite driver's checks of its file (src/store/sqlite/inspect.ts).
  const sqliteChecks = q.driver === "sqlite" ? ["wal", "integrity", "db_dir_writable"] : [];
  for (const id of ["config", "db_opens", ...sqliteChecks, "schema_version", "spool_writable", "bun_version"])
    expect(ids).toContain(id);
  expect(r.env.data.config).toMatchObject({ db_path: q.db, db_source: "environment" });
  // Its own checks say the queue is not there yet ("the first write creates it"): no NO_QUEUE warning beside them.
  expect(r.env.warnings).toEqual([]);
  expect((await q.run(["doctor"])).stderr).toBe("");
  expect(await q.exists()).toBe(false);
});

test("doctor on a working queue: every check passes", async () => {
  await addJob(q, "--", "true");
  const r = await q.json(["doctor"]);
  expect(r.code).toBe(0);
  expect(r.env.data.checks.every((c: any) => c.status === "pass")).toBe(true);
  expect(r.env.data.summary).toEqual({ passed: r.env.data.checks.length, warnings: 0, failed: 0, skipped: 0 });
  expect(r.env.data.versions.schema_version).toBe(SCHEMA_VERSION);
});

// SQLite-only: a file that is not a SQLite database at all (doctor's SQLite checks), skipped on PostgreSQL.
test.skipIf(ON_POSTGRES)(
  "doctor on a file that is not a queue: exit 3 with ok:true and ready:false, checks with remediation",
  async () => {
    const junk = join(q.dir, "junk.db");
    writeFileSync(junk, "this is not sqlite at all, not even close".repeat(20));
    const r = await q.json(["doctor", "--db", junk]);
    expect(r.code).toBe(3);
    expect(r.env.ok).toBe(true);
    expect(r.env.data.ready).toBe(false);
    const failed = r.env.data.checks.find((c: any) => c.status === "fail");
    expect(failed.id).toBe("db_opens");
    expect(failed.remediation).toBeTruthy();
    expect(r.env.data.checks.find((c: any) => c.id === "integrity")).toMatchObject({
      status: "skip",
      blocked_by: "db_opens",
    });
    const text = await q.run(["doctor", "--db", junk]);
    expect(text.code).toBe(3);
    expect(text.stdout).toContain("NOT READY");
  },
);

test("capabilities: every registered verb with its flags, codes, states, limits, env", async () => {
  const r = await q.json(["capabilities"]);
  expect(r.code).toBe(0);
  const d = r.env.data;
  expect(Object.keys(d.verbs).sort()).toEqual(Object.keys(VERBS).sort());
  const timeout = d.verbs.wait.flags.find((f: any) => f.name === "timeout");
  expect(timeout).toMatchObject({ flag: "--timeout", type: "duration", minimum: 0, value_required: true });
  const limit = d.verbs.events.flags.find((f: any) => f.name === "limit");
  expect(limit).toMatchObject({ type: "integer", default: "50", minimum: 1, maximum: 10000 });
  expect(d.verbs.add.flags.find((f: any) => f.name === "command").aliases).toEqual(["-c"]);
  expect(d.verbs.retry.mutates).toBe(true);
  expect(d.verbs.cancel.positionals[0]).toMatchObject({ kind: "positional", repeatable: true });
  expect(d.error_codes).toEqual(Object.keys(ERROR_CODES));
  for (const [code, info] of Object.entries(ERROR_CODES))
    expect(d.code_registry[code]).toMatchObject({ exit_code: info.exit_code, retryable: info.retryable });
  for (const code of Object.keys(WARNING_CODES)) expect(d.code_registry[code].appears_in).toEqual(["warnings"]);
  expect(Object.keys(d.exit_codes)).toEqual(["0", "1", "2", "3", "4", "5", "6"]);
  expect(d.job_states).toEqual([...JOB_STATES]);
  expect(d.failure_reasons).toEqual([...FAILURE_REASONS]);
  expect(d.events).toEqual([...EVENTS]);
  expect(d.limits.queue.pattern).toBe("^[A-Za-z0-9][A-Za-z0-9._-]*$");
  expect(Object.keys(d.env_vars)).toEqual(
    expect.arrayContaining(["SPOOLCTL_DB", "SPOOLCTL_TEST_HEARTBEAT_INTERVAL", "SPOOLCTL_TEST_REAP_THRESHOLD"]),
  );
  expect(d.env_vars.SPOOLCTL_TEST_HEARTBEAT_INTERVAL).toMatchObject({ test_knob: true, default: 5 });
  expect(d.compound_commands["dlq list"]).toBe("list --state dead");
  expect(d.compound_commands["config set"]).toBe("config-set");
  expect(d.settings.backoff_base.applies_at).toBe("retry");
});

test("schema: JSON Schema 2020-12 of the envelope, every verb's data, and stream frames", async () => {
  const r = await q.json(["schema"]);
  expect(r.code).toBe(0);
  const d = r.env.data;
  expect(d.dialect).toBe("https://json-schema.org/draft/2020-12/schema");
  expect(Object.keys(d.verbs).sort()).toEqual(Object.keys(VERBS).sort());
  const env = d.envelope_schema;
  expect(env.required.sort()).toEqual(["commands", "data", "errors", "meta", "ok", "tool_version", "warnings"]);
  expect(env.properties.errors.items.properties.code.enum).toEqual(Object.keys(ERROR_CODES));
  expect(env.properties.warnings.items.properties.code.enum).toEqual(Object.keys(WARNING_CODES));
  expect(d.verbs.wait.required.sort()).toEqual(["all_succeeded", "jobs"]);
  expect(Object.keys(d.streams)).toEqual(["events_follow", "events_follow_data", "output_follow_all"]);
  const ref = reference("envelope-schema.json");
  if (ref) {
    expect(keysOf(d)).toEqual(keysOf(ref.data));
    for (const verb of ["wait", "feedback", "events", "prune"]) {
      expect(d.verbs[verb].required.sort()).toEqual([...ref.data.verbs[verb].required].sort());
    }
  }
  const one = await q.json(["schema", "--verb", "prune"]);
  expect(Object.keys(one.env.data.verbs)).toEqual(["prune"]);
  const bad = await q.json(["schema", "--verb", "nope"]);
  expect([bad.code, bad.env.errors[0].code]).toEqual([1, "INVALID_INPUT"]);
});

test("brief: compact text under its budget, naming every verb", async () => {
  const r = await q.json(["brief"]);
  expect(r.code).toBe(0);
  const ref = reference("envelope-brief.json");
  if (ref) expect(keysOf(r.env.data)).toEqual(keysOf(ref.data));
  expect(r.env.data.approx_tokens).toBeLessThanOrEqual(r.env.data.budget_tokens);
  for (const verb of Object.keys(VERBS)) expect(r.env.data.text).toContain(verb);
  const text = await q.run(["brief"]);
  expect(text.stdout).toBe(`${r.env.data.text}\n`);
});

test("enqueue: the id becomes the idempotency key and names the job", async () => {
  let r = await q.json(["enqueue", '{"id":"job1","command":"echo hello","max_retries":3}']);
  expect(r.code).toBe(0);
  expect(r.env.data).toMatchObject({ job_id: 1, id: "job1", state: "queued", deduplicated: false });
  const show = await q.json(["show", "job1"]);
  expect(show.env.data.job).toMatchObject({
    id: 1,
    argv: ["sh", "-c", "echo hello"],
    idempotency_key: "job1",
    max_retries: 3,
  });
  r = await q.json(["enqueue", '{"id":"job1","command":"echo hello"}']);
  expect(r.env.data).toMatchObject({ job_id: 1, deduplicated: true });
  r = await q.json(["enqueue", '{"id":"job1","command":"echo other"}']);
  expect([r.code, r.env.errors[0].code]).toEqual([5, "IDEMPOTENCY_CONFLICT"]);
  expect((await q.run(["enqueue", '{"id":"job2","command":"true"}'])).stdout).toBe("Added job 2 (id job2)\n");
});

test("enqueue rejects bad specs with INVALID_INPUT / MISSING_REQUIRED", async () => {
  const cases: [string[], string][] = [
    [["enqueue"], "MISSING_REQUIRED"],
    [["enqueue", "{nope"], "INVALID_INPUT"],
    [["enqueue", "[1]"], "INVALID_INPUT"],
    [["enqueue", '{"command":"true"}'], "MISSING_REQUIRED"],
    [["enqueue", '{"id":"12","command":"true"}'], "INVALID_INPUT"],
    [["enqueue", '{"id":"a","command":"true","colour":"red"}'], "INVALID_INPUT"],
    [["enqueue", '{"id":"a"}'], "MISSING_REQUIRED"],
    [["enqueue", '{"id":"a","command":"true","max_retries":-1}'], "INVALID_INPUT"],
    [["enqueue", "{}", "{}"], "INVALID_INPUT"],
  ];
  for (const [args, code] of cases) {
    const r = await q.json(args);
    expect([args.join(" "), r.env.errors[0]?.code]).toEqual([args.join(" "), code]);
  }
});

test("every new verb has --help with examples", async () => {
  for (const verb of [
    "wait",
    "feedback",
    "retry",
    "cancel",
    "prune",
    "events",
    "config-show",
    "config-set",
    "doctor",
    "capabilities",
    "schema",
    "brief",
    "enqueue",
  ]) {
    const r = await q.run([verb, "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Examples:");
    expect(r.stdout).toContain(`spoolctl ${verb.startsWith("config-") ? `config ${verb.slice(7)}` : verb}`);
  }
});
