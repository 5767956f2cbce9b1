/**
 * The worker's own process group is never signalled (issue 19 item 9;
 * docs/architecture.md "Orphans"). A worker that is not a group leader (run by
 * `sh -c '… & spoolctl work …'` in a session of its own) shares its group with
 * a process that carries an attempt marker of this queue for an attempt that
 * has no live owner: the orphan sweep at start-up must leave that group alone,
 * with a warning, instead of killing the worker, its shell and their group.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { processLives, startBg, stopProcessesOf } from "./support/processes.ts";
import { CLI, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue({ teardown: stopProcessesOf });

test("a worker that is not a group leader never kills its own group, though a process in it carries a marker", async () => {
  // A queue, so that it has an id for the marker; job 99 does not exist: no live owner.
  expect((await q.run(["add", "--", "true"])).code).toBe(0);
  const marker = `SPOOLCTL_ATTEMPT_TOKEN=${await q.queueId()}-99-1`;
  const pidFile = `${q.dir}/sleeper`;
  const script = `env '${marker}' sleep 600 & echo $! > '${pidFile}'; bun '${CLI}' work --drain; echo "worker exit $?"; kill $!`;
  const sh = startBg(q, ["-c", script], { argv0: ["setsid", "sh"] });
  const code = await Promise.race([sh.exited, Bun.sleep(30000).then(() => "still running")]);
  const sleeper = Number(readFileSync(pidFile, "utf8"));
  expect({ code, stdout: sh.stdout() }).toEqual({ code: 0, stdout: "worker exit 0\n" });
  expect(sh.stderr()).toContain("spoolctl: warning: left process group ");
  expect(sh.stderr()).toContain("alone: it holds this worker");
  expect((await q.job(1))!.state).toBe("done");
  await waitFor("the shell to end the marked sleeper", () => !processLives(sleeper));
});
