/**
 * What a job leaves running (docs/architecture.md "Leftover processes"): a
 * job whose own process exits while its background processes run on (`cmd &`,
 * `setsid`, `nohup`) ends as it ended, and its worker records a
 * `left_running` event with their PIDs, which `show` and `feedback` report;
 * `add --kill-leftovers` (or the `kill_leftovers` setting, or a `--from`
 * line's `kill_leftovers`) has the worker end them. Real processes, found
 * by the test in /proc.
 */
import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { processLives, stopProcessesOf } from "./support/processes.ts";
import { useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue({ teardown: stopProcessesOf });

/** A job that starts `how` in the background, writes its PID to a file, and exits 0; returns its id and the file. */
async function addLeaving(how: string, ...flags: string[]): Promise<{ id: number; pidFile: string }> {
  const pidFile = join(q.dir, `bg-${Math.random().toString(36).slice(2)}.pid`);
  const id = await q.addJob(...flags, "-c", `${how} sleep 120 >/dev/null 2>&1 & echo $! > '${pidFile}'; echo started`);
  return { id, pidFile };
}

const pidIn = (file: string) => Number(readFileSync(file, "utf8").trim());

async function leftEvents(id: number): Promise<{ attempt: number; pids: number[]; killed: boolean }[]> {
  return (await q.events(id)).filter((e) => e.event === "left_running").map((e) => JSON.parse(e.detail!));
}

test("cmd &, setsid and nohup: the job ends done, and each leftover is recorded by PID, shown by show and feedback", async () => {
  const jobs = [await addLeaving(""), await addLeaving("setsid"), await addLeaving("nohup")];
  // More than 512 PIDs handed out between the leader and its leftover: the look lists /proc instead of reading PID by PID.
  const late = join(q.dir, "late.pid");
  const afterMany = await q.addJob(
    "-c",
    `i=0; while [ $i -lt 600 ]; do /bin/true; i=$((i+1)); done; setsid sleep 120 >/dev/null 2>&1 & echo $! > '${late}'`,
  );
  // The issue's own words: the leftover keeps the attempt's stdout open.
  const literal = await q.addJob("-c", "sleep 120 & echo started");
  const clean = await q.addJob("-c", "sleep 0.2 & wait; echo nothing left");
  const drained = await q.run(["work", "--drain"]);
  expect(drained.code).toBe(0);
  const [lit] = await leftEvents(literal);
  expect(lit).toMatchObject({ attempt: 1, killed: false });
  expect(lit!.pids).toHaveLength(1);
  expect(readFileSync(`/proc/${lit!.pids[0]}/cmdline`, "utf8")).toBe("sleep\x00120\x00");
  expect(drained.stderr).toContain(`job ${literal} attempt 1 succeeded`);
  expect(drained.stderr).toContain(`-> done; 1 process left running (PID ${lit!.pids[0]})`);
  for (const { id, pidFile } of jobs) {
    const pid = pidIn(pidFile);
    expect(processLives(pid)).toBe(true); // left alone by default
    expect((await q.job(id))!.state).toBe("done");
    expect(await leftEvents(id)).toEqual([{ attempt: 1, pids: [pid], killed: false }]);
    expect(drained.stderr).toContain(`job ${id} attempt 1 succeeded (`);
    const show = await q.run(["show", String(id)]);
    expect(show.stdout).toContain(
      `left running  attempt 1 left 1 process running after it exited: PID ${pid}; left alone`,
    );
    const fb = await q.json(["feedback", String(id)]);
    expect(fb.env.data.left_running).toEqual({ attempt: 1, pids: [pid], killed: false });
    const text = await q.run(["feedback", String(id)]);
    expect(text.stdout).toContain(`attempt 1 left 1 process running after it exited: PID ${pid}`);
    expect(text.stdout).toContain("--kill-leftovers");
  }
  expect(await leftEvents(afterMany)).toEqual([{ attempt: 1, pids: [pidIn(late)], killed: false }]);
  expect(await leftEvents(clean)).toEqual([]);
  expect((await q.json(["feedback", String(clean)])).env.data.left_running).toBeUndefined();
}, 120_000);

test("add --kill-leftovers: the worker ends what the job left, and says so", async () => {
  const jobs = [
    await addLeaving("", "--kill-leftovers"),
    await addLeaving("setsid", "--kill-leftovers"),
    await addLeaving("nohup", "--kill-leftovers"),
  ];
  const drained = await q.run(["work", "--drain"]);
  expect(drained.code).toBe(0);
  for (const { id, pidFile } of jobs) {
    const pid = pidIn(pidFile);
    await waitFor(`leftover ${pid} ended`, () => !processLives(pid), 30_000);
    expect(drained.stderr).toContain(`-> done; ended the 1 process it left running (PID ${pid})`);
    expect((await q.job(id))!.state).toBe("done");
    expect(await leftEvents(id)).toEqual([{ attempt: 1, pids: [pid], killed: true }]);
    expect((await q.run(["feedback", String(id)])).stdout).toContain("its worker ended it (--kill-leftovers)");
  }
}, 120_000);

test("the kill_leftovers setting, and kill_leftovers in a --from line, end leftovers too", async () => {
  const byLine = join(q.dir, "line.pid");
  const from = join(q.dir, "jobs.ndjson");
  writeFileSync(
    from,
    `${JSON.stringify({ command: `sleep 120 >/dev/null 2>&1 & echo $! > '${byLine}'`, kill_leftovers: true })}\n`,
  );
  expect((await q.run(["add", "--from", from])).code).toBe(0);
  expect((await q.run(["work", "--drain"])).code).toBe(0);
  await waitFor("the --from line's leftover ended", () => !processLives(pidIn(byLine)), 30_000);

  expect((await q.run(["config", "set", "kill_leftovers", "on"])).code).toBe(0);
  const { id, pidFile } = await addLeaving("setsid");
  expect((await q.run(["work", "--drain"])).code).toBe(0);
  await waitFor("the leftover ended by the setting", () => !processLives(pidIn(pidFile)), 30_000);
  expect(await leftEvents(id)).toEqual([{ attempt: 1, pids: [pidIn(pidFile)], killed: true }]);
  const bad = join(q.dir, "bad.ndjson");
  writeFileSync(bad, `${JSON.stringify({ command: "true", kill_leftovers: "yes" })}\n`);
  const refused = await q.json(["add", "--from", bad]);
  expect(refused.env.errors[0].message).toContain("kill_leftovers must be true or false");
}, 120_000);
