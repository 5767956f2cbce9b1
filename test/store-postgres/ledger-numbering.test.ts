/**
 * The ledger's numbering at COMMIT reads only the committing transaction's
 * rows (docs/architecture.md "Rules that rest on isolation", 5; PostgreSQL
 * schema v17): never the whole `job_events` table, which a queue's ledger
 * makes the largest. Counted, not timed: the server's own statistics say
 * whether a commit that numbers events scanned the table sequentially.
 */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { openQueue } from "../../src/store/index.ts";
import { resolveLocation } from "../../src/store/location.ts";
import { pgDatabaseForTest } from "../support/pg-server.ts";
import { newJob } from "../support/store.ts";
import { waitFor } from "../support/wait.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** job_events' scan and update counters, once this session's statistics are flushed. */
async function counters(sql: SQL): Promise<{ seq: number; upd: number }> {
  await sql`SELECT pg_stat_force_next_flush()`;
  await sql`SELECT pg_stat_clear_snapshot()`;
  const [r] = await sql`SELECT seq_scan::int AS seq, n_tup_upd::int AS upd
    FROM pg_stat_user_tables WHERE relname = 'job_events'`;
  return { seq: r.seq as number, upd: r.upd as number };
}

test("numbering a commit's events scans no more than its own rows, after a bulk add left 2,000 numbered", async () => {
  const url = await pgDatabaseForTest(import.meta.file);
  const dir = mkdtempSync(join(tmpdir(), "spoolctl-ledger-"));
  dirs.push(dir);
  const store = await openQueue(resolveLocation(url, {}, dir), { create: true });
  try {
    const jobs = Array.from({ length: 2000 }, () => newJob({}));
    await store.write((tx) => tx.addJobs(jobs, store.now()));
  } finally {
    await store.close();
  }
  const sql = new SQL(url, { max: 1 });
  try {
    // The bulk add's 2,000 rows were numbered at its COMMIT: wait until the server counts those updates.
    let before = await counters(sql);
    await waitFor("the bulk add's updates counted", async () => (before = await counters(sql)).upd >= 2000);
    const [{ last }] = await sql`SELECT max(id)::int AS last FROM job_events`;
    await sql.begin((tx) => tx`INSERT INTO job_events (job_id, at, event) VALUES (1, 0, 'claimed'), (2, 0, 'claimed')`);
    let after = before;
    await waitFor("the commit's updates counted", async () => (after = await counters(sql)).upd >= before.upd + 2);
    expect(after.seq).toBe(before.seq);
    // Numbered as ever: the next two ids, in insertion order.
    const rows = await sql`SELECT id::int, job_id::int FROM job_events WHERE id > ${last} ORDER BY id`;
    expect(rows.map((r: { id: number; job_id: number }) => [r.id - last, r.job_id])).toEqual([
      [1, 1],
      [2, 2],
    ]);
  } finally {
    await sql.close();
  }
}, 120_000);
