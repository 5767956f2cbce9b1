/**
 * A worker id is free once its holder's lease has expired by the queue's
 * clock, wherever it ran (issue 19 item 3; docs/architecture.md "Heartbeat and
 * lease"). A fixed `--worker-id` whose host died (a PID + UTS namespace,
 * test/support/hosts.ts, torn down with everything in it) is taken over by the
 * next worker started under it: the dead holder's job is reaped by lease and
 * run again, where the new worker used to get `CONFLICT … held by a live
 * worker` for ever. Both drivers; needs root and util-linux.
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { Host, hostsUsable } from "./support/hosts.ts";
import { startWorker } from "./support/processes.ts";
import { CLI, FAST_KNOBS, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

let host: Host | null = null;
const q = useTempQueue({
  teardown: async () => {
    await host?.stop();
    host = null;
  },
});

const LEASE = Number(FAST_KNOBS.SPOOLCTL_TEST_REAP_THRESHOLD);

test.skipIf(!hostsUsable())(
  "a --worker-id whose host died is free once its lease expired: the next worker under it reaps the job and runs it",
  async () => {
    const runs = `${q.dir}/runs`;
    // The first run waits for ever; the second ends at once.
    const script = `echo run >> '${runs}'; [ "$(wc -l < '${runs}')" -ge 2 ] || exec sleep 600`;
    const id = Number((await q.run(["add", "--json", "--", "sh", "-c", script])).json.data.job_id);
    host = await Host.start("host-gone");
    await host.spawn(["bun", CLI, "work", "--worker-id", "W"], q.env(FAST_KNOBS), q.dir);
    await waitFor("the first run", () => existsSync(runs), 30000);
    await host.stop(); // the machine is gone: its worker never stops cleanly, its row stays
    host = null;
    await waitFor(
      "W's lease to expire",
      async () => Date.now() / 1000 - (await q.worker("W"))!.heartbeat_at > LEASE * 1.5,
      30000,
    );
    const w = startWorker(q, ["--worker-id", "W", "--drain"], { env: FAST_KNOBS });
    const code = await Promise.race([w.exited, Bun.sleep(30000).then(() => "still running")]);
    expect({ code, stderr: w.stderr() }).toEqual({ code: 0, stderr: expect.not.stringContaining("CONFLICT") });
    expect(readFileSync(runs, "utf8")).toBe("run\nrun\n");
    const first = (await q.attempt(id, 1))!;
    expect([first.state, first.failure_reason]).toEqual(["abandoned", "worker_crash"]);
    expect(first.error).toContain("on host-gone) lost its lease");
    expect((await q.job(id))!.state).toBe("done");
    expect(w.stderr()).toContain(`reaped job ${id} (worker pid `);
    expect((await q.worker("W"))!.host).not.toBe("host-gone");
  },
  90000,
);

test.skipIf(!hostsUsable())(
  "started while the dead host's lease still runs, the next worker under its id waits for the lease, says so, then takes over",
  async () => {
    const knobs = { SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "0.2", SPOOLCTL_TEST_REAP_THRESHOLD: "6" };
    const runs = `${q.dir}/runs`;
    const script = `echo run >> '${runs}'; [ "$(wc -l < '${runs}')" -ge 2 ] || exec sleep 600`;
    const id = Number((await q.run(["add", "--json", "--", "sh", "-c", script])).json.data.job_id);
    host = await Host.start("host-gone");
    await host.spawn(["bun", CLI, "work", "--worker-id", "W"], q.env(knobs), q.dir);
    await waitFor("the first run", () => existsSync(runs), 30000);
    await host.stop();
    host = null;
    const w = startWorker(q, ["--worker-id", "W", "--drain"], { env: knobs });
    const code = await Promise.race([w.exited, Bun.sleep(40000).then(() => "still running")]);
    expect({ code, stderr: w.stderr() }).toEqual({
      code: 0,
      stderr: expect.stringContaining("on host-gone, which cannot be judged from here; waiting up to "),
    });
    expect((await q.job(id))!.state).toBe("done");
    expect(readFileSync(runs, "utf8")).toBe("run\nrun\n");
    // Reaped by the registration, for the lease it waited out: never taken for a death seen here.
    expect((await q.attempt(id, 1))!.error).toContain(
      "on host-gone) lost its lease (no heartbeat for 6s); a new worker",
    );
    expect(w.stderr()).toContain("on host-gone lost its lease); now queued");
  },
  90000,
);
