/**
 * A regression guard for Bun's PostgreSQL client under concurrency, against
 * the real server: Bun.sql of the 1.3 line could hand one query's rows to
 * another when prepared statements of different shapes overlapped on one
 * pool, and could leave the pool waiting for ever at drain (fixed upstream
 * after 1.3.14; docs/architecture.md "Bun's PostgreSQL client"). Every
 * driver statement goes through such a pool, so a Bun upgrade that brings
 * either back must fail here before it corrupts a queue.
 *
 * Each query carries its owner (a number only it sends) in every row it
 * returns, and has a shape of its own (column count, types, row count,
 * tagged template or `unsafe` with parameters, inside a transaction or not):
 * a row delivered to the wrong caller shows up as a wrong owner, a wrong
 * column set or a wrong row count.
 */

import { afterAll, beforeAll, expect, test } from "bun:test";
import type { SQL } from "bun";
import { createClient } from "../../src/store/postgres/connect.ts";
import { parsePgUrl } from "../../src/store/postgres/url.ts";
import { pgDatabaseForTest } from "../support/pg-server.ts";

let url: string;
beforeAll(async () => {
  url = await pgDatabaseForTest(import.meta.file);
}, 60_000);

const clients: SQL[] = [];
afterAll(async () => {
  for (const c of clients) await c.close({ timeout: 0 }).catch(() => {});
});

/** A pool configured as the driver configures its own (prepared statements on: Bun's default). */
function pool(max: number): SQL {
  const c = createClient({ ...parsePgUrl(url), applicationName: "spoolctl-client-test" }, max);
  clients.push(c);
  return c;
}

/** What one query must get back: its owner in every row, and its own shape. */
interface Expected {
  owner: number;
  rows: number;
  columns: string[];
}

/** Query number `owner`, of one of several shapes picked by the owner. */
function shaped(sql: SQL, owner: number): { run: Promise<Record<string, unknown>[]>; expected: Expected } {
  const kind = owner % 7;
  const n = (owner % 5) + 1;
  switch (kind) {
    case 0:
      return { run: sql`SELECT ${owner}::int AS owner`, expected: { owner, rows: 1, columns: ["owner"] } };
    case 1:
      return {
        run: sql`SELECT ${owner}::int AS owner, g::int AS i, repeat('x', g) AS pad
          FROM generate_series(1, ${n}::int) g`,
        expected: { owner, rows: n, columns: ["owner", "i", "pad"] },
      };
    case 2:
      return {
        run: sql.unsafe(
          "SELECT $1::int AS owner, $2::text AS label, $3::float8 AS ratio, NULL::int AS nothing, now() AS at",
          [owner, `job-${owner}`, owner / 7],
        ),
        expected: { owner, rows: 1, columns: ["owner", "label", "ratio", "nothing", "at"] },
      };
    case 3:
      return {
        run: sql`SELECT ${owner}::int AS owner, jsonb_build_object('owner', ${owner}::int, 'n', ${n}::int) AS doc`,
        expected: { owner, rows: 1, columns: ["owner", "doc"] },
      };
    case 4:
      // Zero rows: a result that steals another's rows is no longer empty.
      return {
        run: sql`SELECT ${owner}::int AS owner, 1 AS one WHERE ${owner}::int < 0`,
        expected: { owner, rows: 0, columns: [] },
      };
    case 5:
      return {
        run: sql.begin(async (tx) => {
          const a = await tx`SELECT ${owner}::int AS owner, 'first' AS step`;
          const b = await tx.unsafe("SELECT $1::int AS owner, $2::bigint AS big, pg_sleep(0.001)::text AS s", [
            owner,
            BigInt(owner) * 1000n,
          ]);
          return [...a, ...b];
        }) as Promise<Record<string, unknown>[]>,
        expected: { owner, rows: 2, columns: [] },
      };
    default:
      return {
        run: sql`SELECT ${owner}::int AS owner, array_fill(${owner}::int, ARRAY[${n}::int]) AS arr, md5(${String(owner)}) AS h`,
        expected: { owner, rows: 1, columns: ["owner", "arr", "h"] },
      };
  }
}

/** The ways a result can be someone else's, as readable strings (empty: all rows are the owner's). */
function misdeliveries(got: Record<string, unknown>[], e: Expected): string[] {
  const wrong: string[] = [];
  if (got.length !== e.rows) wrong.push(`query ${e.owner}: ${got.length} rows, expected ${e.rows}`);
  for (const row of got) {
    if (Number(row.owner) !== e.owner) wrong.push(`query ${e.owner}: got a row of query ${String(row.owner)}`);
    if (e.columns.length > 0 && Object.keys(row).join(",") !== e.columns.join(","))
      wrong.push(`query ${e.owner}: columns ${Object.keys(row).join(",")}`);
    if ("label" in row && row.label !== `job-${e.owner}`) wrong.push(`query ${e.owner}: label ${String(row.label)}`);
    if ("doc" in row && (row.doc as { owner: number }).owner !== e.owner) wrong.push(`query ${e.owner}: doc`);
    if ("big" in row && BigInt(row.big as string | bigint) !== BigInt(e.owner) * 1000n)
      wrong.push(`query ${e.owner}: big ${String(row.big)}`);
    if ("arr" in row && (row.arr as number[]).some((v) => v !== e.owner)) wrong.push(`query ${e.owner}: arr`);
    if ("h" in row && row.h !== new Bun.CryptoHasher("md5").update(String(e.owner)).digest("hex"))
      wrong.push(`query ${e.owner}: h`);
  }
  return wrong;
}

/** Resolves with `p`, or rejects when it has not settled after `ms` (a deadlock, not a speed bar). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still pending after ${ms / 1000} s (deadlock)`)), ms);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

test.each([1, 3, 8])(
  "pool of %d: 3,000 overlapping prepared queries of 7 shapes each get only their own rows",
  async (max) => {
    const sql = pool(max);
    const wrong: string[] = [];
    for (let round = 0; round < 6; round++) {
      const queries = Array.from({ length: 500 }, (_, i) => shaped(sql, round * 500 + i));
      const results = await within(
        Promise.all(queries.map((q) => q.run)),
        90_000,
        `round ${round} on a pool of ${max}`,
      );
      results.forEach((got, i) => {
        wrong.push(...misdeliveries(got, queries[i]!.expected));
      });
    }
    expect(wrong.slice(0, 20)).toEqual([]);
  },
  300_000,
);

test("queries that fail beside ones that succeed: each failure is its own, each row its owner's", async () => {
  const sql = pool(3);
  const runs = Array.from({ length: 600 }, (_, owner) =>
    owner % 4 === 0
      ? sql`SELECT ${owner}::int / 0 AS owner`.then(
          () => `query ${owner}: a division by zero succeeded`,
          (e: Error) => (/division by zero/.test(e.message) ? null : `query ${owner}: ${e.message}`),
        )
      : (() => {
          const q = shaped(sql, owner);
          return q.run.then((got) => misdeliveries(got, q.expected).join("; ") || null);
        })(),
  );
  const outcomes = await within(Promise.all(runs), 90_000, "mixed failures");
  expect(outcomes.filter((o) => o !== null)).toEqual([]);
}, 120_000);

test("drain: a pool closed with queries still queued finishes them or fails them, never hangs", async () => {
  for (const max of [1, 3]) {
    const sql = pool(max);
    const queries = Array.from({ length: 400 }, (_, i) => shaped(sql, i));
    // Settle each: a query the close ends may fail, but must not wait for ever.
    const settled = queries.map((q) =>
      q.run.then(
        (got) => ({ ok: true as const, wrong: misdeliveries(got, q.expected) }),
        () => ({ ok: false as const, wrong: [] as string[] }),
      ),
    );
    await within(sql.close({ timeout: 5 }), 90_000, `close of a pool of ${max}`);
    const outcomes = await within(Promise.all(settled), 90_000, `queries of a closed pool of ${max}`);
    expect(outcomes.flatMap((o) => o.wrong)).toEqual([]);
  }
  // And a pool drained in the ordinary way (all awaited, then closed) closes.
  const sql = pool(3);
  const queries = Array.from({ length: 300 }, (_, i) => shaped(sql, i));
  const got = await within(Promise.all(queries.map((q) => q.run)), 90_000, "ordinary drain");
  expect(got.flatMap((rows, i) => misdeliveries(rows, queries[i]!.expected))).toEqual([]);
  await within(sql.close(), 90_000, "close after an ordinary drain");
}, 300_000);
