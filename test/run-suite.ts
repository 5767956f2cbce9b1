#!/usr/bin/env bun
/**
 * The test command the README gives (`bun run test`), and what CI runs:
 *
 * 1. every test file, on SQLite (the store conformance suite in test/store/
 *    runs both drivers, test/store-postgres/ and the multi-host files start
 *    PostgreSQL servers of their own);
 * 2. at the same time, the end-to-end files again with `SPOOLCTL_TEST_DB`
 *    pointing at a throwaway PostgreSQL server (test/support/pg-server.ts),
 *    so every verb's behaviour is held on both stores (CONTRIBUTING.md).
 *
 * The first run streams to stdout; the second one's output follows when it
 * ends. The last lines are the combined counts (`N pass`, `N fail`), then the
 * exit status: non-zero when anything failed. With arguments
 * (`bun run test test/x.test.ts`) it is plain `bun test` on those files.
 * `SPOOLCTL_TEST_PG_E2E=0` skips the second run.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startPgServer } from "./support/pg-server.ts";

const TIMEOUT = ["--timeout", "120000"];
const args = process.argv.slice(2);

if (args.length > 0) {
  const proc = Bun.spawn(["bun", "test", ...TIMEOUT, ...args], { stdio: ["inherit", "inherit", "inherit"] });
  process.exit(await proc.exited);
}

/** Files that touch no queue: not run twice. */
const NO_QUEUE = new Set([
  "args.test.ts",
  "completion-install.test.ts",
  "contract-doc.test.ts",
  "failure-signature.test.ts",
  "fuzz.test.ts",
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

/** The end-to-end files (test/*.test.ts) that a second run on PostgreSQL adds something to. */
function endToEndFiles(): string[] {
  return readdirSync(import.meta.dir)
    .filter((f) => f.endsWith(".test.ts") && !NO_QUEUE.has(f) && !NOT_ON_POSTGRES.has(f) && !runsPostgresItself(f))
    .sort()
    .map((f) => join("test", f));
}

/** The counts of a `bun test` run, from its summary lines. */
function counts(output: string): { pass: number; fail: number } {
  const last = (word: string) => {
    const all = [...output.matchAll(new RegExp(`^ *(\\d+) ${word}$`, "gm"))];
    return all.length === 0 ? 0 : Number(all[all.length - 1]![1]);
  };
  return { pass: last("pass"), fail: last("fail") };
}

async function runSqlite(): Promise<{ pass: number; fail: number; code: number }> {
  const proc = Bun.spawn(["bun", "test", ...TIMEOUT], { stdout: "pipe", stderr: "pipe" });
  let text = "";
  const pump = async (stream: ReadableStream<Uint8Array>, out: NodeJS.WriteStream) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      const s = decoder.decode(chunk, { stream: true });
      text += s;
      out.write(s);
    }
  };
  await Promise.all([pump(proc.stdout, process.stdout), pump(proc.stderr, process.stderr)]);
  const code = await proc.exited;
  return { ...counts(text), code };
}

async function runPostgres(): Promise<{ pass: number; fail: number; code: number; log: string }> {
  let server: Awaited<ReturnType<typeof startPgServer>>;
  try {
    server = await startPgServer();
  } catch (error) {
    return { pass: 0, fail: 1, code: 1, log: `cannot start a PostgreSQL server for the end-to-end run: ${error}\n` };
  }
  try {
    const proc = Bun.spawn(["bun", "test", ...TIMEOUT, ...endToEndFiles()], {
      env: { ...process.env, SPOOLCTL_TEST_DB: server.url("postgres") },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    const log = out + err;
    return { ...counts(log), code, log };
  } finally {
    await server.stop();
  }
}

const pgWanted = process.env.SPOOLCTL_TEST_PG_E2E !== "0";
const [sqlite, pg] = await Promise.all([runSqlite(), pgWanted ? runPostgres() : Promise.resolve(null)]);
if (pg) {
  process.stdout.write("\n==== end to end on PostgreSQL (SPOOLCTL_TEST_DB) ====\n");
  process.stdout.write(pg.log);
}
const pass = sqlite.pass + (pg?.pass ?? 0);
const fail = sqlite.fail + (pg?.fail ?? 0);
const failed = fail > 0 || sqlite.code !== 0 || (pg !== null && pg.code !== 0);
process.stdout.write(
  `\nall files: ${sqlite.pass} pass, ${sqlite.fail} fail` +
    (pg ? `; end to end on PostgreSQL: ${pg.pass} pass, ${pg.fail} fail` : "; end to end on PostgreSQL: skipped") +
    `\n ${pass} pass\n ${fail} fail\n`,
);
process.exit(failed ? 1 : 0);
