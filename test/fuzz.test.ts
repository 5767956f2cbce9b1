/**
 * The fuzz test of issue 4 (SPEC §6 "Totality"): thousands of random argv
 * lists over every verb, two-word form and garbage verb name, with each
 * verb's own flags (good, boundary, bad and garbage values), unknown flags,
 * flags of other verbs, stray positionals, `--` and `-`. Each run must print
 * exactly one envelope (valid against the exported schemas), exit with a
 * documented code that agrees with errors[0], print no stack trace, and answer
 * within a deadline (see fuzz-judge.ts).
 *
 * Most cases run in-process (test/fuzz-driver.ts: `main()` in one bun process
 * per batch, two batches in parallel); ~100 more run as real `bun src/cli.ts`
 * processes for end-to-end fidelity. The seed is fixed and printed;
 * FUZZ_SEED=N overrides it, FUZZ_CASES=N the number of in-process cases.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type FuzzCase, generateCases, loadVerbFlags, type VerbFlags } from "./fuzz-cases.ts";
import { judge } from "./fuzz-judge.ts";

// The preload's default timeout does not reach every file when the whole suite runs (Bun 1.4.5): real processes on a loaded machine need more than 5 s.
setDefaultTimeout(120_000);

const SEED = Number(process.env.FUZZ_SEED ?? 20260401);
const IN_PROCESS = Number(process.env.FUZZ_CASES ?? 2000);
const SUBPROCESS = 100;
const BATCHES = 2;
const SUBPROCESS_DEADLINE_MS = 20000;
const CLI = resolve(import.meta.dir, "../src/cli.ts");
const DRIVER = resolve(import.meta.dir, "fuzz-driver.ts");

let root: string;
let verbFlags: VerbFlags;
let cases: FuzzCase[];
const dirs: string[] = [];

beforeAll(async () => {
  console.log(
    `fuzz seed ${SEED} (FUZZ_SEED=${SEED} bun test test/fuzz.test.ts reproduces): ${IN_PROCESS} in-process + ${SUBPROCESS} subprocess cases`,
  );
  root = mkdtempSync(join(tmpdir(), "spoolctl-fuzz-"));
  verbFlags = await loadVerbFlags();
  cases = generateCases(SEED, IN_PROCESS + SUBPROCESS, verbFlags);
}, 120_000);

afterAll(() => rmSync(root, { recursive: true, force: true }), 120_000);

/** One line per failing case: everything needed to reproduce it. */
function describe(c: FuzzCase, problems: string[], extra = ""): string {
  return `seed ${SEED} case ${c.n}: spoolctl ${JSON.stringify(c.argv)}\n  ${problems.join("\n  ")}${extra ? `\n  ${extra}` : ""}`;
}

test(`fuzz: ${IN_PROCESS} argv lists in-process, each one envelope with a documented exit code`, async () => {
  const inProcess = cases.slice(0, IN_PROCESS);
  const batches = Array.from({ length: BATCHES }, (_, b) => inProcess.filter((_, i) => i % BATCHES === b));
  const runs = batches.map(async (batch, b) => {
    const dir = join(root, `driver-${b}`);
    mkdirSync(dir, { recursive: true });
    dirs[b] = dir;
    const casesFile = join(root, `cases-${b}.json`);
    const resultsFile = join(root, `results-${b}.ndjson`);
    writeFileSync(casesFile, JSON.stringify(batch));
    writeFileSync(resultsFile, "");
    const proc = Bun.spawn(["bun", DRIVER, casesFile, resultsFile, dir], {
      cwd: dir,
      env: { ...(process.env as Record<string, string>), NO_COLOR: "1" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    const results = readFileSync(resultsFile, "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    return { batch, results, code, out, err };
  });
  const failures: string[] = [];
  const outcomes: Record<string, number> = {};
  let slowest = 0;
  let ran = 0;
  for (const { batch, results, code, out, err } of await Promise.all(runs)) {
    if (code !== 0) failures.push(`driver exited ${code}${out || err ? `:\n${(out + err).slice(0, 3000)}` : ""}`);
    const byN = new Map(results.map((r) => [r.n, r]));
    for (const c of batch) {
      const r = byN.get(c.n);
      if (!r) {
        failures.push(describe(c, ["not run: the driver stopped before it"]));
        break;
      }
      ran++;
      outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
      slowest = Math.max(slowest, r.ms);
      if (r.problems.length)
        failures.push(
          describe(
            c,
            r.problems,
            `exit ${r.code}; stdout ${JSON.stringify(r.stdout)}; stderr ${JSON.stringify(r.stderr)}`,
          ),
        );
    }
  }
  console.log(`fuzz in-process: ${ran} cases, slowest ${slowest} ms, outcomes ${JSON.stringify(outcomes)}`);
  if (failures.length) console.log(failures.slice(0, 30).join("\n"));
  expect(failures).toEqual([]);
  expect(ran).toBe(IN_PROCESS);
  // The generator reaches every outcome class: successes and several error codes.
  expect(outcomes.ok ?? 0).toBeGreaterThan(IN_PROCESS / 20);
  for (const code of ["INVALID_INPUT", "MISSING_REQUIRED", "UNKNOWN_FLAG", "UNKNOWN_COMMAND", "NOT_FOUND"])
    expect(outcomes[code] ?? 0).toBeGreaterThan(0);
}, 300_000);

test(`fuzz: ${SUBPROCESS} argv lists through real bun src/cli.ts processes`, async () => {
  const sub = cases.slice(IN_PROCESS);
  // The queue the first driver populated (jobs in every state; its job 8 stays "running" with its worker gone).
  const dir = dirs[0] ?? mkdtempSync(join(root, "sub-"));
  mkdirSync(join(dir, "work"), { recursive: true });
  const failures: string[] = [];
  const outcomes: Record<string, number> = {};
  let slowest = 0;
  let next = 0;
  const one = async (generated: FuzzCase) => {
    // A real argv cannot hold a NUL byte (the in-process cases keep them); \u0001 stands in.
    const c = { ...generated, argv: generated.argv.map((a) => a.replaceAll("\u0000", "\u0001")) };
    const started = performance.now();
    const proc = Bun.spawn(["bun", CLI, ...c.argv], {
      cwd: dir,
      env: {
        ...(process.env as Record<string, string>),
        NO_COLOR: "1",
        SPOOLCTL_DB: c.work ? join(dir, "work", `s${c.n}.db`) : join(dir, "queue.db"),
        SPOOLCTL_TEST_HEARTBEAT_INTERVAL: "0.2",
        SPOOLCTL_TEST_REAP_THRESHOLD: "1",
      },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      proc.kill("SIGKILL");
    }, SUBPROCESS_DEADLINE_MS);
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    clearTimeout(timer);
    const ms = Math.round(performance.now() - started);
    slowest = Math.max(slowest, ms);
    const verdict = judge(c.argv, late ? null : code, stdout, stderr, verbFlags);
    if (late) verdict.problems.push(`no answer within ${SUBPROCESS_DEADLINE_MS} ms`);
    outcomes[verdict.outcome] = (outcomes[verdict.outcome] ?? 0) + 1;
    if (verdict.problems.length)
      failures.push(
        describe(
          c,
          verdict.problems,
          `exit ${code}; stdout ${JSON.stringify(stdout.slice(0, 1500))}; stderr ${JSON.stringify(stderr.slice(0, 1500))}`,
        ),
      );
  };
  await Promise.all(
    Array.from({ length: 2 }, async () => {
      while (next < sub.length) await one(sub[next++]!);
    }),
  );
  console.log(`fuzz subprocess: ${sub.length} cases, slowest ${slowest} ms, outcomes ${JSON.stringify(outcomes)}`);
  if (failures.length) console.log(failures.slice(0, 30).join("\n"));
  expect(failures).toEqual([]);
}, 300_000);
