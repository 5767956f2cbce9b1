/**
 * Two PID namespaces with one host name never judge each other's PIDs (issue
 * 19 item 4; docs/architecture.md "Reaping"). Two "hosts" made with `unshare
 * --pid --uts` (test/support/hosts.ts) both named `twin` share one queue, as
 * a restarted container with the same host name would. A worker's identity
 * records its PID namespace, so the twin sees the other's worker as "can't
 * tell" (lease rules), never "dead": same worker id → CONFLICT while the
 * lease lives; another worker id → no reap until the lease expires. Both
 * drivers; needs root and util-linux.
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { Host, hostsUsable } from "./support/hosts.ts";
import { CLI, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const USABLE = hostsUsable();
/** A lease (8 s) that outlasts a live worker's stalls on a loaded machine, heartbeat 0.5 s. */
const LEASE = 8;
const KNOBS = { SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "0.5", SPOOLCTL_TEST_REAP_THRESHOLD: String(LEASE) };

const hosts: Host[] = [];
const q = useTempQueue({
  teardown: async () => {
    await Promise.all(hosts.splice(0).map((h) => h.stop()));
  },
});

async function twin(): Promise<Host> {
  const host = await Host.start("twin");
  hosts.push(host);
  return host;
}

function worker(host: Host, id: string) {
  return host.spawn(["bun", CLI, "work", "--worker-id", id], q.env(KNOBS), q.dir);
}

test.skipIf(!USABLE)(
  "a worker in another PID namespace under the same host name is judged by its lease, never reaped as dead",
  async () => {
    const runs = `${q.dir}/runs`;
    const id = Number(
      (await q.run(["add", "--json", "--", "sh", "-c", `echo run >> '${runs}'; exec sleep 600`])).json.data.job_id,
    );
    const a = await twin();
    await worker(a, "W");
    await waitFor("the job to run on the first twin", () => existsSync(runs), 30000);
    const row = (await q.worker("W"))!;
    expect(row.pid_ns).toMatch(/^\d+$/);

    const b = await twin();
    // The same worker id from the other namespace: its holder cannot be judged from here, and its lease lives.
    const same = await b.run(["bun", CLI, "work", "--worker-id", "W", "--json"], q.env(KNOBS));
    expect(same.code).toBe(5);
    expect(JSON.parse(same.stdout).errors[0].code).toBe("CONFLICT");
    // Another worker id on the twin: it looks at the job (its worker's row names this host) but leaves it alone.
    const other = await worker(b, "B");
    await waitFor("the twin's worker to register", () => q.registered("B"), 30000);
    await Bun.sleep(3000); // a non-event: B reaps every 0.5 s all this time
    expect({ state: (await q.job(id))!.state, locked_by: (await q.job(id))!.locked_by }).toEqual({
      state: "running",
      locked_by: "W",
    });
    expect(readFileSync(runs, "utf8")).toBe("run\n");
    expect(other.stderr()).not.toContain("reaped");

    // The first container goes away for good: its lease decides, as for another host.
    await a.stop();
    const stoppedAt = Date.now() / 1000;
    hosts.splice(hosts.indexOf(a), 1);
    const reaped = await waitFor(
      "the job to be reaped by lease",
      async () => {
        const att = (await q.attempt(id))!;
        return att.state === "running" ? null : att;
      },
      60000,
    );
    expect(reaped.failure_reason).toBe("worker_crash");
    expect(reaped.error ?? "").toContain("in another PID namespace");
    // Not at once, as a certain death would be: only once the lease (last renewed before the stop) expired.
    expect(reaped.finished_at! - stoppedAt).toBeGreaterThan(LEASE / 2);
    await waitFor("the twin's worker to say so", () => other.stderr().includes(`reaped job ${id}`), 30000);
  },
  120000,
);
