/**
 * Child processes of the PostgreSQL smoke tests (separate OS processes, each
 * with its own connections):
 *
 * Each says it reached its barrier with a file GO_FILE.ready-PID before waiting for GO_FILE.
 *
 *   bun child.ts open URL SPOOL GO_FILE            opens (migrates) the queue once GO_FILE exists; prints { queueId }
 *   bun child.ts events URL SPOOL GO_FILE N SEED    N write transactions, each appending 1-3 events; every other one
 *                                                   reads them back inside (numbering them early) and holds the
 *                                                   counter lock a random moment before COMMIT; prints { ids, written }
 */
import { existsSync, writeFileSync } from "node:fs";
import { openQueue } from "../../src/store/index.ts";

const [mode, url, spoolDir, go, nArg, seedArg] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string?,
  string?,
];

/** Says it reached the barrier (`GO_FILE.ready-PID`, which the parent counts), then waits for GO_FILE. */
async function waitForGo(): Promise<void> {
  writeFileSync(`${go}.ready-${process.pid}`, "");
  const deadline = Date.now() + 60_000;
  while (!existsSync(go)) {
    if (Date.now() > deadline) throw new Error("no go file");
    await Bun.sleep(2);
  }
}

async function main(): Promise<unknown> {
  if (mode === "open") {
    await waitForGo();
    const store = await openQueue({ dbPath: url, spoolDir, source: "flag" }, { create: true });
    const out = { queueId: store.queueId, exists: store.exists };
    await store.close();
    return out;
  }
  if (mode === "events") {
    const store = await openQueue({ dbPath: url, spoolDir, source: "flag" }, { create: true });
    let seed = Number(seedArg ?? 1);
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const job = await store.write(async (tx) =>
      tx.insertJob(
        {
          argv: ["true"],
          priority: 0,
          queue: "events",
          next_run_at: 0,
          timeout_seconds: 1,
          max_retries: 0,
          max_crashes: null,
          idempotency_key: null,
          tags: {},
          note: null,
          cwd: null,
          env: {},
        },
        store.now(),
      ),
    );
    await waitForGo();
    const ids: number[] = [];
    let written = 0;
    for (let i = 0; i < Number(nArg); i++) {
      const count = 1 + Math.floor(random() * 3);
      const pause = random() * 8;
      const readInside = i % 2 === 0;
      const got = await store.write(async (tx) => {
        for (let k = 0; k < count; k++)
          await tx.appendEvent(job.id, "added", `writer-${seedArg}`, `${i}.${k}`, store.now());
        if (!readInside) {
          await Bun.sleep(pause); // the events are still buffered: nothing is locked yet
          return [];
        }
        // Reading the ledger writes and numbers the buffered events now: the counter's row lock
        // is then held across this pause, the widest window for a commit-order inversion.
        const mine = (await tx.eventsOf(job.id)).filter((e) => e.detail?.startsWith(`${i}.`));
        await Bun.sleep(pause);
        return mine.map((e) => e.id);
      });
      ids.push(...got);
      written += count;
    }
    await store.close();
    return { ids, written };
  }
  throw new Error(`unknown mode ${mode}`);
}

main().then(
  (out) => {
    process.stdout.write(`${JSON.stringify(out)}\n`);
    process.exit(0);
  },
  (error) => {
    process.stderr.write(`child failed: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  },
);
