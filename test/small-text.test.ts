/**
 * Small wording (README "Configuration", "Running jobs"): a switch setting is
 * echoed as on/off; counts read "1 attempt", "2 attempts"; `work --once` with
 * nothing due says so (text mode only); a config.json that is not JSON names
 * the line and column.
 */
import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { counted } from "../src/ops/values.ts";
import { jsonErrorPosition } from "../src/store/location.ts";
import { addJob, drain } from "./support/jobs.ts";
import { useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue();

test("config set retry-spawn-failures on/off echoes on/off, as given", async () => {
  const on = await q.run(["config", "set", "retry-spawn-failures", "on"]);
  expect(on.code).toBe(0);
  expect(on.stdout).toStartWith("retry_spawn_failures = on (was off);");
  const off = await q.run(["config", "set", "retry-spawn-failures", "off"]);
  expect(off.stdout).toStartWith("retry_spawn_failures = off (was on);");
  const unset = await q.run(["config", "unset", "retry-spawn-failures"]);
  expect(unset.stdout).toBe("retry_spawn_failures reset to its default off\n");
  // Numbers stay numbers, and JSON keeps the value as stored.
  expect((await q.run(["config", "set", "max-retries", "5"])).stdout).toStartWith("max_retries = 5 (was 3);");
  expect((await q.json(["config", "set", "retry-spawn-failures", "on"])).env.data).toMatchObject({
    value: 1,
    previous: 0,
  });
});

test("counts are singular for one: feedback's verdict and the helper", async () => {
  expect([counted(0, "job"), counted(1, "job"), counted(2, "attempt"), counted(2, "process", "processes")]).toEqual([
    "0 jobs",
    "1 job",
    "2 attempts",
    "2 processes",
  ]);
  const id = await addJob(q, "--max-retries", "0", "--timeout", "1s", "--", "sleep", "30");
  await drain(q);
  const fb = await q.run(["feedback", String(id)]);
  expect(fb.stdout).toStartWith(`job ${id} dead — timeout: timed out after 1s (1 attempt)\n`);
  expect(fb.stdout).not.toContain("(s)");
});

test("work --once with nothing due says so on stderr; --json prints only the envelope", async () => {
  const text = await q.run(["work", "--once"]);
  expect(text.code).toBe(0);
  expect(text.stdout).toBe("");
  expect(text.stderr).toBe(
    `spoolctl: no job due in lane default; nothing ran (spoolctl status --db ${q.dbWord} shows what is queued)\n`,
  );
  const json = await q.run(["work", "--once", "--json"]);
  expect(json.stderr).toBe("");
  expect(json.json.data.claimed).toBe(false);
  // A job due: it runs, and the line about nothing is not printed.
  await addJob(q, "--", "true");
  const ran = await q.run(["work", "--once"]);
  expect(ran.stderr).not.toContain("nothing ran");
});

test("a config.json that is not JSON names its line and column", async () => {
  const project = join(q.dir, "project");
  mkdirSync(join(project, ".spoolctl"), { recursive: true });
  writeFileSync(join(project, ".spoolctl", "config.json"), '{\n  "db_path": "queue.db",\n  "extra": 3,,\n}\n');
  const env = { SPOOLCTL_DB: "" };
  const r = await q.run(["config", "validate"], { cwd: project, env });
  expect(r.stderr).toContain("config.json: not valid JSON at line 3, column 14:");
  const j = await q.run(["status", "--json"], { cwd: project, env });
  expect(j.json.errors[0].message).toContain("not valid JSON at line 3, column 14:");

  expect(jsonErrorPosition('{"a": [1, 2, {"b": "c\\u00e9"}], "d": -1.5e3, "e": null}')).toBeNull();
  expect(jsonErrorPosition('{"a": 1')).toEqual({ line: 1, column: 8 });
  expect(jsonErrorPosition("[1,\n2,\n]")).toEqual({ line: 3, column: 1 });
  expect(jsonErrorPosition("{'a': 1}")).toEqual({ line: 1, column: 2 });
  expect(jsonErrorPosition('{"a": tru}')).toEqual({ line: 1, column: 7 }); // the start of the bad word
  expect(jsonErrorPosition("{} x")).toEqual({ line: 1, column: 4 });
});
