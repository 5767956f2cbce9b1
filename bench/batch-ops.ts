#!/usr/bin/env bun
/**
 * Operations on many jobs at once, as whole processes: `add --from` of N lines
 * and `retry --all` of N dead jobs, on SQLite and PostgreSQL (a throwaway
 * server, bench/queues.ts), interleaved round by round with a "before" checkout
 * when one is given. Prints a markdown table of medians (milliseconds) and the
 * after/before ratio.
 *
 * The dead jobs are made by SQL (a fixture, not the thing measured): `add
 * --from` then one UPDATE to `dead`, as a worker's last failure leaves them.
 *
 * Usage: bun bench/batch-ops.ts [--jobs 10000] [--runs 3] [--before PATH/src/cli.ts] [--no-pg]
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { SQL } from "bun";
import { abortAll, cleanup, fmt, median, ndjson, tempDir, writeFile } from "./lib.ts";
import { type Cli, clisUnderTest, commitOf, type Engine, freshQueue, runCliOk, spoolEnv, stopPg } from "./queues.ts";

const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const JOBS = Number(opt("--jobs") ?? 10_000);
const RUNS = Number(opt("--runs") ?? 3);
const engines: Engine[] = argv.includes("--no-pg") ? ["sqlite"] : ["sqlite", "postgres"];
const clis = clisUnderTest(opt("--before") ?? process.env.SPOOLCTL_BENCH_BEFORE);

const DEAD_SQL =
  "UPDATE jobs SET state = 'dead', attempts = 1, last_attempt_no = 1, finished_at = created_at, last_exit_code = 1";

/** Marks every job of the queue at `db` dead (the fixture for `retry --all`). */
async function killAll(db: string): Promise<void> {
  if (!db.startsWith("postgres")) {
    const d = new Database(db);
    d.exec("PRAGMA busy_timeout = 5000");
    d.exec(DEAD_SQL);
    d.close();
    return;
  }
  const sql = new SQL(db, { max: 1 });
  await sql.unsafe(DEAD_SQL);
  await sql.close({ timeout: 0 });
}

type Row = { engine: Engine; op: string; cli: string; ms: number[] };
const rows = new Map<string, Row>();
const record = (engine: Engine, op: string, cli: Cli, ms: number) => {
  const key = `${engine}|${op}|${cli.label}`;
  const row = rows.get(key) ?? { engine, op, cli: cli.label, ms: [] };
  row.ms.push(ms);
  rows.set(key, row);
};

process.on("SIGINT", () => {
  abortAll();
  process.exit(130);
});

try {
  const lines = writeFile(join(tempDir("batch"), "jobs.ndjson"), ndjson(JOBS, ["true"]));
  for (let round = 1; round <= RUNS; round++) {
    for (const engine of engines) {
      for (const cli of clis) {
        const q = await freshQueue(engine, `batch-${cli.label}`);
        const env = spoolEnv();
        const added = await runCliOk(cli, ["add", "--db", q.db, "--from", lines, "--json"], { env, quiet: true });
        record(engine, `add --from (${JOBS} lines)`, cli, added.ms);
        await killAll(q.db);
        const retried = await runCliOk(cli, ["retry", "--db", q.db, "--all", "--state", "dead", "--json"], {
          env,
          quiet: true,
        });
        record(engine, `retry --all (${JOBS} dead)`, cli, retried.ms);
        if ((await q.count("queued")) !== JOBS) throw new Error(`${cli.label} ${engine}: retry left jobs dead`);
        await q.close();
      }
      process.stderr.write(`round ${round}/${RUNS} ${engine} done\n`);
    }
  }
  const before = clis.find((c) => c.label === "before");
  console.log(`# Batch operations, ${JOBS} jobs, medians of ${RUNS} (ms, whole process)\n`);
  console.log(`after: ${commitOf(clis[0]!)}${before ? `, before: ${commitOf(before)}` : ""}\n`);
  console.log(`| engine | operation | after | ${before ? "before | after/before |" : ""}`);
  console.log(`|---|---|---|${before ? "---|---|" : ""}`);
  for (const row of rows.values()) {
    if (row.cli !== "after") continue;
    const after = median(row.ms);
    const b = rows.get(`${row.engine}|${row.op}|before`);
    const tail = b ? ` ${fmt(median(b.ms), 0)} | ${fmt(after / median(b.ms), 2)}× |` : "";
    console.log(`| ${row.engine} | ${row.op} | ${fmt(after, 0)} |${tail}`);
  }
} finally {
  await stopPg();
  cleanup();
}
