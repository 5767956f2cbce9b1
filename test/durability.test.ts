/**
 * Durability and the write-ahead log (docs/architecture.md "Durability",
 * "Storage conditions"), on real SQLite files:
 * - what `add` acknowledges is synced to disk first (strace shows the fsync
 *   of the WAL before "Added job N" is written), and a worker syncs its
 *   result; `SPOOLCTL_SYNCHRONOUS=normal` is the documented opt-out;
 * - a burst that grew the WAL leaves nothing behind once a worker is idle.
 *
 * SQLite-only (PostgreSQL's durability and WAL are the server's).
 */
import { expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startBg, startWorker, stopProcessesOf } from "./support/processes.ts";
import { CLI, FAST_KNOBS, ON_POSTGRES, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

const q = useTempQueue({ teardown: stopProcessesOf });

const HAVE_STRACE = Bun.spawnSync(["strace", "-V"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;

function walBytes(): number {
  try {
    return statSync(`${q.db}-wal`).size;
  } catch {
    return 0;
  }
}

/** Keeps a connection to the queue open (so that no command's close checkpoints the WAL); resolves once open. */
async function holdOpen() {
  const script = join(q.dir, "open.ts");
  writeFileSync(
    script,
    `import { Database } from "bun:sqlite";\nconst db = new Database(process.argv[2]);\ndb.query("SELECT count(*) FROM jobs").get();\nconsole.log("open");\nawait Bun.sleep(600000);\ndb.close(); // keeps db reachable: a collected Database closes its file\n`,
  );
  const holder = startBg(q, [], { argv0: ["bun", script, q.db] });
  await waitFor("the queue to be held open", () => holder.stdout().includes("open"), 30000);
  return holder;
}

/** Runs the CLI under strace; returns the trace lines (sync calls and writes to stdout, with file names). */
async function traced(args: string[], env: Record<string, string> = {}): Promise<string[]> {
  const out = join(q.dir, `trace-${Math.random().toString(36).slice(2)}.txt`);
  const proc = Bun.spawn(["strace", "-f", "-y", "-e", "trace=fsync,fdatasync,write", "-o", out, "bun", CLI, ...args], {
    env: q.env(env),
    cwd: q.dir,
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(await proc.exited).toBe(0);
  return readFileSync(out, "utf8").split("\n");
}

const walSync = (line: string) => /f(data)?sync\(\d+<[^>]*queue\.db-wal>\)/.test(line);

test.skipIf(ON_POSTGRES || !HAVE_STRACE)(
  "an add is synced to disk before it is acknowledged; a worker syncs its result; SPOOLCTL_SYNCHRONOUS=normal does not",
  async () => {
    await q.addJob("--", "true"); // the queue exists
    const holder = await holdOpen();
    await q.addJob("--", "true"); // the first frame of a fresh WAL syncs its header whatever the setting: past that
    const lines = await traced(["add", "--", "echo", "durable"]);
    const acked = lines.findIndex((l) => l.includes('"Added job 3\\n"'));
    expect(acked).toBeGreaterThan(0);
    expect(lines.slice(0, acked).some(walSync)).toBe(true);

    const worker = await traced(["work", "--once"], FAST_KNOBS);
    expect(worker.filter(walSync).length).toBeGreaterThanOrEqual(1); // the result (the claim and heartbeats need not be synced)

    const fast = await traced(["add", "--", "echo", "fast"], { SPOOLCTL_SYNCHRONOUS: "normal" });
    const fastAck = fast.findIndex((l) => l.includes('"Added job 4\\n"'));
    expect(fastAck).toBeGreaterThanOrEqual(0); // found; the packed CLI may write nothing before it
    expect(fast.slice(0, fastAck).some(walSync)).toBe(false);
    holder.proc.kill("SIGKILL");
    await holder.exited;
    const bad = await q.run(["add", "--json", "--", "true"], { env: { SPOOLCTL_SYNCHRONOUS: "sometimes" } });
    expect(bad.json.errors[0].code).toBe("INVALID_INPUT");
    expect(bad.json.errors[0].message).toContain("SPOOLCTL_SYNCHRONOUS");
  },
  120000,
);

test.skipIf(ON_POSTGRES)(
  "a burst that grew the write-ahead log leaves nothing behind once a worker is idle",
  async () => {
    await q.addJob("--", "true");
    const w = startWorker(q, [], { env: FAST_KNOBS }); // serves the default lane; the burst goes to another
    await waitFor("the first job to run", async () => (await q.job(1))?.state === "done", 30000);
    const note = "x".repeat(3000);
    const lines = `${Array.from({ length: 800 }, (_, i) =>
      JSON.stringify({ argv: ["echo", String(i)], queue: "burst", note }),
    ).join("\n")}\n`;
    const r = await q.run(["add", "--from", "-", "--json"], { stdin: lines });
    expect(r.code).toBe(0);
    expect(walBytes()).toBeGreaterThan(1024 * 1024); // the burst is in the WAL (the worker's connection keeps it)
    // Truncated: a log that was only checkpointed keeps its size. (Not `=== 0`: the idle worker's
    // heartbeats write a few pages again at once, and a loaded machine can miss the empty moment.)
    await waitFor("the idle worker to truncate the WAL", () => walBytes() < 128 * 1024, 60000);
    expect(w.proc.exitCode).toBeNull();
    expect((await q.jobs()).filter((j) => j.queue === "burst")).toHaveLength(800);
    w.proc.kill("SIGTERM");
    expect(await w.exited).toBe(0);
  },
  120000,
);
