/**
 * A damaged SQLite queue file (docs/architecture.md "A damaged file") is
 * reported by every verb as `QUEUE_CORRUPT` (exit 3) with `spoolctl doctor`
 * (and the queue selection) as the next step: `status` checks the file itself
 * (it used to count a damaged file as healthy), the others when they meet the
 * damage (they used to fail with a bare INTERNAL, or `list` answer as if
 * nothing were wrong).
 *
 * SQLite-only: the damage is made by overwriting pages of the file.
 */
import { Database } from "bun:sqlite";
import { expect, setDefaultTimeout, test } from "bun:test";
import { closeSync, existsSync, fstatSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { SpoolError } from "../src/contract/errors.ts";
import type { ClaimRequest } from "../src/store/attempt-types.ts";
import { openQueue } from "../src/store/index.ts";
import { corruptError } from "../src/store/sqlite/errors.ts";
import { Worker } from "../src/worker/loop.ts";
import { stopProcessesOf } from "./support/processes.ts";
import { ON_POSTGRES, useTempQueue } from "./support/temp-queue.ts";
import { waitFor } from "./support/wait.ts";

setDefaultTimeout(120_000);

const q = useTempQueue({ teardown: stopProcessesOf });

/**
 * Folds the WAL into the file and overwrites one b-tree page of `btree` (a
 * table or an index) with garbage: SQLite then answers "database disk image
 * is malformed" to any statement that reads that page.
 */
function damagePage(path: string, btree: string): void {
  const db = new Database(path);
  let page: number;
  let size: number;
  try {
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    size = (db.query("PRAGMA page_size").get() as { page_size: number }).page_size;
    const pages = db.query("SELECT pageno FROM dbstat WHERE name = ? ORDER BY pageno").all(btree) as {
      pageno: number;
    }[];
    page = pages.at(-1)!.pageno;
  } finally {
    db.close();
  }
  const fd = openSync(path, "r+");
  try {
    writeSync(fd, Buffer.alloc(size, 0xde), 0, size, (page - 1) * size);
  } finally {
    closeSync(fd);
  }
}

async function fill(): Promise<void> {
  await Promise.all(Array.from({ length: 30 }, (_, i) => q.addJob("--", "echo", `${i}`, "x".repeat(400))));
}

/** Runs `args` with --json and checks the answer is QUEUE_CORRUPT naming doctor with the queue's --db. */
async function expectCorrupt(args: string[]): Promise<void> {
  const at = args.indexOf("--");
  const run = await q.run(at === -1 ? [...args, "--json"] : [...args.slice(0, at), "--json", ...args.slice(at)]);
  const r = { code: run.code, env: JSON.parse(run.stdout), stderr: run.stderr };
  const where = `spoolctl ${args.join(" ")}: ${JSON.stringify(r.env.errors)} ${r.stderr}`;
  expect([where, r.code]).toEqual([where, 3]);
  expect(r.env.ok).toBe(false);
  expect(r.env.errors[0].code).toBe("QUEUE_CORRUPT");
  expect(r.env.errors[0].message).toContain(q.db);
  expect(r.env.errors[0].remediation).toContain(`spoolctl doctor --db ${q.dbWord}`);
  expect(r.stderr).not.toMatch(/^\s+at /m);
}

test.skipIf(ON_POSTGRES)("a damaged jobs table: status, list, show, add and work all say QUEUE_CORRUPT", async () => {
  await fill();
  damagePage(q.db, "jobs");
  await expectCorrupt(["status"]);
  await expectCorrupt(["list"]);
  // A job on the damaged page is named as damage, never as NOT_FOUND; the others still show.
  const shown = await Promise.all(Array.from({ length: 30 }, (_, i) => q.json(["show", `${i + 1}`])));
  const codes = shown.map((r) => (r.code === 0 ? "ok" : r.env.errors[0].code));
  expect(codes.filter((c) => c !== "ok" && c !== "QUEUE_CORRUPT")).toEqual([]);
  expect(codes).toContain("QUEUE_CORRUPT");
  await expectCorrupt(["work", "--once"]);
  const human = await q.run(["status"]);
  expect(human.code).toBe(3);
  expect(human.stderr).toMatch(/^spoolctl: error: QUEUE_CORRUPT: .+spoolctl doctor --db .+\n$/);
  const doctor = await q.json(["doctor"]);
  expect(doctor.code).toBe(3);
});

/** Adds `n` jobs in one `add --from` (one transaction), with their write-ahead log folded into the file. */
async function addMany(n: number): Promise<void> {
  const lines = Array.from({ length: n }, (_, i) => JSON.stringify({ argv: ["echo", `${i}`, "x".repeat(300)] }));
  const from = join(q.dir, "jobs.jsonl");
  writeFileSync(from, `${lines.join("\n")}\n`);
  expect((await q.run(["add", "--from", from])).code).toBe(0);
  const db = new Database(q.db);
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
}

/** Overwrites `bytes` bytes from the middle of the file with garbage (what a bad disk or a stray `dd` leaves). */
function garbageMidFile(path: string, bytes = 4096): void {
  const fd = openSync(path, "r+");
  try {
    const middle = Math.floor(fstatSync(fd).size / 2) + 1234; // not on a page boundary
    writeSync(fd, Buffer.alloc(bytes, 0xa5), 0, bytes, middle);
  } finally {
    closeSync(fd);
  }
}

test.skipIf(ON_POSTGRES)(
  "mid-file garbage: every verb that opens the file says QUEUE_CORRUPT, and add acknowledges nothing",
  async () => {
    await addMany(300);
    garbageMidFile(q.db);
    // Verbs that read none of the damaged pages used to answer 0 (list, show) or write into the file (add).
    for (const args of [["list"], ["show", "5"], ["show", "last"], ["events"], ["lane", "list"], ["hook", "list"]])
      await expectCorrupt(args);
    const add = await q.run(["add", "--", "true"]);
    expect([add.code, add.stdout]).toEqual([3, ""]);
    expect(add.stderr).toContain("QUEUE_CORRUPT");
    await expectCorrupt(["add", "--", "true"]);
    await expectCorrupt(["retry", "1"]);
    // doctor still reports, rather than failing to open.
    const doctor = await q.json(["doctor"]);
    expect(doctor.code).toBe(3);
    expect(doctor.env.ok).toBe(true);
    expect(doctor.env.data.checks.find((c: { id: string }) => c.id === "integrity").status).toBe("fail");
  },
);

test.skipIf(ON_POSTGRES)("a file remembered as intact is walked again once anything wrote to it", async () => {
  await Promise.all(Array.from({ length: 200 }, (_, i) => q.addJob("--", "echo", `${i}`, "x".repeat(300))));
  const checkpoint = new Database(q.db);
  checkpoint.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  checkpoint.close();
  // The stamp is written once the file has settled (its ctime 2 s old): poll a reader until it is.
  const stamp = join(q.spool, "intact");
  await waitFor(
    "the intact stamp",
    async () => (await q.run(["list", "--limit", "1"])).code === 0 && existsSync(stamp),
    60_000,
    250,
  );
  expect((await q.run(["list"])).code).toBe(0);
  garbageMidFile(q.db);
  await expectCorrupt(["list"]);
  await expectCorrupt(["show", "3"]);
});

test.skipIf(ON_POSTGRES)("a damaged index: status no longer says healthy while add fails", async () => {
  await fill();
  damagePage(q.db, "idx_jobs_claimable");
  await expectCorrupt(["status"]);
  await expectCorrupt(["add", "--", "true"]);
  await expectCorrupt(["work", "--once"]);
});

test.skipIf(ON_POSTGRES)("a file that is not a database at all", async () => {
  await fill();
  const fd = openSync(q.db, "r+");
  writeSync(fd, Buffer.alloc(100, 0x41), 0, 100, 0); // the header
  closeSync(fd);
  await expectCorrupt(["status"]);
  await expectCorrupt(["add", "--", "true"]);
});

test.skipIf(ON_POSTGRES)(
  "a worker whose result write meets the damage stops and raises QUEUE_CORRUPT (no unhandled rejection, no loop)",
  async () => {
    const id = await q.addJob("--", "sh", "-c", "sleep 0.3");
    const store = await openQueue(q.location(), { create: false });
    // The store as it is, except that writing a result meets a damaged page (as SQLite would say it).
    // Once the job is claimed, every write meets the damage (the registry write and the claim go through).
    let failing = false;
    const malformed = () =>
      corruptError(q.db, Object.assign(new Error("database disk image is malformed"), { code: "SQLITE_CORRUPT" }));
    const damaged = new Proxy(store, {
      get(target, name, receiver) {
        if ((name === "write" || name === "writeAndClaim") && failing) return () => Promise.reject(malformed());
        if (name === "claimJobs")
          return async (req: ClaimRequest) => {
            const claimed = await target.claimJobs(req);
            if (claimed.length > 0) failing = true;
            return claimed;
          };
        const value = Reflect.get(target, name, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const events: string[] = [];
    const worker = new Worker(damaged, {
      queue: "default",
      slots: null,
      concurrency: 1,
      pollInterval: 0.1,
      workerId: "w-damaged",
      mode: "loop",
      timing: { heartbeat: 0.2, reapThreshold: 1 },
      onEvent: (e) => events.push(e.type === "storage" || e.type === "transient" ? e.message : e.type),
    });
    let raised: unknown = null;
    try {
      await worker.run();
    } catch (error) {
      raised = error;
    } finally {
      await store.close();
    }
    expect(raised).toBeInstanceOf(SpoolError);
    expect((raised as SpoolError).code).toBe("QUEUE_CORRUPT");
    expect(events.some((e) => e.includes("is damaged") && e.includes("exiting"))).toBe(true);
    expect(id).toBe(1);
  },
  60000,
);
