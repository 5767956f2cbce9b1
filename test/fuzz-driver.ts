/**
 * In-process fuzz driver (issue 4): runs a batch of argv lists through
 * `main()` of src/cli.ts inside ONE bun process, capturing stdout/stderr per
 * case, with a per-case deadline; writes one JSON verdict per case to the
 * results file. A subprocess per case costs ~100 ms on a small machine; this
 * costs a few milliseconds.
 *
 *   bun test/fuzz-driver.ts CASES.json RESULTS.ndjson DIR
 *
 * DIR becomes the cwd and holds the queue (DIR/queue.db, populated here with
 * jobs in every state and a live worker running a long job). A `work` case
 * runs against a tiny fresh queue of its own. After a case that misses its
 * deadline the driver stops (its leftovers would pollute the next cases).
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { main } from "../src/cli.ts";
import { redirectOut } from "../src/ui/stdio.ts";
import { type FuzzCase, loadVerbFlags } from "./fuzz-cases.ts";
import { judge } from "./fuzz-judge.ts";

const [casesFile, resultsFile, dirArg] = process.argv.slice(2);
if (!casesFile || !resultsFile || !dirArg) {
  process.stderr.write("usage: bun test/fuzz-driver.ts CASES.json RESULTS.ndjson DIR\n");
  process.exit(2);
}
const dir = resolve(dirArg);
const CLI = resolve(import.meta.dir, "../src/cli.ts");
/** Per-case deadline (ms); generous for a loaded 2-core machine, far below "hangs". */
const DEADLINE_MS = Number(process.env.FUZZ_DEADLINE_MS ?? 15000);
const BG_LANE = "fz-bg-lane";

const realOut = process.stdout.write.bind(process.stdout);
const realErr = process.stderr.write.bind(process.stderr);

/** Replaces stdout/stderr writes with collectors until `restore()`. */
function capture() {
  const out: string[] = [];
  const err: string[] = [];
  const sink = (into: string[]) =>
    ((chunk: unknown, ...rest: unknown[]) => {
      into.push(typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8"));
      const cb = rest.find((x) => typeof x === "function") as (() => void) | undefined;
      cb?.();
      return true;
    }) as typeof process.stdout.write;
  process.stdout.write = sink(out);
  process.stderr.write = sink(err);
  redirectOut((text) => out.push(text));
  return {
    out,
    err,
    restore() {
      process.stdout.write = realOut;
      process.stderr.write = realErr;
      redirectOut(null);
    },
  };
}

/** Runs main() quietly with --json (before any bare --) for a setup step; throws unless it exits 0. */
async function quiet(argv: string[]): Promise<any> {
  const i = argv.indexOf("--");
  const cap = capture();
  let code: number;
  try {
    code = await main(i === -1 ? [...argv, "--json"] : [...argv.slice(0, i), "--json", ...argv.slice(i)]);
  } finally {
    cap.restore();
  }
  const stdout = cap.out.join("");
  if (code !== 0) throw new Error(`setup step ${argv.join(" ")} exited ${code}: ${stdout} ${cap.err.join("")}`);
  return JSON.parse(stdout);
}

/** `add ARGS` as a setup step; returns the job id. */
async function add(...args: string[]): Promise<number> {
  return (await quiet(["add", ...args])).data.job_id;
}

// --- setup: the files the value pools name, and a populated queue ----------
process.chdir(dir);
process.env.SPOOLCTL_DB = join(dir, "queue.db");
process.env.NO_COLOR = "1";
process.env.SPOOLCTL_TEST_HEARTBEAT_INTERVAL = "0.2";
process.env.SPOOLCTL_TEST_REAP_THRESHOLD = "1";
writeFileSync(join(dir, "jobs.ndjson"), '{"argv":["true"]}\n{"command":"exit 0","queue":"once","tags":{"fz":"1"}}\n');
writeFileSync(join(dir, "config.json"), JSON.stringify({ db_path: "x.db", colour: "red" }));
writeFileSync(join(dir, "junk.db"), "not a database at all ".repeat(40));
mkdirSync(join(dir, "work"), { recursive: true });

await quiet(["config", "set", "backoff-cap", "0"]);
await add("--", "true"); // 1 done
await add("--max-retries", "0", "--", "sh", "-c", "echo boom >&2; exit 3"); // 2 dead
await add("--key", "k-done", "--tag", "team=a", "--note", "n", "--env", "A=b", "--", "sh", "-c", "echo out"); // 3 done
const canceled = await add("--", "true"); // 4 canceled
await quiet(["cancel", String(canceled)]);
await quiet(["work", "--drain"]);
await add("--after", "1h", "--", "true"); // 5 scheduled
await add("--priority", "3", "--tag", "team=a", "--", "true"); // 6 queued
await add("--key", "k-queued", "--", "echo", "q"); // 7 queued
const gate = join(dir, "bg.go");
const pidfile = join(dir, "bg.pid");
const running = await add(
  "--queue",
  BG_LANE,
  "--",
  "sh",
  "-c",
  `echo $$ > '${pidfile}'; while [ ! -f '${gate}' ] && [ -d '${dir}' ]; do sleep 0.05; done`,
); // 8 running (ends with its folder)
const worker = Bun.spawn(["bun", CLI, "work", "--queue", BG_LANE, "--worker-id", "fz-bg"], {
  cwd: dir,
  env: { ...process.env } as Record<string, string>,
  stdin: "ignore",
  stdout: "ignore",
  stderr: "ignore",
});
for (let i = 0; ; i++) {
  const shown = await quiet(["show", String(running)]);
  if (shown.data.job.state === "running") break;
  if (i > 600) throw new Error("the background job never started");
  await Bun.sleep(50);
}

/** Ends the background worker and what is left of its job (leaving the job "running", like a crash). */
function cleanup(): void {
  try {
    worker.kill("SIGKILL");
  } catch {
    // gone
  }
  try {
    const pid = Number(readFileSync(pidfile, "utf8").trim());
    if (pid > 1) process.kill(-pid, "SIGKILL");
  } catch {
    // gone
  }
}

/** A tiny fresh queue for one `work` case: one job that succeeds, one that dies at once, one scheduled for later. */
async function freshWorkQueue(n: number): Promise<string> {
  const db = join(dir, "work", `w${n}.db`);
  await add("--db", db, "--", "true");
  await add("--db", db, "--max-retries", "0", "--", "false");
  await add("--db", db, "--after", "1h", "--", "true");
  return db;
}

// --- the cases --------------------------------------------------------------
const cases: FuzzCase[] = JSON.parse(readFileSync(casesFile, "utf8"));
const verbFlags = await loadVerbFlags();
let current: { unhandled: string[] } = { unhandled: [] };
process.on("unhandledRejection", (e) => current.unhandled.push(String((e as Error)?.stack ?? e)));
process.on("uncaughtException", (e) => current.unhandled.push(String((e as Error)?.stack ?? e)));
const listeners = () => process.listenerCount("SIGINT") + process.listenerCount("SIGTERM");
const baseListeners = listeners();

let stopped = false;
for (const c of cases) {
  const env: string | undefined = process.env.SPOOLCTL_DB;
  if (c.work) process.env.SPOOLCTL_DB = await freshWorkQueue(c.n);
  current = { unhandled: [] };
  const cap = capture();
  const started = performance.now();
  let code: number | null = null;
  let timedOut = false;
  let threw: string | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const deadline = new Promise<"deadline">((res) => (timer = setTimeout(() => res("deadline"), DEADLINE_MS)));
    const r = await Promise.race([main(c.argv), deadline]);
    if (r === "deadline") timedOut = true;
    else code = r;
  } catch (e) {
    threw = String((e as Error)?.stack ?? e);
  } finally {
    clearTimeout(timer);
    cap.restore();
    process.env.SPOOLCTL_DB = env;
  }
  const ms = Math.round(performance.now() - started);
  const stdout = cap.out.join("");
  const stderr = cap.err.join("");
  const verdict = judge(c.argv, code, stdout, stderr, verbFlags);
  if (timedOut) verdict.problems.push(`no answer within ${DEADLINE_MS} ms`);
  if (threw) verdict.problems.push(`main() threw: ${threw}`);
  if (current.unhandled.length) verdict.problems.push(`unhandled: ${current.unhandled.join(" | ")}`);
  if (listeners() !== baseListeners)
    verdict.problems.push(`signal listeners leaked (${listeners()} vs ${baseListeners})`);
  const result = {
    n: c.n,
    code,
    ms,
    outcome: verdict.outcome,
    message: verdict.message,
    problems: verdict.problems,
    ...(verdict.problems.length ? { stdout: stdout.slice(0, 1500), stderr: stderr.slice(0, 1500) } : {}),
  };
  appendFileSync(resultsFile, `${JSON.stringify(result)}\n`);
  if (timedOut) {
    stopped = true;
    break;
  }
}
cleanup();
process.exit(stopped ? 3 : 0);
