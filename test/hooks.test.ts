/**
 * Outcome hooks end to end (docs/architecture.md "Hooks"): a dead job's hook is a job added in
 * the transaction that made it dead, so a worker SIGKILLed right after the outcome loses
 * nothing; the hook runs once with the outcome in its environment (never in its command line),
 * and a failing hook is a dead job like any other, which triggers no hook itself. Runs on the
 * driver SPOOLCTL_TEST_DB selects.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startWorker, stopProcessesOf } from "./support/processes.ts";
import { CLI, FAST_KNOBS, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

setDefaultTimeout(120_000);

const q = useTempQueue({ teardown: stopProcessesOf });

/** `spoolctl ARGS` with `--json` before the `--`; the envelope's data, after asserting exit 0. */
async function cli(...args: string[]): Promise<any> {
  const i = args.indexOf("--");
  const r = await q.run(i === -1 ? [...args, "--json"] : [...args.slice(0, i), "--json", ...args.slice(i)]);
  expect([args.join(" "), r.code]).toEqual([args.join(" "), 0]);
  return JSON.parse(r.stdout).data;
}

async function job(id: number): Promise<any> {
  return (await cli("show", String(id))).job;
}

test("a dead job's hook survives a worker SIGKILL after the outcome, runs once with the outcome in its env", async () => {
  const log = join(q.dir, "hook.log");
  // The hook's command line is fixed; the values come from the environment only.
  await cli(
    "hook",
    "add",
    "page",
    "--on",
    "dead",
    "--queue",
    "work",
    "--",
    "sh",
    "-c",
    `env | grep ^SPOOLCTL_HOOK_ | sort >> ${log}; echo --- >> ${log}`,
  );
  const id = (await cli("add", "--queue", "work", "--max-retries", "0", "--", "sh", "-c", "echo boom >&2; exit 7"))
    .job_id;
  // A worker of lane work only: it records the death (and, in the same commit, the hook's job), then dies.
  const w = startWorker(q, ["--queue", "work", "--worker-id", "w-work"], { env: FAST_KNOBS });
  await waitFor("the job to die", async () => (await job(id)).state === "dead");
  w.proc.kill("SIGKILL");
  await w.exited;
  const hooks = (await cli("list", "--queue", "hooks")).jobs;
  expect(hooks).toHaveLength(1);
  const hookId = hooks[0].id;
  expect((await job(hookId)).idempotency_key).toBe(`hook:page:${id}:1:dead`);
  startWorker(q, ["--queue", "hooks", "--worker-id", "w-hooks"], { env: FAST_KNOBS });
  await waitFor("the hook to run", async () => (await job(hookId)).state === "done");
  const text = readFileSync(log, "utf8");
  expect(text.split("---\n").filter(Boolean)).toHaveLength(1);
  const env = Object.fromEntries(
    text
      .split("\n")
      .filter((l) => l.includes("="))
      .map((l) => l.split(/=(.*)/s).slice(0, 2)),
  );
  expect(env).toMatchObject({
    SPOOLCTL_HOOK_JOB_ID: String(id),
    SPOOLCTL_HOOK_STATE: "dead",
    SPOOLCTL_HOOK_EXIT_CODE: "7",
    SPOOLCTL_HOOK_LANE: "work",
    SPOOLCTL_HOOK_ATTEMPT: "1",
  });
  expect(readFileSync(env.SPOOLCTL_HOOK_STDERR_FILE!, "utf8")).toBe("boom\n");
  // The hook's argv is what was given: nothing was spliced into it.
  expect((await job(hookId)).argv).toEqual([
    "sh",
    "-c",
    `env | grep ^SPOOLCTL_HOOK_ | sort >> ${log}; echo --- >> ${log}`,
  ]);
});

test("a failing hook is a dead job in triage's list; it triggers no hook itself; canceled and done hooks", async () => {
  await cli("hook", "add", "bad", "--on", "dead", "--max-retries", "0", "--", "sh", "-c", "exit 3");
  await cli("hook", "add", "gone", "--on", "canceled", "--", "true");
  const dying = (await cli("add", "--max-retries", "0", "--", "false")).job_id;
  const canceled = (await cli("add", "--after", "1h", "--", "true")).job_id;
  await cli("cancel", String(canceled));
  startWorker(q, ["--worker-id", "w-default"], { env: FAST_KNOBS });
  startWorker(q, ["--queue", "hooks", "--worker-id", "w-hooks"], { env: FAST_KNOBS });
  await waitFor("the failing hook to die", async () => {
    const dead = (await cli("list", "--queue", "hooks", "--state", "dead")).jobs;
    return dead.length === 1 ? dead : null;
  });
  await waitFor(
    "the cancel hook to run",
    async () => (await cli("list", "--queue", "hooks", "--state", "done")).jobs.length === 1,
  );
  const hooks = (await cli("list", "--queue", "hooks")).jobs;
  // One hook job for the dead job, one for the canceled one; the dead hook job made none.
  expect(hooks).toHaveLength(2);
  const keys = await Promise.all(hooks.map(async (h: any) => (await job(h.id)).idempotency_key));
  expect(keys.sort()).toEqual([`hook:bad:${dying}:1:dead`, `hook:gone:${canceled}:0:canceled`]);
  // Dead like any job: in status's recent dead jobs (triage's entry) and in list --state dead.
  const deadHook = hooks.find((h: any) => h.state === "dead").id;
  const status = await cli("status");
  expect(status.recent_dead.map((j: any) => j.id ?? j.job_id)).toEqual(expect.arrayContaining([dying, deadHook]));
  const dead = (await cli("list", "--state", "dead")).jobs.map((j: any) => j.id);
  expect(dead).toEqual(expect.arrayContaining([dying, deadHook]));
});

test("every path that ends a job adds its hooks: a reap to dead, a cancel of a running job", async () => {
  await cli("hook", "add", "dead", "--on", "dead", "--run-queue", "h", "--", "true");
  await cli("hook", "add", "gone", "--on", "canceled", "--run-queue", "h", "--", "true");
  const reaped = (await cli("add", "--max-crashes", "0", "--", "sleep", "60")).job_id;
  const w = startWorker(q, ["--worker-id", "w-1"], { env: FAST_KNOBS });
  await waitFor("the job to run", async () => (await job(reaped)).state === "running");
  w.proc.kill("SIGKILL");
  await w.exited;
  // The next worker reaps the dead worker's job: out of crash budget, it is dead, and its hook is added with it.
  const w2 = startWorker(q, ["--worker-id", "w-2"], { env: FAST_KNOBS });
  await waitFor("the reap", async () => (await job(reaped)).state === "dead");
  const running = (await cli("add", "--", "sleep", "60")).job_id;
  await waitFor("the second job to run", async () => (await job(running)).state === "running");
  await cli("cancel", String(running), "--running", "--yes");
  await waitFor("the cancel", async () => (await job(running)).state === "canceled");
  w2.proc.kill("SIGTERM");
  const keys = await Promise.all(
    (await cli("list", "--queue", "h")).jobs.map(async (h: any) => (await job(h.id)).idempotency_key),
  );
  expect(keys.sort()).toEqual([`hook:dead:${reaped}:1:dead`, `hook:gone:${running}:1:canceled`]);
});

test("a job added from inside a hook's job is hook-born: no hook fires for it, so a hook cannot loop", async () => {
  // The hook of issue 30 item 6: on every dead job, add another job that dies.
  const add = `bun '${CLI}' add --db '${q.db}' --max-retries 0 -- false`;
  await cli("hook", "add", "loop", "--on", "dead", "--", "sh", "-c", add);
  await cli("add", "--max-retries", "0", "--", "false");
  for (let round = 0; round < 3; round++) {
    expect((await q.run(["work", "--drain"])).code).toBe(0);
    expect((await q.run(["work", "--queue", "hooks", "--drain"])).code).toBe(0);
  }
  const all = (await cli("list", "--limit", "100")).jobs as { id: number; queue: string; state: string }[];
  // The first death fired the hook once; the job its job added died without firing it again.
  expect(all.map((j) => `${j.queue}:${j.state}`).sort()).toEqual(["default:dead", "default:dead", "hooks:done"]);
  const born = await job(3);
  expect(born.tags["spoolctl/hook-born"]).toBe("1");
});

/** `hook add NAME --on dead … --json -- true` (the envelope flag before the command's `--`). */
async function addHookJson(name: string, ...flags: string[]) {
  const r = await q.run(["hook", "add", name, "--on", "dead", ...flags, "--json", "--", "true"]);
  return { code: r.code, env: r.json };
}

test("hook add says loudly when no live worker serves the hook's lane (plain work serves lane default only)", async () => {
  // No worker at all, then one of lane default only: nothing would run the hook's jobs.
  const none = await addHookJson("page");
  expect(none.code).toBe(0);
  expect(none.env.warnings.map((w: { code: string }) => w.code)).toEqual(["HOOK_UNSERVED"]);
  expect(none.env.warnings[0].message).toContain("no live worker serves lane hooks");
  expect(none.env.warnings[0].message).toContain("spoolctl work --db");
  startWorker(q, ["--worker-id", "w-plain"], { env: FAST_KNOBS });
  await waitFor("the plain worker live", async () => (await q.json(["workers"])).env.data.count === 1);
  const text = await q.run(["hook", "add", "page2", "--on", "dead", "--", "true"]);
  expect(text.code).toBe(0);
  expect(text.stderr).toContain("spoolctl: warning: HOOK_UNSERVED: no live worker serves lane hooks");
  // A worker of the hook's lane (or of every lane) serves it: no warning.
  startWorker(q, ["--queue", "hooks", "--worker-id", "w-hooks"], { env: FAST_KNOBS });
  await waitFor("the hooks worker live", async () => (await q.json(["workers"])).env.data.count === 2);
  const served = await addHookJson("page3");
  expect(served.env.warnings).toEqual([]);
  const other = await addHookJson("page4", "--run-queue", "alerts");
  expect(other.env.warnings[0].message).toContain("no live worker serves lane alerts");
});
