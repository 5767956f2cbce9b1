/**
 * Recurring jobs on a PostgreSQL queue shared by hosts (docs/architecture.md "Recurring jobs"):
 * 2 hosts (PID + UTS namespaces, test/support/hosts.ts) with 2 workers each fire an
 * `--every 1s` schedule while workers are SIGKILLed and restarted, with no leader: one job
 * per slot, no slot missing. Needs root and util-linux; skipped (visibly) where namespaces
 * cannot be made.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openQueue } from "../src/store/index.ts";
import { slotOfKey } from "../src/store/recurring.ts";
import type { Store } from "../src/store/store.ts";
import { Host, type HostProcess, hostsUsable } from "./support/hosts.ts";
import { cliJson, hostEnv } from "./support/pg-hosts.ts";
import { type PgServer, startPgServer } from "./support/pg-server.ts";
import { CLI } from "./support/temp-queue.ts";

const USABLE = hostsUsable();
const KNOBS = { SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "0.5", SPOOLCTL_TEST_REAP_THRESHOLD: "4" };

let server: PgServer | null = null;
let dir = "";
let store: Store | null = null;
const hosts: Host[] = [];

afterAll(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.stop()));
  await store?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test.skipIf(!USABLE)(
  "2 hosts x 2 workers, SIGKILLed and restarted, over an --every 1s schedule for 15 s: one job per slot",
  async () => {
    dir = mkdtempSync(join(tmpdir(), "spoolctl-sched-hosts-"));
    server = await startPgServer();
    const url = await server.createDatabase("sched_hosts");
    const envFor = (name: string) => hostEnv(KNOBS, url, dir, name);
    const added = await cliJson(
      envFor("client"),
      "schedule-add",
      "s",
      "--every",
      "1s",
      "--catch-up",
      "all:100",
      "--overlap",
      "allow",
      "--",
      "true",
    );
    expect(added.ok).toBe(true);
    for (const name of ["host-a", "host-b"]) hosts.push(await Host.start(name));
    const start = (h: Host, id: string): Promise<HostProcess> =>
      h.spawn(["bun", CLI, "work", "--worker-id", id], envFor(h.name));
    const workers: HostProcess[] = [];
    for (const h of hosts) for (const n of [0, 1]) workers.push(await start(h, `${h.name}-${n}`));
    const began = performance.now();
    let round = 0;
    // Every 2 s one of the four workers is SIGKILLed and a new one starts on its host.
    while (performance.now() - began < 15_000) {
      await Bun.sleep(2000); // the chaos' own rhythm, not a wait for a state
      const i = round % 4;
      process.kill(workers[i]!.outerPid, "SIGKILL");
      await workers[i]!.proc.exited;
      workers[i] = await start(hosts[Math.floor(i / 2)]!, `${hosts[Math.floor(i / 2)]!.name}-${i % 2}-${++round}`);
    }
    expect((await cliJson(envFor("client"), "schedule-pause", "s")).ok).toBe(true);
    store = await openQueue({ dbPath: url, spoolDir: join(dir, "client.spool"), source: "flag" }, { create: false });
    const jobs = (await store.read(async (tx) => tx.listJobs({ limit: 10_000 }))).filter(
      (j) => slotOfKey(j.idempotency_key)?.schedule === "s",
    );
    const keys = jobs.map((j) => j.idempotency_key!);
    expect(new Set(keys).size).toBe(keys.length);
    const slots = keys.map((k) => Date.parse(slotOfKey(k)!.slot) / 1000).sort((a, b) => a - b);
    expect(slots.length).toBeGreaterThanOrEqual(10);
    const gaps = slots.slice(1).flatMap((t, i) => (t - slots[i]! === 1 ? [] : [[slots[i], t]]));
    expect(gaps).toEqual([]);
    const rows = await store.read(async (tx) => tx.recurring.slotsOf("s", 1000));
    expect(rows.filter((r) => r.outcome !== "fired")).toEqual([]);
    // Both hosts fired slots: no leader (the worker id of each job's `added` event is not kept, so
    // the hosts that ran them stand in: both ran some).
    const ran = new Set<string>();
    for (const j of jobs) {
      const [a] = await store.read(async (tx) => tx.attemptsOf(j.id));
      if (a) ran.add(a.worker_id.replace(/-\d.*$/, ""));
    }
    expect([...ran].sort()).toEqual(["host-a", "host-b"]);
  },
  180_000,
);
