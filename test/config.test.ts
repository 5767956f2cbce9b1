/** `config show|validate|get|set|unset` (SPEC §5–§6, issue 4) through the real CLI. */
import { expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { addJob } from "./support/jobs.ts";
import { useTempQueue } from "./support/temp-queue.ts";

setDefaultTimeout(60_000);

const q = useTempQueue();

test("config show explains the db path, its source, and each setting's effect", async () => {
  const r = await q.json(["config", "show"]);
  expect(r.code).toBe(0);
  const d = r.env.data;
  expect(d.values.db_path).toBe(q.db);
  expect(d.sources.db_path).toBe("environment");
  expect(d.precedence).toEqual(["flag", "environment", "project_config", "default"]);
  expect(d.config_exists).toBe(false);
  expect(d.settings.max_retries).toMatchObject({ value: 3, default: 3, source: "default", applies_at: "add" });
  expect(d.settings.timeout).toMatchObject({ value: 300, applies_at: "add" });
  expect(d.settings.backoff_base).toMatchObject({ value: 2, applies_at: "retry" });
  expect(d.settings.backoff_cap).toMatchObject({ value: 60, applies_at: "retry" });
  const flag = await q.json(["config", "show", "--db", join(q.dir, "other.db")]);
  expect(flag.env.data.sources.db_path).toBe("flag");
  const text = await q.run(["config", "show"]);
  expect(text.stdout).toContain("(from environment)");
  expect(text.stdout).toContain("copied into jobs when added");
  expect(text.stdout).toContain("read when a retry is scheduled");
  expect(await q.exists()).toBe(false);
});

test("config show reads the project config (db_path relative to the file)", async () => {
  mkdirSync(join(q.dir, ".spoolctl"));
  writeFileSync(join(q.dir, ".spoolctl/config.json"), JSON.stringify({ db_path: "../data/q.db", extra: 1 }));
  const env = { SPOOLCTL_DB: "" };
  const r = await q.json(["config", "show"], { env });
  expect(r.env.data).toMatchObject({ config_exists: true, config_valid: true, ignored_keys: ["extra"] });
  expect(r.env.data.values.db_path).toBe(join(q.dir, "data/q.db"));
  expect(r.env.data.sources.db_path).toBe("project_config");
  writeFileSync(join(q.dir, ".spoolctl/config.json"), "{ not json");
  const broken = await q.json(["config", "show"], { env });
  expect(broken.code).toBe(0);
  expect(broken.env.data).toMatchObject({ config_valid: false, settings: null, values: { db_path: null } });
});

test("config set / get / unset, QueueCTL spellings, stored in the queue", async () => {
  let r = await q.json(["config", "set", "max-retries", "5"]);
  expect(r.code).toBe(0);
  expect(r.env.data).toMatchObject({ key: "max_retries", value: 5, previous: 3, source: "database" });
  expect((await q.run(["config", "get", "max_retries"])).stdout).toBe("5\n");
  r = await q.json(["config", "set", "backoff-base", "3"]);
  expect(r.env.data.value).toBe(3);
  r = await q.json(["config", "set", "timeout", "10m"]);
  expect(r.env.data.value).toBe(600);
  r = await q.json(["config", "set", "BACKOFF_CAP", "2m"]);
  expect(r.env.data.value).toBe(120);
  // Copied into jobs at add time.
  const id = await addJob(q, "--", "true");
  expect(await q.job(id)).toMatchObject({ max_retries: 5, timeout_seconds: 600 });
  r = await q.json(["config", "unset", "max-retries"]);
  expect(r.env.data).toMatchObject({ removed: true, value: 3, source: "default" });
  expect((await q.json(["config", "get", "max-retries"])).env.data.source).toBe("default");
});

test("config errors: unknown key with a suggestion, bad values, missing arguments, no action", async () => {
  let r = await q.json(["config", "set", "max-retires", "3"]);
  expect([r.code, r.env.errors[0].code, r.env.errors[0].did_you_mean]).toEqual([1, "INVALID_INPUT", "max_retries"]);
  for (const [key, value] of [
    ["max-retries", "-1"],
    ["max-retries", "1.5"],
    ["backoff-base", "0"],
    ["timeout", "forever"],
    ["backoff-cap", "99d"],
  ]) {
    r = await q.json(["config", "set", key!, value!]);
    expect([r.code, r.env.errors[0].code]).toEqual([1, "INVALID_INPUT"]);
    expect(r.env.errors[0].message).toContain(JSON.stringify(value));
  }
  r = await q.json(["config", "set", "max-retries"]);
  expect([r.code, r.env.errors[0].code]).toEqual([1, "MISSING_REQUIRED"]);
  r = await q.json(["config", "get"]);
  expect([r.code, r.env.errors[0].code]).toEqual([1, "MISSING_REQUIRED"]);
  r = await q.json(["config", "get", "a", "b"]);
  expect([r.code, r.env.errors[0].code]).toEqual([1, "INVALID_INPUT"]);
  r = await q.json(["config", "frobnicate"]);
  expect([r.code, r.env.errors[0].code]).toEqual([1, "UNKNOWN_COMMAND"]);
});

test("config validate: default path, named file, invalid file, unknown keys", async () => {
  let r = await q.json(["config", "validate"]);
  expect(r.code).toBe(0);
  expect(r.env.data).toMatchObject({
    exists: false,
    valid: true,
    format: "json",
    schema_version: 1,
    recognized_keys: ["db_path"],
  });
  writeFileSync(join(q.dir, "good.json"), JSON.stringify({ db_path: "q.db", colour: "blue" }));
  r = await q.json(["config", "validate", "good.json"]);
  expect(r.env.data).toMatchObject({
    exists: true,
    valid: true,
    unknown_keys: ["colour"],
    config_path: join(q.dir, "good.json"),
  });
  writeFileSync(join(q.dir, "bad.json"), JSON.stringify({ db_path: 7 }));
  r = await q.json(["config", "validate", "bad.json"]);
  expect([r.code, r.env.errors[0].code]).toEqual([1, "INVALID_INPUT"]);
  expect(r.env.errors[0].detail).toMatchObject({ valid: false, problem: "db_path must be a non-empty string" });
  r = await q.json(["config", "validate", "missing.json"]);
  expect([r.code, r.env.errors[0].code]).toEqual([1, "NOT_FOUND"]);
  r = await q.json(["config-validate", "good.json"]);
  expect(r.code).toBe(0);
});

test("backoff settings are read when a retry is scheduled, so they apply to jobs already queued", async () => {
  const id = await addJob(q, "--max-retries", "2", "--", "false");
  await q.run(["config", "set", "backoff-base", "7"]);
  await q.run(["config", "set", "backoff-cap", "5m"]);
  expect((await q.run(["work", "--once"])).code).toBe(0);
  const row = (await q.job(id))!;
  const attempt = (await q.attempt(id, 1))!;
  expect(row.state).toBe("queued");
  expect(row.next_run_at - attempt.finished_at!).toBeCloseTo(7, 3);
});
