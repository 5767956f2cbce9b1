#!/usr/bin/env bun
/**
 * SQL statements per operation, before/after, both drivers (issue 18, "the
 * store speaks in operations"). For each operation, each checkout's real CLI
 * runs as a whole process against a fresh queue prepared the same way (by
 * that checkout's own CLI, since an older checkout refuses a newer schema,
 * and by SQL both schemas accept), and the statements that process sends are
 * counted (bench/statement-counts.ts: a bun:sqlite preload on SQLite, the
 * statement log of a throwaway PostgreSQL server), with its transactions;
 * pg_stat_statements' sum(calls), which adds what triggers run, is listed
 * under the table. The commands run in text mode (no `--json`), as in a script.
 * Prints a markdown table: statements, transactions in brackets; a range
 * when the runs of one cell differ (a worker's timers can add statements).
 *
 * Usage: bun bench/statements.ts --before PATH/src/cli.ts [--runs 2] [--no-pg] [--statements] [--ops WORDS]
 *
 *   --before PATH   the "before" checkout's src/cli.ts (or $SPOOLCTL_BENCH_BEFORE); "after" is
 *                   this checkout's (or $SPOOLCTL_BENCH_CLI)
 *   --runs N        fresh queues per cell (default 2)
 *   --no-pg         SQLite only
 *   --statements    also print, per cell, the calls by statement text (first run)
 *   --ops WORDS     only the operations whose name contains WORDS (e.g. `work`: the drains)
 */
import { join } from "node:path";
import { abortAll, cleanup, fmt, median, ndjson, tempDir, writeFile } from "./lib.ts";
import { type Cli, clisUnderTest, commitOf, type Engine, runCliOk, spoolEnv } from "./queues.ts";
import { type Counted, countSqlite, type PgCounter, sqlOn, startCountingPg, statesOf } from "./statement-counts.ts";

const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const RUNS = Number(opt("--runs") ?? 2);
const engines: Engine[] = argv.includes("--no-pg") ? ["sqlite"] : ["sqlite", "postgres"];
const clis = clisUnderTest(opt("--before") ?? process.env.SPOOLCTL_BENCH_BEFORE).reverse(); // before, after

/** One measured operation. */
interface Op {
  name: string;
  /** The verb's words; `--db` goes right after them. */
  verb: string[];
  /** Prepares the queue at `db` (uncounted) and returns the measured command's arguments after `--db DB`. */
  prepare(cli: Cli, db: string): Promise<string[]>;
  /** Jobs by state once the command ran (a check that it did what it says). */
  expect: Record<string, number>;
}

let files: Record<string, string> = {};
const spoolctl = (cli: Cli, db: string, verb: string[], rest: string[]) =>
  runCliOk(cli, [...verb, "--db", db, ...rest], { env: spoolEnv(), quiet: true });
/** `n` jobs of `true`, added by one `add --from`. */
const addJobs = (cli: Cli, db: string, n: number) => spoolctl(cli, db, ["add"], ["--from", files[n]!]);
/** Ten `true` jobs run to `done` by one `work --drain`. */
async function tenDone(cli: Cli, db: string): Promise<void> {
  await addJobs(cli, db, 10);
  await spoolctl(cli, db, ["work"], ["--drain"]);
}
const jobIds = async (db: string, state: string): Promise<string[]> =>
  (await sqlOn(db, `SELECT id FROM jobs WHERE state = '${state}' ORDER BY id`)).map((r) => String(r.id));

const DEAD_SQL =
  "UPDATE jobs SET state = 'dead', attempts = 1, last_attempt_no = 1, finished_at = created_at, last_exit_code = 1";
const AGE_SQL = "UPDATE jobs SET created_at = created_at - 864000, finished_at = finished_at - 864000";

const OPS: Op[] = [
  {
    name: "`add` one job",
    verb: ["add"],
    prepare: async (cli, db) => (await addJobs(cli, db, 1), ["--", "true"]),
    expect: { queued: 2 },
  },
  ...[100, 1000].map(
    (n): Op => ({
      name: `\`add --from\` ${n.toLocaleString("en")} lines`,
      verb: ["add"],
      prepare: async (cli, db) => (await addJobs(cli, db, 1), ["--from", files[n]!]),
      expect: { queued: n + 1 },
    }),
  ),
  ...(["status", "list", "events"] as const).map(
    (verb): Op => ({
      name: `\`${verb}\` (10 done jobs)`,
      verb: [verb],
      prepare: async (cli, db) => (await tenDone(cli, db), []),
      expect: { done: 10 },
    }),
  ),
  {
    name: "`show ID` (10 done jobs)",
    verb: ["show"],
    prepare: async (cli, db) => (await tenDone(cli, db), [(await jobIds(db, "done"))[0]!]),
    expect: { done: 10 },
  },
  {
    name: "`retry --all --state dead`, 100 dead jobs",
    verb: ["retry"],
    prepare: async (cli, db) => {
      await addJobs(cli, db, 100);
      await sqlOn(db, DEAD_SQL);
      return ["--all", "--state", "dead"];
    },
    expect: { queued: 100 },
  },
  {
    name: "`cancel ID…`, 100 queued jobs",
    verb: ["cancel"],
    prepare: async (cli, db) => (await addJobs(cli, db, 100), await jobIds(db, "queued")),
    expect: { canceled: 100 },
  },
  {
    name: "`delete ID --yes`, one done job",
    verb: ["delete"],
    prepare: async (cli, db) => (await tenDone(cli, db), [(await jobIds(db, "done"))[0]!, "--yes"]),
    expect: { done: 9 },
  },
  {
    name: "`prune --older-than 7d --yes`, 10 done jobs",
    verb: ["prune"],
    prepare: async (cli, db) => {
      await tenDone(cli, db);
      await sqlOn(db, AGE_SQL);
      return ["--older-than", "7d", "--yes"];
    },
    expect: {},
  },
  {
    name: "`config set max-retries 5`",
    verb: ["config", "set"],
    prepare: async (cli, db) => (await tenDone(cli, db), ["max-retries", "5"]),
    expect: { done: 10 },
  },
  {
    name: "`lane pause default`",
    verb: ["lane", "pause"],
    prepare: async (cli, db) => (await tenDone(cli, db), ["default"]),
    expect: { done: 10 },
  },
  {
    name: "`lane resume default` (paused)",
    verb: ["lane", "resume"],
    prepare: async (cli, db) => {
      await tenDone(cli, db);
      await spoolctl(cli, db, ["lane", "pause"], ["default"]);
      return ["default"];
    },
    expect: { done: 10 },
  },
  ...[1, 10].map(
    (n): Op => ({
      name: `\`work --drain\`, ${n} job${n > 1 ? "s" : ""} of \`true\``,
      verb: ["work"],
      prepare: async (cli, db) => (await addJobs(cli, db, n), ["--drain"]),
      expect: { done: n },
    }),
  ),
  ...[1, 10].map(
    (n): Op => ({
      name: `\`work --drain --concurrency 4\`, ${n} job${n > 1 ? "s" : ""} of \`true\``,
      verb: ["work"],
      prepare: async (cli, db) => (await addJobs(cli, db, n), ["--drain", "--concurrency", "4"]),
      expect: { done: n },
    }),
  ),
];
const WORK_1 = OPS.length - 4;
const WORK_10 = OPS.length - 3;
const WORK4_1 = OPS.length - 2;
const WORK4_10 = OPS.length - 1;
const ONLY = opt("--ops");
/** The operations this run measures (--ops), by their index in OPS. */
const chosen = [...OPS.entries()].filter(([, op]) => ONLY === undefined || op.name.includes(ONLY));

/** Counts per cell: engine|op index|checkout label → one per run. */
const cells = new Map<string, Counted[]>();
let dbCounter = 0;

/** One fresh queue of `engine`, prepared for `op` by `cli`, then the op's command counted. */
async function measure(engine: Engine, op: Op, cli: Cli, pg: PgCounter | null): Promise<Counted> {
  const db =
    engine === "sqlite"
      ? join(tempDir("stmts"), "queue.db")
      : await pg!.createDatabase(`stmts_${cli.label}_${++dbCounter}`);
  const rest = await op.prepare(cli, db);
  const args = [...op.verb, "--db", db, ...rest];
  const counted =
    engine === "sqlite"
      ? await countSqlite(cli, args)
      : await pg!.count(db, () => runCliOk(cli, args, { env: spoolEnv(), quiet: true }));
  const states = await statesOf(db);
  if (JSON.stringify(states) !== JSON.stringify(op.expect))
    throw new Error(
      `${cli.label} ${engine} ${op.name}: jobs ${JSON.stringify(states)}, expected ${JSON.stringify(op.expect)}`,
    );
  return counted;
}

/** `N (T)`, or `min–max (min–max)` when the runs differ. */
function cell(runs: Counted[] | undefined): string {
  if (!runs || runs.length === 0) return "–";
  const span = (xs: number[]) => {
    const lo = Math.min(...xs);
    const hi = Math.max(...xs);
    return lo === hi ? `${lo}` : `${lo}–${hi}`;
  };
  return `${span(runs.map((r) => r.statements))} (${span(runs.map((r) => r.transactions))})`;
}

/**
 * The per-job figure of a drain: (10 jobs − 1 job) / 9, from the medians; on
 * PostgreSQL pg_stat_statements' calls per job (triggers and foreign-key checks included) after a slash.
 */
function perJob(engine: Engine, label: string, ops: [number, number] = [WORK_1, WORK_10]): string {
  const one = cells.get(`${engine}|${ops[0]}|${label}`);
  const ten = cells.get(`${engine}|${ops[1]}|${label}`);
  if (!one || !ten) return "–";
  const d = (f: (c: Counted) => number) => (median(ten.map(f)) - median(one.map(f))) / 9;
  const server =
    engine === "postgres"
      ? ` / ${fmt(
          d((c) => c.server),
          1,
        )}`
      : "";
  return `${fmt(
    d((c) => c.statements),
    1,
  )} (${fmt(
    d((c) => c.transactions),
    1,
  )})${server}`;
}

process.on("SIGINT", () => {
  abortAll();
  process.exit(130);
});

let pg: PgCounter | null = null;
try {
  const dir = tempDir("stmts-jobs");
  files = Object.fromEntries(
    [1, 10, 100, 1000].map((n) => [n, writeFile(join(dir, `${n}.ndjson`), ndjson(n, ["true"]))]),
  );
  for (const engine of engines) {
    if (engine === "postgres") pg = await startCountingPg();
    for (const [i, op] of chosen) {
      for (let r = 0; r < RUNS; r++) {
        for (const cli of clis) {
          const key = `${engine}|${i}|${cli.label}`;
          cells.set(key, [...(cells.get(key) ?? []), await measure(engine, op, cli, pg)]);
        }
      }
      process.stderr.write(`${engine}: ${op.name} done\n`);
    }
  }
  const labels = clis.map((c) => `${c.label} ${commitOf(c)}`).join(", ");
  console.log(`# SQL statements per operation (${labels}; ${RUNS} runs per cell)\n`);
  const cols = engines.flatMap((e) => clis.map((c) => `${e === "sqlite" ? "SQLite" : "PostgreSQL"} ${c.label}`));
  console.log(`| operation | ${cols.join(" | ")} |`);
  console.log(`|---|${cols.map(() => "---:").join("|")}|`);
  for (const [i, op] of chosen)
    console.log(
      `| ${op.name} | ${engines.flatMap((e) => clis.map((c) => cell(cells.get(`${e}|${i}|${c.label}`)))).join(" | ")} |`,
    );
  console.log(
    `| \`work --drain\`, per job ((10 jobs − 1 job) / 9) | ${engines.flatMap((e) => clis.map((c) => perJob(e, c.label))).join(" | ")} |`,
  );
  console.log(
    `| \`work --drain --concurrency 4\`, per job | ${engines.flatMap((e) => clis.map((c) => perJob(e, c.label, [WORK4_1, WORK4_10]))).join(" | ")} |`,
  );
  if (engines.includes("postgres")) {
    console.log(
      "\nPostgreSQL, first run: pg_stat_statements sum(calls) (track = all: what functions and triggers run included); connections opened:",
    );
    for (const [i, op] of chosen) {
      const first = clis.map((c) => [c.label, cells.get(`postgres|${i}|${c.label}`)?.[0]] as const);
      const calls = first.map(([label, c]) => `${label} ${c?.server ?? "–"}`).join(", ");
      const conns = first.map(([label, c]) => `${label} ${c?.connections ?? "–"}`).join(", ");
      console.log(`- ${op.name}: ${calls}; connections: ${conns}`);
    }
  }
  if (argv.includes("--statements"))
    for (const engine of engines)
      for (const [i, op] of chosen)
        for (const cli of clis) {
          const byText = cells.get(`${engine}|${i}|${cli.label}`)?.[0]?.byText ?? {};
          console.log(`\n## ${engine}, ${op.name}, ${cli.label} (calls | statement)\n`);
          for (const [text, n] of Object.entries(byText).sort((a, b) => b[1] - a[1])) console.log(`${n} | ${text}`);
        }
} finally {
  await pg?.stop();
  cleanup();
}
