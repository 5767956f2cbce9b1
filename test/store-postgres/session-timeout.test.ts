/**
 * A transaction whose process was stopped inside it (SIGSTOP, Ctrl-Z) past the
 * server's idle_in_transaction_session_timeout: the server ends the session
 * (25P03) and rolls the transaction back, so the driver runs it again on a new
 * connection instead of failing (docs/architecture.md "A stopped worker"):
 * a worker resumed after such a stop goes on, where it used to exit with
 * INTERNAL. The timeout is shortened inside the transaction (SET LOCAL) to
 * stand in for the 60 s a stopped worker sits out.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { runTransaction } from "../../src/store/postgres/transaction.ts";
import { pgDatabaseForTest } from "../support/pg-server.ts";

let sql: SQL;

beforeAll(async () => {
  sql = new SQL(await pgDatabaseForTest(import.meta.file), { max: 2 });
  await sql`CREATE TABLE marks (n int)`;
}, 120_000);

afterAll(async () => {
  await sql?.close();
});

test("a write whose session the server ended for idling in its transaction (25P03) is run again, once, and commits", async () => {
  let runs = 0;
  const ctx = { location: "postgres://test", user: "postgres" };
  const out = await runTransaction(sql, "write", null, ctx, async (_q, tx) => {
    runs++;
    if (runs === 1) {
      await tx`SET LOCAL idle_in_transaction_session_timeout = 200`;
      await tx`INSERT INTO marks VALUES (1)`;
      await Bun.sleep(1500); // as if stopped here: the server ends the session meanwhile
    }
    await tx`INSERT INTO marks VALUES (${runs})`;
    return runs;
  });
  expect(out).toBe(2);
  // The first run's rows were rolled back with its session; the second run's are there, once.
  expect((await sql`SELECT n FROM marks ORDER BY n`).map((r: { n: number }) => r.n)).toEqual([2]);
}, 60_000);
