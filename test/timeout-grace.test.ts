/**
 * The timeout grace path (issue 3, test g; SPEC §4 "Timeout"): SIGTERM to the
 * job's process group, up to 5 s grace while the group lives, SIGKILL. A group
 * that ignores SIGTERM — the leader, or only a grandchild after the leader has
 * died — is SIGKILLed after the grace, and nothing of it is left alive. A child
 * that exits on SIGTERM is simply recorded timed out.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { add } from "./support/jobs.ts";
import { groupMembers, procState, stopProcessesOf } from "./support/processes.ts";
import { useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue({ teardown: stopProcessesOf });

const GRACE_SECONDS = 5;

test("groups that ignore SIGTERM are SIGKILLed after the grace; a job that obeys SIGTERM just times out", async () => {
  // The leader ignores SIGTERM (and so does its sleep: ignored signals survive exec).
  const leader = await add(q, "--timeout", "1", "--max-retries", "0", "-c", "trap '' TERM; sleep 100");
  // The leader dies of SIGTERM, but a grandchild ignoring it lingers in the group.
  const grandchild = await add(
    q,
    "--timeout",
    "1",
    "--max-retries",
    "0",
    "-c",
    "(trap '' TERM; exec sleep 100) & echo $!; sleep 100",
  );
  // Nothing ignores SIGTERM.
  const prompt = await add(q, "--timeout", "1", "--max-retries", "0", "--", "sleep", "100");

  const r = await q.run(["work", "--drain", "--concurrency", "3"]);
  expect(r.code).toBe(0);

  for (const id of [leader, grandchild, prompt]) {
    const a = (await q.attempt(id))!;
    expect({ id, state: a.state, failure_reason: a.failure_reason, job: (await q.job(id))!.state }).toEqual({
      id,
      state: "timed_out",
      failure_reason: "timeout",
      job: "dead",
    });
    expect(a.pgid).toBeGreaterThan(1);
    await waitFor(`job ${id}'s process group to be gone`, () => groupMembers(a.pgid!).length === 0, 10000);
  }

  // The leader that ignored SIGTERM was killed by SIGKILL, after the timeout plus the grace.
  const l = (await q.attempt(leader))!;
  expect(l.signal).toBe(9);
  expect(l.finished_at! - l.started_at).toBeGreaterThanOrEqual(1 + GRACE_SECONDS - 0.1);

  // The grandchild case: the leader died of SIGTERM at once, yet the group was held
  // for the grace (it still lived) and then SIGKILLed — the grandchild included.
  const g = (await q.attempt(grandchild))!;
  expect(g.signal).toBe(15);
  expect(g.finished_at! - g.started_at).toBeGreaterThanOrEqual(1 + GRACE_SECONDS - 0.1);
  const orphanPid = Number(readFileSync(g.stdout_path, "utf8").trim());
  expect(orphanPid).toBeGreaterThan(1);
  const left = procState(orphanPid);
  expect(left === null || left === "Z").toBe(true);

  // The obedient job died of its SIGTERM (no SIGKILL needed).
  const p = (await q.attempt(prompt))!;
  expect(p.signal).toBe(15);
  expect(r.stderr).toMatch(
    new RegExp(`^spoolctl: job ${prompt} attempt 1 timed out after 1s \\(\\d+\\.\\ds\\) -> dead$`, "m"),
  );
}, 60000);
