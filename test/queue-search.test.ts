/**
 * Finding the queue (README "Where the queue lives", docs/architecture.md
 * "Location"): a command in a subfolder of a project uses the project's
 * `.spoolctl/` (the nearest parent holding one, as git finds `.git/`), and a
 * reader pointed at a location with no queue says so (NO_QUEUE), in text and
 * under --json, without creating anything.
 */
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useTempQueue } from "./support/temp-queue.ts";

const q = useTempQueue();

/** No SPOOLCTL_DB: the folder decides. */
const FOLDER = { SPOOLCTL_DB: "" };

test("status on a path with no queue warns NO_QUEUE (text and --json), exits 0 and creates nothing", async () => {
  const typo = join(q.dir, "typo", "q.db");
  const text = await q.run(["status", "--db", typo]);
  expect(text.code).toBe(0);
  expect(text.stderr).toBe(
    `spoolctl: warning: NO_QUEUE: no queue exists at ${typo} (given by --db), so it reads as empty; check the path, or start it: spoolctl add --db ${typo} -- CMD ARGS…\n`,
  );
  const json = await q.run(["list", "--json", "--db", typo]);
  expect([json.code, json.json.ok, json.json.warnings.map((w: any) => w.code)]).toEqual([0, true, ["NO_QUEUE"]]);
  // An error on a missing queue carries the warning too: the job is not found because there is no queue.
  const show = await q.run(["show", "--json", "--db", typo, "1"]);
  expect([show.code, show.json.errors[0].code, show.json.warnings.map((w: any) => w.code)]).toEqual([
    1,
    "NOT_FOUND",
    ["NO_QUEUE"],
  ]);
  // A reader that would wait for the queue to appear (events) says so too.
  const events = await q.run(["events", "--json", "--db", typo]);
  expect([events.code, events.json.warnings.map((w: any) => w.code)]).toEqual([0, ["NO_QUEUE"]]);
  expect(existsSync(join(q.dir, "typo"))).toBe(false);
  // An existing queue, empty or not, says nothing of the kind.
  await q.addJob("--", "true");
  expect((await q.run(["status"])).stderr).toBe("");
});

test("a subfolder of a project uses the project's .spoolctl/ queue, like git finds .git/", async () => {
  const project = join(q.dir, "project");
  const deep = join(project, "src", "lib");
  mkdirSync(deep, { recursive: true });
  expect((await q.run(["add", "--", "echo", "from the root"], { cwd: project, env: FOLDER })).code).toBe(0);
  const list = await q.run(["list", "--json"], { cwd: deep, env: FOLDER });
  expect([list.json.warnings, list.json.data.jobs.map((j: any) => j.argv)]).toEqual([[], [["echo", "from the root"]]]);
  const shown = await q.run(["config", "show", "--json"], { cwd: deep, env: FOLDER });
  expect([shown.json.data.values.db_path, shown.json.data.sources.db_path]).toEqual([
    join(project, ".spoolctl", "queue.db"),
    "default",
  ]);
  // A write from the subfolder goes to the same queue, and makes no .spoolctl/ of its own.
  expect((await q.run(["add", "--", "true"], { cwd: deep, env: FOLDER })).code).toBe(0);
  expect(existsSync(join(deep, ".spoolctl"))).toBe(false);
  expect((await q.run(["status", "--json"], { cwd: project, env: FOLDER })).json.data.counts.queued).toBe(2);
});

test("the nearest .spoolctl/ wins; its config.json db_path is relative to that file", async () => {
  const project = join(q.dir, "project");
  const sub = join(project, "tools");
  mkdirSync(join(project, ".spoolctl"), { recursive: true });
  writeFileSync(join(project, ".spoolctl", "config.json"), JSON.stringify({ db_path: "../queues/main.db" }));
  mkdirSync(join(sub, "deeper"), { recursive: true });
  const fromDeeper = await q.run(["config", "show", "--json"], { cwd: join(sub, "deeper"), env: FOLDER });
  expect([
    fromDeeper.json.data.values.db_path,
    fromDeeper.json.data.sources.db_path,
    fromDeeper.json.data.config_path,
  ]).toEqual([join(project, "queues", "main.db"), "project_config", join(project, ".spoolctl", "config.json")]);
  // A folder of its own: `mkdir .spoolctl` starts a separate queue there.
  mkdirSync(join(sub, ".spoolctl"));
  const own = await q.run(["config", "show", "--json"], { cwd: join(sub, "deeper"), env: FOLDER });
  expect(own.json.data.values.db_path).toBe(join(sub, ".spoolctl", "queue.db"));
});

test("a URL scheme without a driver is refused (flag, SPOOLCTL_DB, config.json) and no folder named after it appears", async () => {
  for (const [args, env] of [
    [["status", "--json", "--db", "mysql://u:secret@h/db"], FOLDER],
    [["add", "--json", "--db", "sqlite:///tmp/x.db", "--", "true"], FOLDER],
    [["list", "--json"], { SPOOLCTL_DB: "redis://h:6379/0" }],
  ] as const) {
    const r = await q.run([...args], { env });
    expect([r.code, r.json.errors[0].code]).toEqual([1, "INVALID_INPUT"]);
    expect(r.json.errors[0].message).toMatch(/unsupported database URL scheme (mysql|sqlite|redis):\/\//);
    expect(r.stdout).not.toContain("secret");
  }
  mkdirSync(join(q.dir, ".spoolctl"));
  writeFileSync(join(q.dir, ".spoolctl", "config.json"), JSON.stringify({ db_path: "pg://h/db" }));
  const fromConfig = await q.run(["status", "--json"], { env: FOLDER });
  expect([fromConfig.code, fromConfig.json.errors[0].message]).toEqual([
    1,
    expect.stringContaining("unsupported database URL scheme pg://"),
  ]);
  for (const name of ["mysql:", "sqlite:", "redis:", "pg:"]) expect(existsSync(join(q.dir, name))).toBe(false);
});
