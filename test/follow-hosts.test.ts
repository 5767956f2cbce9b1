/**
 * `output --follow` of a job whose host dies (docs/architecture.md "Output"):
 * the follower, on another host, reads the output its worker ships into a
 * shared PostgreSQL queue; when host A dies it says the worker's lease
 * expired, says the reap, and follows the attempt that host B runs, to its
 * end. Hosts are PID and UTS namespaces (test/support/hosts.ts); needs root
 * and util-linux, skipped (visibly) where namespaces cannot be made.
 */
import { afterAll, afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Host, hostsUsable } from "./support/hosts.ts";
import { cliJson, hostEnv, runsOn } from "./support/pg-hosts.ts";
import { pgDatabaseForTest } from "./support/pg-server.ts";
import { CLI } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const USABLE = hostsUsable();
const KNOBS = { SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "0.2", SPOOLCTL_TEST_REAP_THRESHOLD: "2" };
const dir = mkdtempSync(join(tmpdir(), "spoolctl-follow-hosts-"));
const hosts: Host[] = [];
const spawned: ReturnType<typeof Bun.spawn>[] = [];

afterEach(async () => {
  for (const p of spawned.splice(0)) p.kill("SIGKILL");
  await Promise.all(hosts.splice(0).map((h) => h.stop()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test.skipIf(!USABLE)(
  "a follower on another host says host A's worker lost its lease, then follows host B's attempt to the end",
  async () => {
    const url = await pgDatabaseForTest(import.meta.file);
    const env = (name: string) => hostEnv(KNOBS, url, dir, name);
    const a = await Host.start("host-a");
    hosts.push(a);
    const b = await Host.start("host-b");
    hosts.push(b);
    const added = await cliJson(
      env("client"),
      "add",
      "--",
      "sh",
      "-c",
      'echo "on $(hostname)"; [ "$(hostname)" = host-b ] || exec sleep 66',
    );
    expect(added.ok).toBe(true);
    const id = added.data.job_id as number;
    await a.spawn(["bun", CLI, "work", "--worker-id", "a1"], env("host-a"));
    await waitFor("the job to run on host A", () => runsOn(a, "sleep 66"), 30_000);

    // The follower runs here, a third host: no output file, only what A's worker shipped.
    const follower = Bun.spawn(["bun", CLI, "output", String(id), "--follow", "--stream", "stdout"], {
      env: env("client"),
      stdout: "pipe",
      stderr: "pipe",
    });
    spawned.push(follower);
    const out = { stdout: "", stderr: "" };
    const pump = async (s: ReadableStream<Uint8Array>, k: "stdout" | "stderr") => {
      for await (const c of s) out[k] += new TextDecoder().decode(c);
    };
    const pumped = Promise.all([pump(follower.stdout, "stdout"), pump(follower.stderr, "stderr")]);
    await waitFor("the follower to print host A's line", () => out.stdout.includes("on host-a\n"), 30_000);

    await a.stop(); // the host dies: its worker, its watchdog and the job with it
    await waitFor(
      "the follower to say A's lease expired",
      () =>
        out.stderr.includes(`spoolctl: job ${id} attempt 1: worker a1 (pid `) &&
        out.stderr.includes(" on host-a) has not renewed its lease for "),
      30_000,
    );
    await b.spawn(["bun", CLI, "work", "--drain", "--worker-id", "b1"], env("host-b"));
    expect(await follower.exited).toBe(0);
    await pumped;
    expect(out.stdout).toBe("on host-a\non host-b\n");
    expect(out.stderr).toContain(`spoolctl: job ${id} attempt 1 was abandoned: `);
    expect(out.stderr).toContain(`spoolctl: following job ${id} attempt 2\n`);
  },
  120_000,
);
