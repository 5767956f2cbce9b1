#!/usr/bin/env bun
/**
 * The test command the README gives (`bun run test`), and what CI runs:
 *
 * 1. every test file, on SQLite (the store conformance suite in test/store/
 *    runs both drivers, test/store-postgres/ and the multi-host files start
 *    PostgreSQL servers of their own);
 * 2. the end-to-end files again with `SPOOLCTL_TEST_DB` pointing at a
 *    throwaway PostgreSQL server (test/support/pg-server.ts), so every verb's
 *    behaviour is held on both stores (CONTRIBUTING.md).
 *
 * Each file of either pass is one `bun test` process; `SPOOLCTL_TEST_LANES`
 * of them (default 3) run at a time, taken from one list, the likely slowest
 * files first (weightOf), so that both passes share the cores to the end
 * instead of one pass running long after the other (a file waits on its jobs
 * and workers much of the time: 3 lanes keep 2 cores busy). The PostgreSQL files share one
 * server: every TempQueue makes its own database there, named after its
 * process id (test/support/queue-fixtures.ts), so files at the same time never
 * meet. The store conformance files (test/store/) share a second server
 * through `SPOOLCTL_TEST_PG_URL` rather than start one each.
 *
 * A file's output is printed whole when it ends. The last lines are: the
 * slowest files, the counts of each pass, every failing test again with the
 * start of its error (test/support/suite-report.ts), then the combined counts
 * (`N pass`, `N fail`, read by .ci/run); the exit status is non-zero when
 * anything failed. A file whose `bun test` fails without a failing test (it
 * did not load, an error between tests) counts as one failure.
 * With arguments (`bun run test test/x.test.ts`) it is plain `bun test` on
 * those files. `SPOOLCTL_TEST_PG_E2E=0` skips the PostgreSQL pass.
 *
 * The CLI the files spawn is the packed bundle, built once at the start
 * (buildSuiteCli); `SPOOLCTL_TEST_CLI=src/cli.ts` (absolute) runs the source.
 */
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { type PgServer, startPgServer } from "./support/pg-server.ts";
import { counts, type Failure, failureReport, failuresIn, fileFailure } from "./support/suite-report.ts";

const TIMEOUT = ["--timeout", "120000"];
const args = process.argv.slice(2);

if (args.length > 0) {
  const proc = Bun.spawn(["bun", "test", ...TIMEOUT, ...args], { stdio: ["inherit", "inherit", "inherit"] });
  process.exit(await proc.exited);
}

const ROOT = join(import.meta.dir, "..");

/** Files that touch no queue: not run twice. */
const NO_QUEUE = new Set([
  "args.test.ts",
  "completion-install.test.ts",
  "contract-doc.test.ts",
  "failure-signature.test.ts",
  "fuzz.test.ts",
  "house.test.ts",
  "listen-warning.test.ts",
  "package.test.ts",
  "watchdog-clock.test.ts",
]);

/** Files left out of the PostgreSQL run, each with why (none at present). */
const NOT_ON_POSTGRES = new Set<string>();

/** Whether a test file starts PostgreSQL servers of its own (it already runs there). */
function runsPostgresItself(file: string): boolean {
  return /support\/(pg-server|pg-hosts)/.test(readFileSync(join(import.meta.dir, file), "utf8"));
}

/** Every test file as `bun test` without arguments finds them (outside node_modules), relative to the repository. */
function allFiles(): string[] {
  return [...new Bun.Glob("**/*{.,_}{test,spec}.{ts,tsx,js,jsx,mjs,cjs,mts,cts}").scanSync(ROOT)]
    .filter((f) => !f.split("/").includes("node_modules"))
    .sort();
}

/** The end-to-end files (test/*.test.ts) that a second run on PostgreSQL adds something to. */
function endToEndFiles(): string[] {
  return readdirSync(import.meta.dir)
    .filter((f) => f.endsWith(".test.ts") && !NO_QUEUE.has(f) && !NOT_ON_POSTGRES.has(f) && !runsPostgresItself(f))
    .sort()
    .map((f) => join("test", f));
}

/** How many files run at once: SPOOLCTL_TEST_LANES, default 3. */
function lanes(): number {
  const n = Number(process.env.SPOOLCTL_TEST_LANES ?? 3);
  return Number.isInteger(n) && n >= 1 ? n : 3;
}

type Store = "sqlite" | "postgres";

/** One file of one pass. */
interface Item {
  store: Store;
  file: string;
  /** Expected length (see weightOf): the order in which files start. */
  weight: number;
}

/** A file's run. */
interface Outcome {
  item: Item;
  code: number;
  pass: number;
  fail: number;
  seconds: number;
  failures: Failure[];
}

/**
 * A file's expected length, for the order in which files start (the longest
 * first, so that no long file starts last): its size, longer on PostgreSQL. A
 * guess that held in a run on 2 cores (bad-input, hardening, retry-cancel,
 * triage-groups, execution came out slowest); the log's "slowest files" list
 * says when it stops holding. Only the order depends on it, never a test.
 */
function weightOf(store: Store, file: string): number {
  return statSync(join(ROOT, file)).size * (store === "postgres" ? 1.5 : 1);
}

/** Runs one file with `env` added, prints its whole output when it ends, and reads its counts and failures. */
async function runFile(item: Item, env: Record<string, string>): Promise<Outcome> {
  const started = performance.now();
  const proc = Bun.spawn(["bun", "test", ...TIMEOUT, `./${item.file}`], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let both = "";
  let stderr = "";
  const pump = async (stream: ReadableStream<Uint8Array>, isErr: boolean) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      const s = decoder.decode(chunk, { stream: true });
      both += s;
      if (isErr) stderr += s;
    }
  };
  await Promise.all([pump(proc.stdout, false), pump(proc.stderr, true)]);
  const code = await proc.exited;
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(`\n==== [${item.store}] ${item.file}: exit ${code}, ${seconds.toFixed(1)} s ====\n${both}`);
  const { pass, fail } = counts(stderr);
  const failures = failuresIn(stderr, item.store, item.file);
  // A file that failed with no failing test (did not load, an error between tests) is one failure.
  if (code !== 0 && failures.length === 0) failures.push(fileFailure(stderr, item.store, item.file, code));
  return { item, code, pass, fail: code !== 0 && fail === 0 ? 1 : fail, seconds, failures };
}

/** A PostgreSQL server for the run, or the error that kept it from starting. */
async function server(): Promise<PgServer | Error> {
  try {
    return await startPgServer();
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * Builds the packed CLI (as `bun run build` does) for the test helpers' spawns
 * (`SPOOLCTL_TEST_CLI`, test/support/temp-queue.ts): the suite starts thousands of CLI
 * processes, and a bundle with bytecode starts on about a quarter less CPU than
 * the source. Under node_modules/, so it finds the dependencies, and not in
 * dist/, which test/package.test.ts rebuilds while files run.
 */
function buildSuiteCli(): string {
  const outdir = join(ROOT, "node_modules", ".cache", "spoolctl-suite-cli");
  rmSync(outdir, { recursive: true, force: true });
  const build = Bun.spawnSync(
    ["bun", "build", "src/cli.ts", "--target", "bun", "--format", "cjs", "--bytecode", "--packages", "external"].concat(
      ["--outdir", outdir],
    ),
    { cwd: ROOT, stdout: "pipe", stderr: "pipe" },
  );
  if (build.exitCode !== 0) {
    console.error(`cannot build the CLI for the suite:\n${build.stderr.toString()}`);
    process.exit(1);
  }
  return join(outdir, "cli.js");
}

const suiteStarted = performance.now();
const suiteCli = process.env.SPOOLCTL_TEST_CLI || buildSuiteCli();
const pgWanted = process.env.SPOOLCTL_TEST_PG_E2E !== "0";
const [e2eServer, storeServer] = await Promise.all([pgWanted ? server() : Promise.resolve(null), server()]);
const failures: Failure[] = [];

const items: Item[] = allFiles().map((file) => ({ store: "sqlite", file, weight: weightOf("sqlite", file) }));
if (e2eServer instanceof Error)
  failures.push({
    store: "postgres",
    file: "test/run-suite.ts",
    name: "(cannot start a PostgreSQL server for the end-to-end run)",
    error: String(e2eServer).split("\n"),
  });
else if (e2eServer)
  for (const file of endToEndFiles()) items.push({ store: "postgres", file, weight: weightOf("postgres", file) });
items.sort((a, b) => b.weight - a.weight);

/** The variables a file of `item`'s pass runs with. */
function envOf(item: Item): Record<string, string> {
  const cli = { SPOOLCTL_TEST_CLI: suiteCli };
  if (item.store === "postgres") return { ...cli, SPOOLCTL_TEST_DB: (e2eServer as PgServer).url("postgres") };
  // The conformance suite's databases on one server for all its files (each would start its own).
  if (item.file.startsWith("test/store/") && storeServer && !(storeServer instanceof Error))
    return { ...cli, SPOOLCTL_TEST_PG_URL: storeServer.url("postgres") };
  return cli;
}

const outcomes: Outcome[] = [];
const queue = [...items];
try {
  await Promise.all(
    Array.from({ length: lanes() }, async () => {
      for (let item = queue.shift(); item; item = queue.shift()) outcomes.push(await runFile(item, envOf(item)));
    }),
  );
} finally {
  for (const s of [e2eServer, storeServer]) if (s && !(s instanceof Error)) await s.stop();
}

const sum = (store: Store) =>
  outcomes
    .filter((o) => o.item.store === store)
    .reduce((acc, o) => ({ pass: acc.pass + o.pass, fail: acc.fail + o.fail }), { pass: 0, fail: 0 });
const sqlite = sum("sqlite");
const pg = e2eServer === null ? null : sum("postgres");
if (e2eServer instanceof Error) pg!.fail++;
for (const o of outcomes) failures.push(...o.failures);
const slowest = [...outcomes].sort((a, b) => b.seconds - a.seconds).slice(0, 12);
const pass = sqlite.pass + (pg?.pass ?? 0);
const fail = sqlite.fail + (pg?.fail ?? 0);
const failed = fail > 0 || outcomes.some((o) => o.code !== 0);
process.stdout.write(
  `\n==== slowest files (seconds, of ${outcomes.length} file runs in ${lanes()} lanes) ====\n` +
    slowest.map((o) => `${o.seconds.toFixed(1).padStart(7)}  [${o.item.store}] ${o.item.file}\n`).join("") +
    `\nall files: ${sqlite.pass} pass, ${sqlite.fail} fail` +
    (pg ? `; end to end on PostgreSQL: ${pg.pass} pass, ${pg.fail} fail` : "; end to end on PostgreSQL: skipped") +
    `; ${((performance.now() - suiteStarted) / 1000).toFixed(0)} s in all\n` +
    failureReport(failures) +
    `\n ${pass} pass\n ${fail} fail\n`,
);
process.exit(failed ? 1 : 0);
