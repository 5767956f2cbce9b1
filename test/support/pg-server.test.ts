/**
 * The throwaway PostgreSQL server for tests: it starts, gives separate
 * databases, and Bun's built-in client reaches each of them.
 */

import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { type PgServer, pgDatabaseForTest, sharedPgServer, startPgServer } from "./pg-server";

let server: PgServer;
/** With SPOOLCTL_TEST_PG_URL the suite uses that server and starts none: skip what needs our own. */
const external = process.env.SPOOLCTL_TEST_PG_URL;

beforeAll(async () => {
  if (!external) server = await startPgServer();
}, 120_000);

afterAll(async () => {
  await server?.stop();
}, 60_000);

test.skipIf(!!external)(
  "two databases on one server are separate, and Bun's SQL client reaches each",
  async () => {
    const urlA = await server.createDatabase("pg_server_test_a");
    const urlB = await server.createDatabase("pg_server_test_b");
    expect(urlA).toBe(server.url("pg_server_test_a"));
    expect(urlA).not.toBe(urlB);

    const a = new SQL(urlA, { max: 2 });
    const b = new SQL(urlB, { max: 2 });
    try {
      const [one] = await a`select 1 as one`;
      expect(one.one).toBe(1);
      expect((await b`select 1 as one`)[0].one).toBe(1);

      const [{ current_database: dbA }] = await a`select current_database()`;
      const [{ current_database: dbB }] = await b`select current_database()`;
      expect(dbA).toBe("pg_server_test_a");
      expect(dbB).toBe("pg_server_test_b");

      // A table made in one is not in the other.
      await a`create table only_in_a (id int)`;
      const [{ t: inA }] = await a`select to_regclass('only_in_a')::text as t`;
      const [{ t: inB }] = await b`select to_regclass('only_in_a')::text as t`;
      expect(inA).toBe("only_in_a");
      expect(inB).toBeNull();
    } finally {
      await a.close({ timeout: 0 });
      await b.close({ timeout: 0 });
    }
  },
  60_000,
);

test("pgDatabaseForTest: one shared server per process, a fresh database per call", async () => {
  const first = await pgDatabaseForTest(import.meta.file);
  const second = await pgDatabaseForTest(import.meta.file);
  expect(first).not.toBe(second);
  let port: string;
  if (external) {
    port = new URL(external).port;
  } else {
    const shared = await sharedPgServer();
    expect(await sharedPgServer()).toBe(shared);
    port = String(shared.port);
  }
  expect(new URL(first).port).toBe(port);
  expect(new URL(second).port).toBe(port);
  expect(new URL(first).pathname).toMatch(/^\/t_pg_server_\d+_\d+_[0-9a-f]{4}$/);

  const sql = new SQL(second, { max: 1 });
  try {
    const [{ db }] = await sql`select current_database() as db`;
    expect(`/${db}`).toBe(new URL(second).pathname);
  } finally {
    await sql.close({ timeout: 0 });
  }
}, 120_000);

test("a machine without the server binaries gets an error that names what is missing", async () => {
  await expect(startPgServer({ binDir: "/nonexistent-pg-bin" })).rejects.toThrow(
    /initdb, pg_ctl, postgres missing in \/nonexistent-pg-bin/,
  );
});
