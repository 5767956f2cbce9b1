/**
 * `hook add --on batch-done` end to end (docs/architecture.md "Hooks"): a sealed batch of three
 * jobs, one of them dead, run by a real worker; the hook's job is added once, in the commit
 * that ends the batch's last job, and runs once with the batch's state and counts in its
 * environment. Runs on the driver SPOOLCTL_TEST_DB selects.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startWorker, stopProcessesOf } from "./support/processes.ts";
import { FAST_KNOBS, useTempQueue } from "./support/temp-queue.ts";
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

test("a batch of 3 with one dead job: its batch-done hook runs once, STATE=failed and the counts", async () => {
  const log = join(q.dir, "hook.log");
  const script = `env | grep ^SPOOLCTL_HOOK_ | sort >> ${log}; echo --- >> ${log}`;
  expect((await cli("hook", "add", "report", "--on", "batch-done", "--", "sh", "-c", script)).on).toBe("batch-done");
  expect((await cli("hook", "list")).hooks.map((h: any) => [h.name, h.on])).toEqual([["report", "batch-done"]]);
  const ids = [
    (await cli("add", "--batch", "ci-7", "--", "true")).job_id,
    (await cli("add", "--batch", "ci-7", "--max-retries", "0", "--", "sh", "-c", "exit 4")).job_id,
    (await cli("add", "--batch", "ci-7", "--seal", "--", "true")).job_id,
  ];
  expect(ids).toHaveLength(3);
  startWorker(q, ["--worker-id", "w-default"], { env: FAST_KNOBS });
  startWorker(q, ["--queue", "hooks", "--worker-id", "w-hooks"], { env: FAST_KNOBS });
  const hookId = await waitFor("the batch-done hook to run", async () => {
    const done = (await cli("list", "--queue", "hooks", "--state", "done")).jobs;
    return done.length === 1 ? (done[0].id as number) : null;
  });
  // Every job of the batch had ended when the hook's job was added, in the same commit as the last end.
  const batch = (await cli("batch", "show", "ci-7")) as any;
  expect(JSON.stringify(batch)).toContain('"dead":1');
  const shown = (await cli("show", String(hookId))).job;
  expect(shown.idempotency_key).toMatch(/^hook:report:batch:\d+:ci-7$/);
  expect(shown.argv).toEqual(["sh", "-c", script]);
  // `show` names what made it.
  const text0 = await q.run(["show", String(hookId)]);
  expect(text0.stdout).toContain("hook report for batch ci-7");
  expect((await cli("list", "--queue", "hooks")).jobs).toHaveLength(1);
  const text = readFileSync(log, "utf8");
  expect(text.split("---\n").filter(Boolean)).toHaveLength(1);
  const env = Object.fromEntries(
    text
      .split("\n")
      .filter((l) => l.includes("="))
      .map((l) => l.split(/=(.*)/s).slice(0, 2)),
  );
  expect(env).toMatchObject({
    SPOOLCTL_HOOK_BATCH: "ci-7",
    SPOOLCTL_HOOK_STATE: "failed",
    SPOOLCTL_HOOK_BATCH_TOTAL: "3",
    SPOOLCTL_HOOK_BATCH_DONE: "2",
    SPOOLCTL_HOOK_BATCH_DEAD: "1",
    SPOOLCTL_HOOK_BATCH_CANCELED: "0",
  });
});

test("--queue and --tag are refused with --on batch-done, with what to do", async () => {
  for (const filter of [
    ["--queue", "work"],
    ["--tag", "k=v"],
  ]) {
    const r = await q.run(["hook", "add", "x", "--on", "batch-done", ...filter, "--json", "--", "true"]);
    expect(r.code).not.toBe(0);
    const [err] = JSON.parse(r.stdout).errors;
    expect(err.code).toBe("INVALID_INPUT");
    expect(err.message).toBe(`${filter[0]} does not apply to --on batch-done: it fires once per batch, not per job`);
    expect(err.remediation).toContain("x --on batch-done -- CMD");
  }
  expect((await cli("hook", "list")).hooks).toEqual([]);
});
