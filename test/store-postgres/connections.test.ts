/**
 * How many server connections a process holds (docs/architecture.md
 * "Contention"): a one-shot command one, a worker's pool more. Bun's client
 * opens a pool's connections together at the first statement, so a command
 * opened with a worker's pool forked three server processes for one `add`.
 * Counted in pg_stat_activity by a unique application_name while the store is
 * open, so the count is exact, not a timing.
 */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { openQueue } from "../../src/store/index.ts";
import { resolveLocation } from "../../src/store/location.ts";
import type { Store } from "../../src/store/store.ts";
import { pgDatabaseForTest } from "../support/pg-server.ts";

const dirs: string[] = [];
const opened: Store[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Opens the queue at `url` tagged with `app`, runs one read, and counts the server's sessions of `app`. */
async function sessionsAfterOneRead(url: string, app: string, overlapping: boolean): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "spoolctl-conns-"));
  dirs.push(dir);
  const tagged = `${url}${url.includes("?") ? "&" : "?"}application_name=${app}`;
  const store = await openQueue(resolveLocation(tagged, {}, dir), { create: true, overlapping });
  opened.push(store);
  await store.read(async (tx) => tx.getJob(1));
  const admin = new SQL(url, { max: 1 });
  try {
    const [row] = await admin`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ${app}`;
    return row.n as number;
  } finally {
    await admin.close();
  }
}

test("a one-shot command holds one connection; a worker's pool may hold more", async () => {
  const url = await pgDatabaseForTest(import.meta.file);
  const tag = `conns_${process.pid}`;
  expect(await sessionsAfterOneRead(url, `${tag}_cmd`, false)).toBe(1);
  const worker = await sessionsAfterOneRead(url, `${tag}_worker`, true);
  expect(worker).toBeGreaterThanOrEqual(1);
  expect(worker).toBeLessThanOrEqual(3);
}, 60_000);
